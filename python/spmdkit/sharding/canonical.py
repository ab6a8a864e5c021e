"""Bring a sharding to the form the verifier demands: merged sub-axes, mesh-ordered sets.

Shardy canonicalizes the same way (`replicated={"y":(4)2, "x", "y":(1)2}` becomes
`{"x", "y":(1)2, "y":(4)2}`); this does not fix axes used twice or unknown axes.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from .axes import AxisRef, make_axis
from .mesh import Mesh
from .tensor_sharding import DimSharding, TensorSharding


def merge_adjacent(axes: Iterable[AxisRef], mesh: Mesh) -> tuple[AxisRef, ...]:
    """Merge each run of consecutive sub-axes of one axis; a sub-axis covering its axis becomes it."""
    out: list[AxisRef] = []
    for a in axes:
        if a.is_sub_axis:
            a = make_axis(a.name, a.pre_size, a.size, mesh)
        if out and out[-1].can_merge(a, mesh):
            a = out.pop().merge(a, mesh)
        out.append(a)
    return tuple(out)


def sort_in_mesh_order(axes: Iterable[AxisRef], mesh: Mesh) -> tuple[AxisRef, ...]:
    return tuple(sorted(axes, key=lambda a: a.mesh_order_key(mesh)))


def canonicalize(sharding: TensorSharding, mesh: Mesh | Mapping[str, Mesh] | None = None) -> TensorSharding:
    m = sharding.resolve_mesh(mesh)
    dims = [DimSharding(merge_adjacent(d.axes, m), d.is_closed, d.priority) for d in sharding.dims]
    replicated = merge_adjacent(sort_in_mesh_order(sharding.replicated, m), m)
    unreduced, kinds = [], {}
    for kind, axes in sharding.unreduced_by_type().items():
        for a in merge_adjacent(sort_in_mesh_order(axes, m), m):
            unreduced.append(a)
            kinds[a] = kind
    unreduced = sort_in_mesh_order(unreduced, m)
    return TensorSharding(sharding.mesh, dims, replicated, unreduced, kinds)
