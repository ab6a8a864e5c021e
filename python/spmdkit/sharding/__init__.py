"""Shardy's sharding representation for spmdkit (issue 8).

Named meshes (`Mesh`), axis references with sub-axes (`AxisRef`), per-dim shardings that are
open or closed with priorities (`DimSharding`), tensor shardings with explicit replicated and
unreduced axes (`TensorSharding`), their exact Shardy text (`str()` / `parse_*`), a verifier of
every invariant, and exact conversions to Paddle-style `TensorDistAttr` and placements.
See docs/sharding.md.
"""
from .axes import AxisRef
from .canonical import canonicalize
from .dist_attr import from_dist_attr, from_process_mesh, to_dist_attr, to_process_mesh
from .equivalence import equivalent, reduction_groups
from .errors import (MeshError, ShardingConversionError, ShardingError, ShardingParseError,
                     ShardingVerifyError)
from .free_axes import free_axes
from .layout import device_slices
from .mesh import Mesh, MeshAxis
from .paddle_placements import from_paddle_placements, to_paddle_placements
from .placements import Partial, Replicate, Shard, from_placements, to_placements
from .tensor_sharding import REDUCE_TYPES, DimSharding, TensorSharding, sharding_per_value_text
from .text_parse import (parse_axis_ref, parse_dim_sharding, parse_mesh, parse_mesh_decl, parse_mesh_table,
                         parse_sharding, parse_sharding_per_value)
from .verifier import is_valid, verify

__all__ = [
    # objects
    "AxisRef", "DimSharding", "Mesh", "MeshAxis", "TensorSharding", "REDUCE_TYPES",
    # errors
    "MeshError", "ShardingConversionError", "ShardingError", "ShardingParseError", "ShardingVerifyError",
    # text
    "parse_axis_ref", "parse_dim_sharding", "parse_mesh", "parse_mesh_decl", "parse_mesh_table",
    "parse_sharding", "parse_sharding_per_value", "sharding_per_value_text",
    # invariants and layout
    "verify", "is_valid", "canonicalize", "device_slices", "equivalent", "reduction_groups", "free_axes",
    # conversions
    "to_dist_attr", "from_dist_attr", "to_process_mesh", "from_process_mesh",
    "Shard", "Replicate", "Partial", "to_placements", "from_placements",
    "to_paddle_placements", "from_paddle_placements",
]
