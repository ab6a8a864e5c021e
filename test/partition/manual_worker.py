"""Steps holding a `jax.shard_map` (an sdy.manual_computation in the program) trained with
spmdkit.distributed.parallelize on 8 virtual CPU devices (a 2x4 mesh, dp x mp), against one
device: a row-parallel matmul reduced with psum (check_vma on and off), an all_to_all between
two splits, the row-parallel shard_map inside a scan, a scan inside the shard_map (a psum per
step), and a collective matmul (ppermute in a fori_loop). Strategies propagate and auto. Prints
one JSON line per (case, strategy): the largest difference from jax.jit over 2 SGD steps (new
params, loss), the plan's collectives and bytes, and the compiled program's. Started by
test_partition_manual.py in a fresh process."""
import json
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

from spmdkit.distributed import ProcessMesh, Replicate, Shard, parallelize  # noqa: E402
from spmdkit.distributed.compare import compiled_report  # noqa: E402

MESH = ProcessMesh([[0, 1, 2, 3], [4, 5, 6, 7]], dim_names=["dp", "mp"])
R = Replicate()


def _rowpar(h, w):
    return jax.lax.psum(h @ w, "mp")


def _a2a(h):
    return jax.lax.all_to_all(h, "mp", 1, 1, tiled=True)   # heads split -> rows split


def _inner(case, jm):
    row = dict(in_specs=(P("dp", "mp"), P("mp", None)), out_specs=P("dp", None))
    if case == "rowpar":
        return lambda h, w: jax.shard_map(_rowpar, mesh=jm, **row)(h, w)
    if case == "rowpar_unchecked":
        return lambda h, w: jax.shard_map(_rowpar, mesh=jm, check_vma=False, **row)(h, w)
    if case == "all_to_all":
        return lambda h, w: jax.shard_map(_a2a, mesh=jm, in_specs=P("dp", None, "mp"), out_specs=P("dp", "mp", None))(
            h.reshape(h.shape[0], 4, 8)).reshape(h.shape[0], 32) @ w
    if case == "scan_inside":  # a psum per step of a scan in the body (check_vma: the carry made varying)
        def body_fn(h, w):
            def body(c, _):
                return c + jax.lax.psum(h @ w, "mp"), None
            init = jax.lax.pcast(jnp.zeros((h.shape[0], w.shape[1])), ("dp",), to="varying")
            return jax.lax.scan(body, init, None, length=3)[0]
        return lambda h, w: jax.shard_map(body_fn, mesh=jm, **row)(h, w)
    if case in ("collective_matmul", "collective_matmul_on_fine_mesh"):  # w's row blocks passed around mp
        def ring(h, w):                                                   # with ppermute, a matmul per block
            n, idx = 4, jax.lax.axis_index("mp")

            def body(i, carry):
                acc, wb = carry
                blk = jax.lax.dynamic_slice_in_dim(h, ((idx - i) % n) * wb.shape[0], wb.shape[0], axis=1)
                return acc + blk @ wb, jax.lax.ppermute(wb, "mp", [(j, (j + 1) % n) for j in range(n)])
            return jax.lax.fori_loop(0, n, body, (jnp.zeros((h.shape[0], w.shape[1])), w))[0]
        run = jax.shard_map(ring, mesh=jm, in_specs=(P("dp", None), P("mp", None)), out_specs=P("dp", None),
                            check_vma=False)
        if case == "collective_matmul":
            return run
        # with sub-axes elsewhere in the step: axis_index and ppermute over mp's two fine factors
        return lambda h, w: run((h.reshape(h.shape[0], 2, 16) * jnp.array([1.0, -0.5])[None, :, None]).reshape(h.shape), w)
    if case == "on_fine_mesh":  # heads of 2 x 16 over a 4-way mp: sub-axes, so the program runs on the fine
        def f(h, w):            # mesh, where the body's psum over "mp" is over mp's two factors
            g = (h.reshape(h.shape[0], 2, 16) * jnp.array([1.0, -0.5])[None, :, None]).reshape(h.shape)
            return jax.shard_map(_rowpar, mesh=jm, **row)(g, w)
        return f
    if case == "in_scan":
        def f(h, w):
            def body(c, _):
                return c + jax.shard_map(_rowpar, mesh=jm, **row)(h, w), None
            return jax.lax.scan(body, jnp.zeros((h.shape[0], w.shape[1])), None, length=3)[0]
        return f
    raise KeyError(case)


def run(case: str, strategy: str) -> dict:
    inner = _inner(case, MESH.jax_mesh())
    k = jax.random.PRNGKey(0)
    params = {"w1": jax.random.normal(k, (16, 32)) * 0.1, "w2": jax.random.normal(jax.random.fold_in(k, 1), (32, 4)) * 0.1}
    x, y = jax.random.normal(jax.random.fold_in(k, 2), (8, 16)), jax.random.normal(jax.random.fold_in(k, 3), (8, 4))

    def step(p, x, y):
        def loss(p):
            return jnp.mean((inner(jax.nn.relu(x @ p["w1"]), p["w2"]) - y) ** 2)
        value, grads = jax.value_and_grad(loss)(p)
        return jax.tree_util.tree_map(lambda a, g: a - 0.1 * g, p, grads), value
    placements = ({"w1": [R, Shard(1)], "w2": [R, Shard(0)]}, [Shard(0), R], [Shard(0), R])
    ours, ref = parallelize(step, MESH, placements, strategy=strategy), jax.jit(step)
    a = b = params
    diff = 0.0
    for _ in range(2):
        (a, la), (b, lb) = ours(a, x, y), ref(b, x, y)
        diff = max(diff, abs(float(la) - float(lb)),
                   *(float(np.max(np.abs(np.asarray(u) - np.asarray(v)))) for u, v in zip(jax.tree_util.tree_leaves(a),
                                                                                         jax.tree_util.tree_leaves(b))))
    hlo = compiled_report(ours.lower(params, x, y).compile().as_text())
    plan = ours.plan
    return {"case": case, "strategy": strategy, "diff": diff, "plan_counts": plan.collectives,
            "plan_bytes": plan.bytes_per_device, "hlo_counts": hlo["counts"], "hlo_bytes": hlo["bytes"],
            "fine_mesh": ours.partitioned.mesh.pieces is not None}


if __name__ == "__main__":
    for case in sys.argv[1:]:
        for strategy in ("propagate", "auto"):
            try:
                row = run(case, strategy)
            except Exception as e:  # one failing case must not hide the others
                row = {"case": case, "strategy": strategy, "error": f"{type(e).__name__}: {e}"[:2000]}
            print(json.dumps(row), flush=True)
