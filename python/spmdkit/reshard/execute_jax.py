"""Running a plan with real XLA collectives inside `jax.shard_map`.

`apply_plan(plan, x, mesh)` is the per-device body (call it inside a shard_map over the plan's
factor mesh, or any mesh cutting out every axis the plan uses); `reshard_function(plan, mesh)`
wraps it into a jitted global -> global function. A partial value cannot be written as one
global array, so there the global array carries one leading dim, sharded over the partial axes,
holding each partial coordinate's contribution. Reading the compiled program's collectives:
hlo_collectives.py. JAX is imported lazily: importing spmdkit.reshard never starts a backend.
"""
from __future__ import annotations

import math

import numpy as np

from .layout import Layout, ReshardError
from .planner import Plan


def _group_perm(plan_mesh, step):
    """ppermute's (source, destination) pairs, as indices in the group of the step's axes
    linearised in mesh order (how ppermute numbers a tuple of axes)."""
    axes = step.axes
    sizes = [plan_mesh.size(a) for a in axes]
    perms = {}
    for src, dst in step.pairs:
        cs, cd = plan_mesh.coords(src), plan_mesh.coords(dst)
        rest = tuple(cs[a] for a in plan_mesh.names if a not in axes)
        pair = (_linear([cs[a] for a in axes], sizes), _linear([cd[a] for a in axes], sizes))
        perms.setdefault(rest, set()).add(pair)
    groups = set(frozenset(p) for p in perms.values())
    if len(groups) != 1:
        raise ReshardError(f"{step.describe()}: the permutation differs between device groups")
    moved = sorted(groups.pop())
    # ppermute zero-fills a device nobody sends to: devices that keep their shard send to themselves
    receivers = {d for _, d in moved}
    return moved + [(i, i) for i in range(math.prod(sizes)) if i not in receivers]


def _linear(idx, sizes):
    out = 0
    for i, n in zip(idx, sizes):
        out = out * n + i
    return out


def axis_names_on(plan: Plan, mesh) -> dict[str, tuple[str, ...]]:
    """Each axis name the plan uses -> the names of the axes of `mesh` (the shard_map's mesh:
    the user's, or one cut finer, e.g. factor_mesh of another plan) that make it up, major to
    minor. A group of consecutive factors linearises exactly as the axis they form."""
    from .adapt import as_mesh
    from .subaxes import split_name
    target = as_mesh(mesh)
    user = plan.user_mesh or plan.mesh
    out = {}
    for name in plan.mesh.names:
        if name in target.names:
            out[name] = (name,)
            continue
        parent, pre, size = split_name(name)
        lo, hi = (1, user.size(parent)) if pre is None else (pre, pre * size)
        parts = []
        for t in target.names:
            tp, tpre, tsize = split_name(t)
            if tp == parent and tpre is not None and lo <= tpre and tpre * tsize <= hi:
                parts.append(t)
        if math.prod(target.size(t) for t in parts) != hi // lo:
            raise ReshardError(f"the plan uses axis {name}, which the shard_map mesh {target} does not cut out; "
                               "run it over factor_mesh(mesh, plan) or plan with sub_axes=False")
        out[name] = tuple(parts)
    return out


# steps that are collectives; the others (slice, pad_to_partial, make_partial) run on empty arrays as on any
_MOVES_DATA = frozenset({"all_gather", "reduce_scatter", "all_reduce", "all_to_all", "collective_permute"})


def apply_plan(plan: Plan, x, mesh=None):
    """The plan's steps on one device's local array, inside a shard_map over `mesh` (default the
    plan's own factor mesh; any mesh that cuts out every axis the plan uses works)."""
    import jax
    from jax import lax
    names = axis_names_on(plan, mesh) if mesh is not None else {n: (n,) for n in plan.mesh.names}
    for s in plan.steps:
        reduce = s.before.reduce or s.after.reduce
        group = tuple(t for a in s.axes for t in names[a])
        if x.size == 0 and s.kind in _MOVES_DATA:  # an empty value (a dim of size 0): nothing to move, and
            x = lax.full(s.after.local_shape(plan.mesh, plan.shape), 0, x.dtype)  # XLA refuses a collective
            continue                                                              # over it
        if s.kind == "collective_permute":
            # the factors of the step's axes, in mesh order as ppermute wants, linearise the same way
            x = jax.lax.ppermute(x, group, _group_perm(plan.mesh, s))
            continue
        a = group if len(group) > 1 else group[0]    # a tuple of axes is one collective group
        n = math.prod(plan.mesh.size(ax) for ax in s.axes)
        if s.kind == "all_gather":
            x = jax.lax.all_gather(x, a, axis=s.dim, tiled=True, to="invarying")   # replicated over a now (check_vma)
        elif s.kind == "reduce_scatter":
            x = jax.lax.psum_scatter(x, a, scatter_dimension=s.dim, tiled=True)
            if reduce == "avg":
                x = _divided(x, n)
        elif s.kind == "all_reduce":
            if reduce in ("sum", "avg"):
                x = jax.lax.psum(x, a)
                x = _divided(x, n) if reduce == "avg" else x
            elif reduce in ("all", "any"):
                x = _logical_all_reduce(x, a, reduce)
            else:
                x = (jax.lax.pmax if reduce == "max" else jax.lax.pmin)(x, a)
        elif s.kind == "all_to_all":
            x = jax.lax.all_to_all(x, a, split_axis=s.dim_to, concat_axis=s.dim, tiled=True)
        elif s.kind == "slice":
            size = x.shape[s.dim] // n
            sizes = x.shape[:s.dim] + (size,) + x.shape[s.dim + 1:]
            x = lax.dynamic_slice(x, _starts(x.ndim, s.dim, _block_start(a, size)), sizes,
                                  allow_negative_indices=False)
        elif s.kind == "pad_to_partial":
            size = x.shape[s.dim]
            shape = x.shape[:s.dim] + (size * n,) + x.shape[s.dim + 1:]
            x = lax.dynamic_update_slice(lax.full(shape, 0, x.dtype), x, _starts(x.ndim, s.dim, _block_start(a, size)),
                                         allow_negative_indices=False)
        elif s.kind == "make_partial":
            if reduce == "sum":
                first = lax.eq(lax.axis_index(a), np.int32(0))
                x = lax.select(lax.broadcast_in_dim(first, x.shape, ()), x, lax.full(x.shape, 0, x.dtype))
        else:
            raise ReshardError(f"unknown step kind '{s.kind}'")
    return x


def _logical_all_reduce(x, axes, reduce: str):
    """The and (`all`) / or (`any`) of every device's part: of booleans, their min / max (one
    all-reduce); of integers (reduce_and/or are bitwise there), of all parts gathered."""
    import jax
    from jax import lax
    if x.dtype == np.bool_:
        return (jax.lax.pmin if reduce == "all" else jax.lax.pmax)(x, axes)
    parts = jax.lax.all_gather(x, axes, axis=0, tiled=False, to="invarying")
    return (lax.reduce_and_p if reduce == "all" else lax.reduce_or_p).bind(parts, axes=(0,))


# The steps bind lax primitives on tracers, never jnp operators: each of those is a jitted call
# of its own while tracing (most of a reshard's tracing time).
def _block_start(axis, size: int):
    """This device's first index along a dim cut into blocks of `size` over `axis`."""
    from jax import lax
    return lax.mul(lax.axis_index(axis), np.int32(size))


def _starts(ndim: int, dim: int, start) -> list:
    """dynamic_slice's start indices: `start` on `dim`, zero elsewhere."""
    return [start if d == dim else np.int32(0) for d in range(ndim)]


def _divided(x, n: int):
    """x / n for an average; a float array keeps its dtype (as jnp's true division does)."""
    import jax.numpy as jnp
    from jax import lax
    if jnp.issubdtype(x.dtype, jnp.floating):
        return lax.div(x, lax.full(x.shape, n, x.dtype))
    return x / n


def partition_spec(layout: Layout, names: dict[str, tuple[str, ...]] | None = None):
    """The PartitionSpec of `layout`'s global form (partial axes on the leading stacked dim);
    `names` (from axis_names_on) renames axes for a finer shard_map mesh."""
    from jax.sharding import PartitionSpec as P

    def spell(axes):
        out = tuple(t for a in axes for t in (names[a] if names else (a,)))
        return out or None
    entries = [spell(axes) for axes in layout.dims]
    if layout.partial:
        entries = [spell(layout.partial)] + entries
    return P(*entries)


def factor_mesh(mesh, plan: Plan):
    """The jax Mesh of `plan.mesh`: the same devices as the user's jax `mesh`, with axes cut into
    the plan's factors (named "x:(m)k"); shard_map over it to run a plan that uses sub-axes."""
    import jax
    from jax.sharding import AxisType
    user = plan.user_mesh or plan.mesh
    got = [(n, int(mesh.shape[n])) for n in mesh.axis_names]
    if [p for p in got if p[1] > 1] != [p for p in user.axes if p[1] > 1] or set(mesh.axis_names) != set(user.names):
        raise ReshardError(f"jax mesh {dict(got)} is not the plan's mesh {user}")
    if plan.mesh == user:
        return mesh
    return jax.sharding.Mesh(mesh.devices.reshape([n for _, n in plan.mesh.axes]), plan.mesh.names,
                             axis_types=(AxisType.Auto,) * len(plan.mesh.axes))


def reshard_function(plan: Plan, mesh, check_vma: bool = False, run_on=None):
    """A jitted global -> global function running `plan` on the jax.sharding.Mesh `mesh` (its
    axis types Auto, so that arrays laid out over `mesh` are taken as they are). With
    `check_vma=True` JAX also checks that each value varies over exactly the axes it should.
    `run_on`: a finer jax mesh of the same devices to shard_map over (default factor_mesh)."""
    import jax
    src, tgt = plan.source, plan.target
    fine = factor_mesh(mesh, plan) if run_on is None else run_on
    names = axis_names_on(plan, fine)

    def body(x):
        if src.partial:
            x = x[0]
        y = apply_plan(plan, x, fine)
        return y[None] if tgt.partial else y

    return jax.jit(jax.shard_map(body, mesh=fine, in_specs=partition_spec(src, names),
                                 out_specs=partition_spec(tgt, names), check_vma=check_vma))
