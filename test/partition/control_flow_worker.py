"""Training steps with control flow (scan, cond, switch, while_loop, fori_loop) through
spmdkit.distributed.parallelize on 8 virtual CPU devices, against one device; prints one JSON line
per case. Started by test_partition_control_flow.py in a fresh process (XLA_FLAGS must be set
before JAX starts).

Cases: "rnn-2x2", "rnn-2x2x2" (an RNN under lax.scan), "stack-2x2", "stack-2x2x2" (a transformer
whose layers are stacked under lax.scan: params with a leading layer dim), "branch-2x2" (cond on
a data-dependent predicate and switch on an index argument), "loop-2x2" (a data-dependent
while_loop and a fori_loop with a traced bound, before the grad), "random-N" (N random programs
of each kind of loop and branch, hypothesis). Add "+xla" to a model case to also report XLA's partitioning
of the same placements (bytes per step, loops counted by their trip counts), "+hlo" for only
our compiled program's, "+auto" to leave the params to the search (strategy="auto"; the batch
placed as given).
"""
import json
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from spmdkit.distributed import ProcessMesh, Replicate, Shard, parallelize  # noqa: E402

STEPS = 5
LR = 0.1
R = Replicate()


def mesh_of(key: str) -> ProcessMesh:
    if key == "2x2":
        return ProcessMesh(shape=(2, 2), dim_names=["dp", "mp"])
    return ProcessMesh(shape=(2, 2, 2), dim_names=["dp", "fsdp", "mp"])


def sgd(step_loss):
    """A training step: (loss, params - LR * grad, grad)."""
    def step(params, *batch):
        loss, grads = jax.value_and_grad(step_loss)(params, *batch)
        return loss, jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads), grads
    return step


# -- models ---------------------------------------------------------------------------------------
def rnn_loss(p, xs, y):
    """An Elman RNN over the time axis of xs [T, B, D] under lax.scan; the per-step outputs are
    stacked (scan's ys) and enter the loss too."""
    def cell(h, x):
        h = jnp.tanh(x @ p["wx"] + h @ p["wh"] + p["b"])
        return h, jnp.mean(h * h, axis=-1)
    h0 = jnp.zeros((xs.shape[1], p["wh"].shape[0]), xs.dtype)
    h, energy = jax.lax.scan(cell, h0, xs)
    return jnp.mean((h @ p["wo"] - y) ** 2) + 0.01 * jnp.mean(energy)


def rnn_setup(key: str):
    rng = np.random.default_rng(0)
    T, B, D, H, O = 4, 8, 8, 16, 4
    params = {"wx": rng.normal(0, 0.3, (D, H)), "wh": rng.normal(0, 0.2, (H, H)), "b": np.zeros(H),
              "wo": rng.normal(0, 0.3, (H, O))}
    params = {k: v.astype(np.float32) for k, v in params.items()}
    xs, y = rng.normal(size=(T, B, D)).astype(np.float32), rng.normal(size=(B, O)).astype(np.float32)
    if key == "2x2":  # batch on dp, hidden on mp
        place = {"wx": [R, Shard(1)], "wh": [R, Shard(1)], "b": [R, Shard(0)], "wo": [R, Shard(0)]}
        batch = ([Shard(1), R], [Shard(0), R])
    else:             # batch on (dp, fsdp), weights split on fsdp and mp
        place = {"wx": [R, Shard(0), Shard(1)], "wh": [R, Shard(0), Shard(1)], "b": [R, R, Shard(0)],
                 "wo": [R, Shard(1), Shard(0)]}
        batch = ([Shard(1), Shard(1), R], [Shard(0), Shard(0), R])
    return sgd(rnn_loss), params, (xs, y), (place, *batch)


def _rms(x):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-5)


def stack_loss(p, x, y, heads=2):
    """A pre-norm transformer whose layers are stacked under lax.scan (flax nn.scan's layout: each
    layer param has a leading layer dim), causal attention and a GELU MLP."""
    B, S, D = x.shape

    def layer(h, lp):
        a = _rms(h)
        q, k, v = (jnp.reshape(a @ lp[n], (B, S, heads, D // heads)) for n in ("wq", "wk", "wv"))
        scores = jnp.einsum("bshd,bthd->bhst", q, k) / np.sqrt(D // heads)
        causal = jnp.arange(S)[:, None] >= jnp.arange(S)[None, :]
        att = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
        o = jnp.reshape(jnp.einsum("bhst,bthd->bshd", att, v), (B, S, D))
        h = h + o @ lp["wo"]
        return h + jax.nn.gelu(_rms(h) @ lp["w1"]) @ lp["w2"], None

    h, _ = jax.lax.scan(layer, x, p["layers"])
    return jnp.mean((h @ p["head"] - y) ** 2)


def stack_setup(key: str):
    rng = np.random.default_rng(1)
    L, B, S, D, F, O = 2, 4, 8, 16, 32, 4
    layers = {n: rng.normal(0, 0.2, (L, D, D)) for n in ("wq", "wk", "wv", "wo")}
    layers.update(w1=rng.normal(0, 0.2, (L, D, F)), w2=rng.normal(0, 0.2, (L, F, D)))
    params = {"layers": {k: v.astype(np.float32) for k, v in layers.items()},
              "head": rng.normal(0, 0.3, (D, O)).astype(np.float32)}
    x, y = rng.normal(size=(B, S, D)).astype(np.float32), rng.normal(size=(B, S, O)).astype(np.float32)
    if key == "2x2":  # batch on dp; Megatron-style column (q, k, v, w1) and row (wo, w2) splits on mp
        col, row = [R, Shard(2)], [R, Shard(1)]
        batch = ([Shard(0), R], [Shard(0), R])
    else:             # plus the other dim of each weight on fsdp, batch on (dp, fsdp)
        col, row = [R, Shard(1), Shard(2)], [R, Shard(2), Shard(1)]
        batch = ([Shard(0), Shard(0), R], [Shard(0), Shard(0), R])
    place = {"layers": {"wq": col, "wk": col, "wv": col, "w1": col, "wo": row, "w2": row}, "head": None}
    return sgd(stack_loss), params, (x, y), (place, *batch)


def branch_loss(p, x, y, k):
    """cond on a data-dependent predicate (a sum over split dims) and switch on an index argument,
    both under the grad (JAX differentiates cond into a cond)."""
    h = x @ p["w1"]
    h = jax.lax.switch(k, [jnp.tanh, jax.nn.relu, lambda t: jnp.sin(t) * p["s"]], h)
    h = jax.lax.cond(jnp.sum(h) > 0, lambda t: t * p["s"], lambda t: t - p["s"], h)
    return jnp.mean((h @ p["w2"] - y) ** 2)


def branch_setup(key: str):
    rng = np.random.default_rng(2)
    params = {"w1": rng.normal(0, 0.5, (8, 16)).astype(np.float32), "s": np.float32(1.5),
              "w2": rng.normal(0, 0.5, (16, 4)).astype(np.float32)}
    x, y = rng.normal(size=(8, 8)).astype(np.float32), rng.normal(size=(8, 4)).astype(np.float32)
    place = {"w1": [R, Shard(1)], "s": None, "w2": [R, Shard(0)]}
    return sgd(branch_loss), params, (x, y), (place, [Shard(0), R], [Shard(0), R], None)


def loop_step(p, x, y, n):
    """A data-dependent while_loop (halve x until its norm is under 4: the predicate reduces over
    split dims in the cond region) and a fori_loop with a traced bound, then a grad."""
    x = jax.lax.while_loop(lambda t: jnp.sqrt(jnp.sum(t * t)) > 4.0, lambda t: t * 0.5, x)
    x = jax.lax.fori_loop(0, n, lambda i, t: jnp.tanh(t @ p["m"]) + t, x)
    loss, g = jax.value_and_grad(lambda q: jnp.mean((jnp.tanh(x @ q["w"]) - y) ** 2))(p)
    return loss, {"w": p["w"] - LR * g["w"], "m": p["m"]}, g


def loop_setup(key: str):
    rng = np.random.default_rng(3)
    params = {"w": rng.normal(0, 0.5, (8, 4)).astype(np.float32), "m": rng.normal(0, 0.3, (8, 8)).astype(np.float32)}
    x, y = rng.normal(size=(8, 8)).astype(np.float32) * 3, rng.normal(size=(8, 4)).astype(np.float32)
    place = {"w": [R, Shard(0)], "m": [R, Shard(1)]}
    return loop_step, params, (x, y), (place, [Shard(0), Shard(1)], [Shard(0), R], None)


SETUPS = {"rnn": rnn_setup, "stack": stack_setup, "branch": branch_setup, "loop": loop_setup}


def extra_args(model: str, step: int) -> tuple:
    """Per-step scalar arguments: the switch index, the loop bound (they change across steps)."""
    if model == "branch":
        return (np.int32(step % 3),)
    if model == "loop":
        return (np.int32(1 + step % 3),)
    return ()


# -- running ------------------------------------------------------------------------------------
def max_diff(a, b) -> float:
    return max(float(np.max(np.abs(np.asarray(x, np.float64) - np.asarray(y, np.float64))))
               for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)))


def model_case(case: str) -> dict:
    import time
    name, _, extra = case.partition("+")
    model, key = name.split("-")
    step, params, batch, placements = SETUPS[model](key)
    mesh = mesh_of(key)
    if extra == "auto":  # the params left to the search (strategy="auto"), the batch placed as given
        par = parallelize(step, mesh, (None, *placements[1:]), strategy="auto")
    else:
        par = parallelize(step, mesh, placements)
    ref = jax.jit(step)
    ours_p, ref_p = params, params
    loss_diffs, grad_diffs, param_diffs = [], [], []
    first_call_s = None
    for i in range(STEPS):
        args = (*batch, *extra_args(model, i))
        t0 = time.perf_counter()
        loss, new_p, grads = par(ours_p, *args)
        jax.block_until_ready(loss)
        if first_call_s is None:
            first_call_s = time.perf_counter() - t0
        rloss, rnew_p, rgrads = ref(ref_p, *args)
        loss_diffs.append(abs(float(loss) - float(rloss)))
        grad_diffs.append(max_diff(grads, rgrads))
        param_diffs.append(max_diff(new_p, rnew_p))
        ours_p, ref_p = new_p, rnew_p
    row = {"case": case, "loss_diffs": loss_diffs, "grad_diffs": grad_diffs, "param_diffs": param_diffs,
           "loss": float(loss), "first_call_s": first_call_s, "plan": str(par.plan),
           "plan_bytes": par.plan.bytes_per_device, "loops": loop_summary(par.partitioned)}
    if extra == "auto":
        row["placements"] = {k: str(v) for k, v in par.in_shardings.items()}
        row["search_status"] = par.search_report.status
    elif extra == "xla":
        row.update(xla_row(step, par, ours_p, batch + extra_args(model, 0)))
    elif extra == "hlo":  # what the compiled program moves per call, loop bodies times their trip counts
        from spmdkit.distributed.compare import looped_bytes
        row["ours_hlo_bytes"] = looped_bytes(par.lower(ours_p, *batch, *extra_args(model, 0)).compile().as_text())
    return row


def loop_summary(parted) -> list:
    from spmdkit.partition import LocalControlFlow
    return [{"op": s.op.name, "trip_count": s.trip_count, "carry": [str(l) for l in s.operand_layouts]}
            for s in parted.steps if isinstance(s, LocalControlFlow)]


def xla_row(step, par, params, args) -> dict:
    """Bytes per step of our compiled program and of XLA's partitioning (jax.jit with the same
    NamedShardings in and out), each loop body's collectives times its trip count."""
    from spmdkit.distributed.compare import xla_auto_report
    from spmdkit.reshard.hlo_collectives import collective_bytes
    flat = jax.tree_util.tree_leaves((params, *args))
    ours_hlo = par.lower(params, *args).compile().as_text()
    in_sh = tuple(par._arg_named)
    out_sh = tuple(par._named(l) for l in par.partitioned.result_layouts)
    tree = jax.tree_util.tree_structure((params, *args))
    flat_step = lambda *leaves: tuple(jax.tree_util.tree_leaves(step(*jax.tree_util.tree_unflatten(tree, leaves))))  # noqa: E731
    xla, _ = xla_auto_report(flat_step, flat, in_sh, out_sh)
    from spmdkit.distributed.compare import looped_bytes
    return {"ours_hlo_bytes": looped_bytes(ours_hlo), "ours_hlo_static_bytes": collective_bytes(ours_hlo),
            "xla_bytes": xla["looped_bytes"], "xla_static_bytes": xla["bytes"], "xla_counts": xla["counts"]}


if __name__ == "__main__":
    for case in sys.argv[1:]:
        if case.startswith("random-"):
            from control_flow_random import random_case
            print(json.dumps(random_case(int(case.split("-")[1]))), flush=True)
        else:
            print(json.dumps(model_case(case)), flush=True)
