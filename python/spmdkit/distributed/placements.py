"""Paddle-style placements (one per mesh dim: `Shard(d)`, `Replicate()`, `Partial(type)`) checked
against a mesh and a shape, and spelled as a jax PartitionSpec or a reshard Layout.

A tensor dim split by several mesh dims is split in mesh order (the earlier mesh dim major)
unless every such `Shard` carries `shard_order` (0 = major), as in spmdkit.sharding.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..sharding.placements import Partial, Placement, Replicate, Shard
from .errors import DistError
from .mesh import ProcessMesh

__all__ = ["Partial", "Placement", "Replicate", "Shard", "dim_axes", "is_placements", "placements_of_spec",
           "to_layout", "to_spec"]


def is_placements(x) -> bool:
    """A list/tuple of placements (a leaf of a placements pytree)."""
    return isinstance(x, (list, tuple)) and len(x) > 0 and all(isinstance(p, (Shard, Replicate, Partial)) for p in x)


def dim_axes(placements: Sequence[Placement], mesh: ProcessMesh, shape, value: str,
             allow_partial: bool = False) -> tuple[list[tuple[str, ...]], list[str], str | None]:
    """(mesh dims splitting each tensor dim, partial mesh dims, their reduce type), checked:
    one placement per mesh dim, Shard dims in range, sizes divisible, one reduce type."""
    rank = len(shape)
    if not is_placements(placements) or len(placements) != mesh.ndim:
        raise DistError(f"placements {list(placements) if isinstance(placements, (list, tuple)) else placements!r} "
                        f"must be one Shard/Replicate/Partial per mesh dim ({mesh.ndim}: {mesh.dim_names})",
                        value=value)
    split: list[list[tuple[int, str]]] = [[] for _ in range(rank)]
    partial, kinds = [], set()
    for i, p in enumerate(placements):
        name = mesh.dim_names[i]
        if isinstance(p, Shard):
            if p.dim >= rank:
                raise DistError(f"Shard({p.dim}) on mesh dim {name!r}: the value has rank {rank}", value=value)
            order = p.shard_order if p.shard_order is not None else i
            split[p.dim].append((order, name))
        elif isinstance(p, Partial):
            if not allow_partial:
                raise DistError(f"Partial on mesh dim {name!r}: a global array cannot be partial here "
                                "(pass it reduced)", value=value)
            partial.append(name)
            kinds.add(p.reduce_type)
    if len(kinds) > 1:
        raise DistError(f"partial mesh dims with mixed reduce types {sorted(kinds)}", value=value)
    dims = []
    for d, entries in enumerate(split):
        _check_orders(placements, d, mesh, value)
        axes = tuple(n for _, n in sorted(entries))
        parts = 1
        for a in axes:
            parts *= mesh.get_dim_size(a)
        if shape[d] % parts:
            raise DistError(f"dim {d} of size {shape[d]} does not divide over mesh dims {list(axes)} "
                            f"({parts} parts)", value=value)
        dims.append(axes)
    return dims, partial, (kinds.pop() if kinds else None)


def _check_orders(placements, dim: int, mesh: ProcessMesh, value: str) -> None:
    """The mesh dims splitting tensor dim `dim` have one order: none carries shard_order (mesh
    order), or all do with distinct orders."""
    on_dim = [(mesh.dim_names[i], p.shard_order) for i, p in enumerate(placements)
              if isinstance(p, Shard) and p.dim == dim]
    if len(on_dim) < 2:
        return
    orders = [o for _, o in on_dim]
    if all(o is None for o in orders):
        return
    if any(o is None for o in orders) or len(set(orders)) != len(orders):
        shown = ", ".join(f"{n}: shard_order={o}" for n, o in on_dim)
        raise DistError(f"dim {dim} is split over mesh dims in an ambiguous order ({shown}); give every "
                        "Shard of the dim a distinct shard_order, or none (mesh order)", value=value)


def to_spec(placements, mesh: ProcessMesh, shape, value: str = "tensor"):
    """The jax PartitionSpec of whole (non-partial) placements."""
    from jax.sharding import PartitionSpec as P
    dims, _, _ = dim_axes(placements, mesh, shape, value)
    return P(*[(a if len(a) > 1 else a[0]) if a else None for a in dims])


def to_layout(placements, mesh: ProcessMesh, shape, value: str = "tensor", allow_partial: bool = False):
    """The reshard planner's Layout of the placements."""
    from ..reshard import Layout, as_mesh
    dims, partial, reduce = dim_axes(placements, mesh, shape, value, allow_partial)
    return Layout.make(as_mesh(mesh.sharding_mesh), dims, partial, reduce)


def placements_of_spec(spec, mesh: ProcessMesh) -> list[Placement]:
    """Placements of a PartitionSpec over `mesh` (shard_order written on dims split twice or more)."""
    out: list[Placement] = [Replicate() for _ in range(mesh.ndim)]
    for d, entry in enumerate(spec):
        axes = () if entry is None else ((entry,) if isinstance(entry, str) else tuple(entry))
        for k, a in enumerate(axes):
            if a not in mesh.dim_names:
                raise DistError(f"partition spec {spec} names {a!r}, not a dim of {mesh}")
            out[mesh.dim_names.index(a)] = Shard(d, shard_order=k if len(axes) > 1 else None)
    return out
