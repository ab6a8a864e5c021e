"""Where a tensor lives on a mesh: which mesh dims split each tensor dim, which are partial.

Backend-neutral, so the simulator, the samplers and both rule backends (Paddle, spmdkit) share
one vocabulary. Sharding semantics follow Paddle: a tensor dim split over mesh dims [m1, m2]
(m1 outermost) is cut into prod(S[m]) contiguous ceil-div blocks, and a rank takes the block
whose index is the mixed-radix number of its coordinates (c[m1], c[m2]).
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

REDUCE_TYPES = ("sum", "avg", "max", "min", "prod", "any", "all")


@dataclass(frozen=True)
class Placement:
    dims: tuple[tuple[int, ...], ...]          # per tensor dim, the mesh dims splitting it
    partial: tuple[tuple[int, str], ...] = ()  # sorted (mesh dim, reduce type)

    @staticmethod
    def make(dims, partial=None) -> "Placement":
        """`dims` entries may be -1, a mesh dim, or a list of mesh dims; `partial` a dict."""
        norm = tuple(() if d == -1 else (d,) if isinstance(d, int) else tuple(d) for d in dims)
        return Placement(norm, tuple(sorted((partial or {}).items())))

    @staticmethod
    def replicated(ndim: int) -> "Placement":
        return Placement(((),) * ndim)

    @property
    def ndim(self) -> int:
        return len(self.dims)

    @property
    def partial_dict(self) -> dict[int, str]:
        return dict(self.partial)

    def split_mesh_dims(self) -> set[int]:
        return {m for d in self.dims for m in d}

    def __str__(self) -> str:
        dims = ",".join("-1" if not d else str(d[0]) if len(d) == 1 else "[" + ",".join(map(str, d)) + "]"
                        for d in self.dims)
        tail = " partial{" + ",".join(f"{m}:{t}" for m, t in self.partial) + "}" if self.partial else ""
        return "{" + dims + "}" + tail


def problem(p: Placement, ndim: int, mesh_shape) -> str | None:
    """Why `p` is not a placement a rank could hold, or None."""
    if p.ndim != ndim:
        return f"{p} has {p.ndim} dims, the tensor has {ndim}"
    used = [m for d in p.dims for m in d]
    if any(not 0 <= m < len(mesh_shape) for m in used + [m for m, _ in p.partial]):
        return f"{p} names a mesh dim outside the {len(mesh_shape)}-D mesh"
    if len(used) != len(set(used)):
        return f"{p} splits two tensor dims (or one twice) over the same mesh dim"
    if set(used) & {m for m, _ in p.partial}:
        return f"{p} is both split and partial over one mesh dim"
    if any(t not in REDUCE_TYPES for _, t in p.partial):
        return f"{p} has an unknown reduce type"
    return None


def block_count(mesh_dims, mesh_shape) -> int:
    return prod(mesh_shape[m] for m in mesh_dims)


def block_index(mesh_dims, mesh_shape, coords) -> int:
    idx = 0
    for m in mesh_dims:  # outermost first: mixed radix
        idx = idx * mesh_shape[m] + coords[m]
    return idx


def block_bounds(size: int, nblocks: int, idx: int) -> tuple[int, int]:
    """Ceil-div blocks, as Paddle's GetLocalShape: the last ones may be short or empty."""
    step = -(-size // nblocks)
    start = min(idx * step, size)
    return start, min(start + step, size)


def local_bounds(shape, p: Placement, mesh_shape, coords) -> list[tuple[int, int]]:
    return [block_bounds(n, block_count(ms, mesh_shape), block_index(ms, mesh_shape, coords))
            for n, ms in zip(shape, p.dims)]


def local_slices(shape, p: Placement, mesh_shape, coords) -> tuple[slice, ...]:
    return tuple(slice(a, b) for a, b in local_bounds(shape, p, mesh_shape, coords))


def local_shape(shape, p: Placement, mesh_shape, coords) -> tuple[int, ...]:
    return tuple(b - a for a, b in local_bounds(shape, p, mesh_shape, coords))
