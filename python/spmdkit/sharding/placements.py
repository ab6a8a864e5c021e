"""Placements (one per mesh axis, as Paddle's and DTensor's APIs): Shard, Replicate, Partial.

A tensor dim split over several mesh axes needs an order. With `shard_order=None` on every
`Shard(d)` of that dim the mesh axes split it in mesh order, the earlier mesh axis major
(DTensor's convention). Otherwise each carries `shard_order` (0 = major), as Paddle 3.3.1's
`Shard(dim, shard_order=k)`; `to_placements` writes shard_order only on dims split more than
once. Sub-axes cannot be said; open dims, priorities and explicit replicated axes are refused
unless `exact=False` (then dropped).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from .errors import ShardingConversionError
from .integers import as_int
from .mesh import Mesh
from .tensor_sharding import REDUCE_TYPES, DimSharding, TensorSharding
from .verifier import verify


@dataclass(frozen=True)
class Shard:
    dim: int
    shard_order: int | None = None

    def __post_init__(self):
        for v, what in ((self.dim, "dim"), (self.shard_order, "shard_order")):
            if v is not None:
                if as_int(v) is None or as_int(v) < 0:
                    raise ShardingConversionError(f"Shard {what} must be a non-negative integer, got {v!r}")
                object.__setattr__(self, what, as_int(v))

    def __repr__(self):
        return f"Shard({self.dim})" if self.shard_order is None else f"Shard({self.dim}, shard_order={self.shard_order})"


@dataclass(frozen=True)
class Replicate:
    def __repr__(self):
        return "Replicate()"


@dataclass(frozen=True)
class Partial:
    reduce_type: str = "sum"

    def __post_init__(self):
        if self.reduce_type not in REDUCE_TYPES:
            raise ShardingConversionError(f"Partial reduce type {self.reduce_type!r} is not one of "
                                          f"{', '.join(REDUCE_TYPES)}")

    def __repr__(self):
        return "Partial()" if self.reduce_type == "sum" else f"Partial({self.reduce_type!r})"


Placement = Shard | Replicate | Partial


def to_placements(sharding: TensorSharding, mesh: Mesh | Mapping[str, Mesh] | None = None, *,
                  exact: bool = True, name: str = "tensor") -> list[Placement]:
    m = verify(sharding, mesh, None, name)
    out: list[Placement] = [Replicate() for _ in m.axes]
    for i, d in enumerate(sharding.dims):
        if exact and d.is_open:
            raise ShardingConversionError(f"an open dim ({d}) has no placement form", name, i)
        if exact and d.priority is not None:
            raise ShardingConversionError(f"priority p{d.priority} has no placement form", name, i)
        for k, a in enumerate(d.axes):
            if a.is_sub_axis:
                raise ShardingConversionError("a sub-axis has no placement form", name, i, str(a))
            out[m.axis_index(a.name)] = Shard(i, k if len(d.axes) > 1 else None)
    if exact and sharding.replicated:
        raise ShardingConversionError("explicitly replicated axes have no placement form",
                                      name, "replicated", str(sharding.replicated[0]))
    for a in sharding.unreduced:
        if a.is_sub_axis:
            raise ShardingConversionError("a sub-axis has no placement form", name, "unreduced", str(a))
        out[m.axis_index(a.name)] = Partial(sharding.reduce_type(a))
    return out


def from_placements(placements: Sequence[Placement], mesh: Mesh | str, rank: int, *,
                    meshes: Mapping[str, Mesh] | None = None, name: str = "tensor") -> TensorSharding:
    """A closed TensorSharding of a rank-`rank` tensor; `mesh` a Mesh, or a name found in `meshes`."""
    m = mesh if isinstance(mesh, Mesh) else (meshes or {}).get(mesh)
    if m is None:
        raise ShardingConversionError(f"unknown mesh @{mesh}; pass the Mesh or meshes={{name: Mesh}}", name)
    placements = list(placements)
    if len(placements) != len(m.axes):
        raise ShardingConversionError(f"{len(placements)} placements for a mesh with {len(m.axes)} axes "
                                      f"({', '.join(m.axis_names) or 'none'}); give one per mesh axis", name)
    per_dim: dict[int, list[tuple[int | None, int, str]]] = {}
    unreduced, kinds = [], {}
    for j, (p, axis) in enumerate(zip(placements, m.axis_names)):
        if isinstance(p, Shard):
            if p.dim >= rank:
                raise ShardingConversionError(f"Shard({p.dim}) is outside a tensor of rank {rank}",
                                              name, p.dim, f'"{axis}"')
            per_dim.setdefault(p.dim, []).append((p.shard_order, j, axis))
        elif isinstance(p, Partial):
            unreduced.append(axis)
            kinds[axis] = p.reduce_type
        elif not isinstance(p, Replicate):
            raise ShardingConversionError(f"placement {p!r} is not Shard, Replicate or Partial",
                                          name, None, f'"{axis}"')
    dims = []
    for i in range(0 if m.is_maximal else rank):  # maximal mesh: `[]` whatever the rank (Shardy)
        entries = per_dim.get(i, [])
        orders = [o for o, _, _ in entries]
        if len(entries) > 1 and any(o is None for o in orders) and any(o is not None for o in orders):
            raise ShardingConversionError(f"give shard_order on every Shard({i}) or on none", name, i)
        if len(entries) > 1 and None not in orders:
            if len(set(orders)) != len(orders):
                raise ShardingConversionError(f"two Shard({i}) placements have the same shard_order {orders}",
                                              name, i)
            entries.sort()
        else:
            entries.sort(key=lambda e: e[1])
        dims.append(DimSharding([axis for _, _, axis in entries]))
    return TensorSharding(mesh if isinstance(mesh, str) else m, dims, (), unreduced, kinds)
