"""Turning other descriptions of meshes and shardings into the planner's MeshSpec and Layout.

Accepted meshes: MeshSpec, `spmdkit.sharding.Mesh`, `jax.sharding.Mesh`, a dict, 'x=2,y=4'.
Accepted shardings: Layout; `spmdkit.sharding.TensorSharding` (sub-axes "x":(m)k included;
unreduced axes become partial with their reduce type); Shardy text (`#sdy.sharding<...>` or the dim list
`[{"x"}, {}]`); a DTensor/Paddle-style placements list with one Shard(dim)/Replicate()/Partial()
per mesh axis (several axes on one dim go major to minor in mesh order, or by `shard_order`).
"""
from __future__ import annotations

from .layout import Layout, MeshSpec, ReshardError, parse_layout


def as_mesh(mesh) -> MeshSpec:
    if isinstance(mesh, MeshSpec):
        return mesh
    if isinstance(mesh, (dict, str, list, tuple)):
        return MeshSpec.make(mesh)
    axes = getattr(mesh, "axes", None)
    if axes is not None and all(hasattr(a, "name") and hasattr(a, "size") for a in axes):  # spmdkit.sharding.Mesh
        if not axes:
            raise ReshardError("the reshard planner needs a mesh with at least one axis")
        return MeshSpec.make([(a.name, a.size) for a in axes])
    names, shape = getattr(mesh, "axis_names", None), getattr(mesh, "shape", None)
    if names is not None and isinstance(shape, dict):  # jax.sharding.Mesh
        return MeshSpec.make([(n, int(shape[n])) for n in names])
    raise ReshardError(f"cannot read a mesh from {type(mesh).__name__}: pass a MeshSpec, spmdkit.sharding.Mesh, "
                       "jax.sharding.Mesh, a dict or 'x=2,y=4'")


def as_layout(sharding, mesh, rank: int | None = None) -> Layout:
    """`sharding` as a Layout on `mesh`; `rank` is needed only for a placements list."""
    mesh = as_mesh(mesh)
    if isinstance(sharding, Layout):
        return Layout.make(mesh, sharding.dims, sharding.partial, sharding.reduce)
    if isinstance(sharding, str):
        text = sharding.strip()
        if text.startswith("#sdy") or text.startswith("<"):
            from spmdkit.sharding import parse_sharding
            if text.startswith("<"):
                text = "#sdy.sharding" + text
            return _from_tensor_sharding(parse_sharding(text), mesh)
        return parse_layout(text, mesh)
    if type(sharding).__name__ == "TensorSharding" and hasattr(sharding, "unreduced"):
        return _from_tensor_sharding(sharding, mesh)
    if isinstance(sharding, (list, tuple)) and all(_placement_kind(p) for p in sharding):
        return _from_placements(sharding, mesh, rank)
    raise ReshardError(f"cannot read a sharding from {sharding!r}: pass a Layout, a TensorSharding, Shardy text "
                       "or a list of Shard/Replicate/Partial placements")


def _from_tensor_sharding(ts, mesh: MeshSpec) -> Layout:
    own = getattr(ts, "mesh", None)
    if own is not None and not isinstance(own, str) and as_mesh(own) != mesh:
        raise ReshardError(f"sharding {ts} lives on mesh {as_mesh(own)}, not on {mesh}")

    def name(ref, where):
        return f"{ref.name}:({ref.pre_size}){ref.size}" if ref.is_sub_axis else ref.name

    dims = [tuple(name(r, f"dim {d}") for r in dim.axes) for d, dim in enumerate(ts.dims)]
    partial = [name(r, "unreduced") for r in ts.unreduced]
    groups = ts.unreduced_by_type() if partial else {}
    if len(groups) > 1:
        raise ReshardError(f"sharding {ts} mixes reduce types {sorted(groups)}; the planner needs one type "
                           "(the order of different reductions is not defined)")
    reduce = next(iter(groups)) if groups else None
    return Layout.make(mesh, dims, partial, reduce)


def _placement_kind(p) -> str | None:
    kind = type(p).__name__
    return kind if kind in ("Shard", "Replicate", "Partial") else None


def _from_placements(placements, mesh: MeshSpec, rank: int | None) -> Layout:
    if len(placements) != len(mesh.axes):
        raise ReshardError(f"{len(placements)} placements for a mesh of {len(mesh.axes)} axes ({mesh})")
    if rank is None:
        raise ReshardError("a placements list needs the tensor rank: as_layout(placements, mesh, rank=...)")
    per_dim: dict[int, list[tuple[int, str]]] = {}
    partial, reduces = [], set()
    for i, (p, axis) in enumerate(zip(placements, mesh.names)):
        kind = _placement_kind(p)
        if kind == "Shard":
            d = p.dim if p.dim >= 0 else p.dim + rank
            if not 0 <= d < rank:
                raise ReshardError(f"placement {i} (axis '{axis}') shards dim {p.dim} of a rank-{rank} tensor")
            order = getattr(p, "shard_order", None)
            per_dim.setdefault(d, []).append((i if order is None else order, axis))
        elif kind == "Partial":
            partial.append(axis)
            reduces.add(str(getattr(p, "reduce_type", None) or getattr(p, "reduce_op", None) or "sum").lower())
    if len(reduces) > 1:
        raise ReshardError(f"placements mix reduce types {sorted(reduces)}; the planner needs one type")
    dims = [tuple(a for _, a in sorted(per_dim.get(d, []))) for d in range(rank)]
    return Layout.make(mesh, dims, partial, reduces.pop() if reduces else None)
