"""Shardy's sharding representation for spmdkit (issue 8).

Named meshes (`Mesh`), axis references with sub-axes (`AxisRef`), per-dim shardings that are
open or closed with priorities (`DimSharding`), tensor shardings with explicit replicated and
unreduced axes (`TensorSharding`), their exact Shardy text (`str()` / `parse_*`), a verifier of
every invariant, and exact conversions to Paddle-style `TensorDistAttr` and placements.
"""
from .axes import AxisRef
from .errors import (MeshError, ShardingConversionError, ShardingError, ShardingParseError,
                     ShardingVerifyError)
from .mesh import Mesh, MeshAxis
from .tensor_sharding import REDUCE_TYPES, DimSharding, TensorSharding, sharding_per_value_text
from .canonical import canonicalize
from .dist_attr import from_dist_attr, from_process_mesh, to_dist_attr, to_process_mesh
from .equivalence import equivalent, reduction_groups
from .layout import device_slices
from .paddle_placements import from_paddle_placements, to_paddle_placements
from .placements import Partial, Replicate, Shard, from_placements, to_placements
from .verifier import is_valid, verify
from .text_parse import (parse_axis_ref, parse_dim_sharding, parse_mesh, parse_mesh_decl, parse_sharding,
                         parse_sharding_per_value)

__all__ = [
    "AxisRef", "DimSharding", "Mesh", "MeshAxis", "TensorSharding", "REDUCE_TYPES",
    "MeshError", "ShardingConversionError", "ShardingError", "ShardingParseError", "ShardingVerifyError",
    "parse_axis_ref", "parse_dim_sharding", "parse_mesh", "parse_mesh_decl", "parse_sharding",
    "parse_sharding_per_value", "sharding_per_value_text",
    "verify", "is_valid", "canonicalize",
    "to_dist_attr", "from_dist_attr", "to_process_mesh", "from_process_mesh",
    "Shard", "Replicate", "Partial", "to_placements", "from_placements",
    "to_paddle_placements", "from_paddle_placements", "device_slices",
    "equivalent", "reduction_groups",
]
