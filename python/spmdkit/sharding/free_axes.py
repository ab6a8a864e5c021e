"""The parts of the mesh a sharding leaves free: what propagation may still use to shard an
open dim (explicitly replicated and unreduced axes are not free)."""
from __future__ import annotations

from typing import Mapping

from .axes import AxisRef, make_axis
from .mesh import Mesh
from .tensor_sharding import TensorSharding
from .verifier import verify


def free_axes(sharding: TensorSharding, mesh: Mesh | Mapping[str, Mesh] | None = None) -> tuple[AxisRef, ...]:
    """In mesh order, each axis or the sub-axes of it that no dim, replicated or unreduced entry
    touches (the gaps between used sub-axes, each as one maximal sub-axis)."""
    m = verify(sharding, mesh)
    used: dict[str, list[tuple[int, int]]] = {}
    for ref in sharding.axes_used():
        used.setdefault(ref.name, []).append(ref.interval(m))
    out = []
    for axis in m.axes:
        if axis.name not in used:
            out.append(AxisRef(axis.name))
            continue
        at = 1  # walk the axis from major to minor, emitting the gaps between used ranges
        for lo, hi in sorted(used[axis.name]):
            if lo > at:
                out.append(make_axis(axis.name, at, lo // at, m))
            at = max(at, hi)
        if at < axis.size:
            out.append(make_axis(axis.name, at, axis.size // at, m))
    return tuple(out)
