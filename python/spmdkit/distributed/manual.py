"""Manual regions: `shard_map` / `local_map` over a ProcessMesh with Paddle-style placements.

Thin wrappers over `jax.shard_map`: the function sees each device's local block; in and out
placements become PartitionSpecs. A `Partial(type)` out placement means the function returns a
partial value over that mesh dim; the wrapper reduces it (psum/pmax/pmin) before it leaves the
region, since a jax.Array is always whole. Placements are given per argument / per result (a
list of placements, or None for replicated); pytrees of placements follow the args' structure.
"""
from __future__ import annotations

from .errors import DistError
from .mesh import as_process_mesh
from .placements import Partial, Replicate, Shard, is_placements

_REDUCE = {"sum": "psum", "max": "pmax", "min": "pmin"}


def _spec(placements, mesh, what):
    from jax.sharding import PartitionSpec as P
    if placements is None:
        return P(), []
    if not is_placements(placements) or len(placements) != mesh.ndim:
        raise DistError(f"placements must be one Shard/Replicate/Partial per mesh dim ({mesh.dim_names}), "
                        f"got {placements!r}", value=what)
    rank = 1 + max((p.dim for p in placements if isinstance(p, Shard)), default=-1)
    split = [[] for _ in range(rank)]
    partial = []
    for i, p in enumerate(placements):
        name = mesh.dim_names[i]
        if isinstance(p, Shard):
            split[p.dim].append((p.shard_order if p.shard_order is not None else i, name))
        elif isinstance(p, Partial):
            if p.reduce_type not in _REDUCE:
                raise DistError(f"Partial({p.reduce_type!r}) cannot be reduced at a region's end", value=what)
            partial.append((name, p.reduce_type))
        elif not isinstance(p, Replicate):
            raise DistError(f"not a placement: {p!r}", value=what)
    entries = [tuple(n for _, n in sorted(e)) for e in split]
    return P(*[(e if len(e) > 1 else e[0]) if e else None for e in entries]), partial


def _tree_specs(tree, mesh, what):
    import jax
    leaves, treedef = jax.tree_util.tree_flatten(tree, is_leaf=lambda x: x is None or is_placements(x))
    specs = [_spec(l, mesh, f"{what} {i}") for i, l in enumerate(leaves)]
    return treedef, specs


def shard_map(fn, mesh, in_placements, out_placements, check_vma: bool = True):
    """`fn` run per device on local blocks: `in_placements` per argument, `out_placements` per
    result (a single list when `fn` returns one array). Returns a function of global arrays."""
    import jax
    mesh = as_process_mesh(mesh)
    in_def, in_specs = _tree_specs(tuple(in_placements), mesh, "argument")
    single = out_placements is None or is_placements(out_placements)
    out_def, out_specs = _tree_specs(out_placements if not single else [out_placements], mesh, "result")
    reductions = [partial for _, partial in out_specs]

    def body(*args):
        outs = fn(*args)
        flat = [outs] if single else jax.tree_util.tree_leaves(outs)
        if len(flat) != len(out_specs):
            raise DistError(f"the region returned {len(flat)} arrays for {len(out_specs)} out placements")
        reduced = []
        for x, partial in zip(flat, reductions):
            for name, kind in partial:
                x = getattr(jax.lax, _REDUCE[kind])(x, name)
            reduced.append(x)
        return reduced[0] if single else jax.tree_util.tree_unflatten(out_def, reduced)

    in_tree = jax.tree_util.tree_unflatten(in_def, [s for s, _ in in_specs])
    out_tree = out_specs[0][0] if single else jax.tree_util.tree_unflatten(out_def, [s for s, _ in out_specs])
    return jax.shard_map(body, mesh=mesh.jax_mesh(), in_specs=tuple(in_tree), out_specs=out_tree,
                         check_vma=check_vma)


def local_map(fn, out_placements, in_placements, process_mesh, check_vma: bool = True):
    """Paddle's argument order for the same region: `local_map(fn, out_placements,
    in_placements, process_mesh)`."""
    return shard_map(fn, process_mesh, in_placements, out_placements, check_vma=check_vma)
