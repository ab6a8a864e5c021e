"""`shard_tensor` and `reshard` on global arrays.

A distributed tensor here is a plain `jax.Array` laid out by a `NamedSharding` over the mesh's
jax Mesh: JAX already carries "a global value and how it is split", and every jitted function
takes it as it is. `placements_of(x, mesh)` reads the placements back. Partial values are not
held as arrays (a jax.Array is always the whole value); they live only inside partitioned
programs.
"""
from __future__ import annotations

import numpy as np

from .errors import DistError
from .mesh import ProcessMesh, as_process_mesh
from .placements import placements_of_spec, to_layout, to_spec


def named_sharding(mesh: ProcessMesh, placements, shape, value: str = "tensor"):
    from jax.sharding import NamedSharding
    return NamedSharding(mesh.jax_mesh(), to_spec(placements, mesh, shape, value))


def is_placed(x, sharding) -> bool:
    """Whether `x` is a device array already laid out by `sharding`. Equivalent, not just equal:
    a program's outputs come back with specs written another way (P("mp") vs P(("mp",), None)),
    and copying those again on every step was most of a training step's overhead."""
    import jax
    return isinstance(x, jax.Array) and (x.sharding == sharding or x.sharding.is_equivalent_to(sharding, x.ndim))


def put(x, sharding):
    """`x` (host or device array) laid out by `sharding`; works when the sharding spans devices
    of other processes too (each process supplies its own shards of the same global value)."""
    import jax
    if is_placed(x, sharding):
        return x
    if sharding.is_fully_addressable:
        return jax.device_put(x, sharding)
    if isinstance(x, jax.Array) and not x.is_fully_addressable:
        return jax.jit(lambda a: a, out_shardings=sharding)(x)
    host = np.asarray(x)
    return jax.make_array_from_callback(host.shape, sharding, lambda idx: host[idx])


def put_all(xs, shardings) -> list:
    """put() over lists: the arrays still to move go in one device_put (one transfer call for a
    whole optimizer state rather than one per leaf)."""
    import jax
    out = list(xs)
    todo = [i for i, (x, s) in enumerate(zip(xs, shardings)) if not is_placed(x, s)]
    if all(shardings[i].is_fully_addressable for i in todo):
        for i, y in zip(todo, jax.device_put([xs[i] for i in todo], [shardings[i] for i in todo])):
            out[i] = y
    else:
        for i in todo:
            out[i] = put(xs[i], shardings[i])
    return out


def shard_tensor(x, mesh, placements, name: str = "tensor"):
    """The global array `x` split over `mesh` as `placements` (one per mesh dim), as Paddle's
    `dist.shard_tensor(x, mesh, [Shard(0), Replicate()])`; returns a jax.Array."""
    mesh = as_process_mesh(mesh)
    shape = tuple(np.shape(x))
    return put(x, named_sharding(mesh, placements, shape, name))


def placements_of(x, mesh) -> list:
    """The placements of a jax.Array laid out by a NamedSharding over `mesh`."""
    mesh = as_process_mesh(mesh)
    spec = getattr(getattr(x, "sharding", None), "spec", None)
    if spec is None:
        raise DistError(f"expected an array with a NamedSharding, got {type(x).__name__}")
    return placements_of_spec(spec, mesh)


def reshard_plan(x, mesh, placements, name: str = "tensor"):
    """The collectives (spmdkit.reshard Plan) that take `x` from its placements to `placements`."""
    from ..reshard import as_mesh, plan_reshard
    mesh = as_process_mesh(mesh)
    shape = tuple(x.shape)
    source = to_layout(placements_of(x, mesh), mesh, shape, name)
    target = to_layout(placements, mesh, shape, name)
    return plan_reshard(as_mesh(mesh.sharding_mesh), shape, source, target, np.dtype(x.dtype).itemsize,
                        sub_axes=False)


def reshard(x, mesh, placements, name: str = "tensor"):
    """`x` moved to `placements` by our planner's collectives (run inside jax.shard_map), as
    Paddle's `dist.reshard(x, mesh, placements)`. An `x` laid out over another mesh (or over no
    mesh) is moved by JAX's device_put: a transfer between device sets, not collectives in one."""
    from ..reshard.execute_jax import reshard_function
    mesh = as_process_mesh(mesh)
    if getattr(getattr(x, "sharding", None), "mesh", None) != mesh.jax_mesh():
        return put(x, named_sharding(mesh, placements, tuple(np.shape(x)), name))
    plan = reshard_plan(x, mesh, placements, name)
    if not plan.steps:
        return put(x, named_sharding(mesh, placements, tuple(x.shape), name))
    out = reshard_function(plan, mesh.jax_mesh())(x)
    return put(out, named_sharding(mesh, placements, tuple(x.shape), name))
