"""Partitions and runs training steps on 8 virtual CPU devices; prints one JSON line per case.

Arguments: case names (see CASES). Started by test_partition_train.py in a fresh process, because
XLA_FLAGS must be set before JAX starts. XLA combines collectives of one kind and group into one
instruction over a tuple; `tensor_collectives` counts each tensor of such a tuple, which is what
the plan counts (one collective per reshard step).
"""
import json
import os
import re
import sys
import time

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

from spmdkit.ir import import_jax  # noqa: E402
from spmdkit.models import gpt, mlp  # noqa: E402
from spmdkit.partition import complete_forward, partition, to_jax  # noqa: E402
from spmdkit.reshard.hlo_collectives import collective_bytes, count_collectives  # noqa: E402

STEPS = 5
HLO_KINDS = {"all-gather": "all_gather", "reduce-scatter": "reduce_scatter", "all-reduce": "all_reduce",
             "all-to-all": "all_to_all", "collective-permute": "collective_permute"}
_COLLECTIVE = re.compile(r"^\s*(?:ROOT\s+)?%[\w.\-]+\s*=\s*(?P<type>.+?)\s+(?P<op>[\w\-]+)\(")


def tensor_collectives(hlo: str) -> dict:
    """Collectives per kind in compiled HLO, a combined (tuple) collective counted per tensor."""
    counts = dict.fromkeys(HLO_KINDS.values(), 0)
    for line in hlo.splitlines():
        m = _COLLECTIVE.match(line)
        op = m and m.group("op").removesuffix("-start")
        if op in HLO_KINDS:
            t = m.group("type")
            counts[HLO_KINDS[op]] += len(re.findall(r"[a-z]+\d*\[", t)) if t.startswith("(") else 1
    return counts
MESHES = {"2x2": ((2, 2), ("x", "y")), "2x2x2": ((2, 2, 2), ("x", "y", "z"))}

# per model and mesh: the batch's and the params' PartitionSpecs (unnamed params are replicated);
# x is data parallel, y (and z) tensor/model parallel
SPECS = {
    ("mlp", "2x2"): ({"w1": P(None, "y"), "b1": P("y"), "w2": P("y", None)}, P("x", None)),
    ("mlp", "2x2x2"): ({"w1": P("z", "y"), "b1": P("y"), "w2": P("y", None)}, P("x", None)),
    ("gpt", "2x2"): ({"h0.w_qkv": P(None, "y"), "h0.b_qkv": P("y"), "h0.w_o": P("y", None),
                      "h0.w_fc": P(None, "y"), "h0.b_fc": P("y"), "h0.w_proj": P("y", None)}, P("x", None)),
    ("gpt", "2x2x2"): ({"h0.w_qkv": P(None, ("y", "z")), "h0.b_qkv": P(("y", "z")), "h0.w_o": P(("y", "z"), None),
                        "h0.w_fc": P(None, ("y", "z")), "h0.b_fc": P(("y", "z")),
                        "h0.w_proj": P(("y", "z"), None)}, P("x", None)),
}


def model_setup(model):
    if model == "mlp":
        params = mlp.init_params(jax.random.PRNGKey(0))
        batch = mlp.example_batch(jax.random.PRNGKey(1))
        return params, batch, mlp.loss_fn, 0.05
    cfg = gpt.GPTConfig()
    params = gpt.init_params(jax.random.PRNGKey(0), cfg)
    batch = gpt.example_batch(jax.random.PRNGKey(1), cfg, batch=2)
    return params, batch, gpt.loss_fn, 0.1


def make_step(loss_fn, lr):
    def step(params, a, b):
        """One SGD step returning the new params, the loss and every gradient."""
        loss, grads = jax.value_and_grad(loss_fn)(params, a, b)
        return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), loss, grads
    return step


def max_diff(a, b):
    return max(float(np.max(np.abs(np.asarray(x) - np.asarray(y)), initial=0.0)) for x, y in zip(a, b))


def timed_steps(fn, args, unpack):
    """STEPS steps, feeding new params back; (outputs per step, median ms per step)."""
    outs, times = [], []
    for _ in range(STEPS):
        t = time.perf_counter()
        out = jax.block_until_ready(fn(*args))
        times.append((time.perf_counter() - t) * 1e3)
        outs.append(out)
        args = unpack(out, args)
    return outs, float(np.median(times[1:]))


def run_case(model, mesh_key, strategy="complete"):
    shape, names = MESHES[mesh_key]
    jmesh = jax.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(names))
    params, (a, b), loss_fn, lr = model_setup(model)
    param_specs, batch_spec = SPECS[(model, mesh_key)]
    keys = sorted(params)
    pspecs = {k: param_specs.get(k, P()) for k in keys}
    named = lambda s: NamedSharding(jmesh, s)  # noqa: E731
    step = make_step(loss_fn, lr)
    n = len(keys)

    # ours: import after jax.grad, complete, partition, run inside shard_map
    t0 = time.perf_counter()
    program = import_jax(step, params, a, b, inline_calls=True,
                         arg_shardings=({k: named(pspecs[k]) for k in keys}, named(batch_spec), named(batch_spec)))
    main = program.main
    main.result_shardings = [v.sharding for v in main.args[:n]] + [None] + [v.sharding for v in main.args[:n]]
    if strategy == "propagate":  # whole-program propagation first; completion fills what it left
        from spmdkit.propagation.from_ir import propagate_program
        propagate_program(program)
    complete_forward(program)
    parted = partition(program)
    plan_s = time.perf_counter() - t0
    ours = to_jax(parted, jmesh)
    flat = [params[k] for k in keys] + [a, b]
    hlo = ours.lower(*flat).compile().as_text()
    ours_outs, ours_ms = timed_steps(ours, flat, lambda out, args: list(out[:n]) + list(args[n:]))

    # reference: one device
    ref = jax.jit(step)
    ref_outs, _ = timed_steps(ref, (params, a, b), lambda out, args: (out[0],) + tuple(args[1:]))

    # XLA's own partitioning of the same step and input/output shardings
    psh = {k: named(pspecs[k]) for k in keys}
    auto = jax.jit(step, in_shardings=(psh, named(batch_spec), named(batch_spec)),
                   out_shardings=(psh, named(P()), psh))
    auto_hlo = auto.lower(params, a, b).compile().as_text()
    auto_outs, auto_ms = timed_steps(auto, (params, a, b), lambda out, args: (out[0],) + tuple(args[1:]))

    diffs = {"loss": 0.0, "grads": 0.0, "params": 0.0, "xla_auto_vs_ref": 0.0}
    for o, r, x in zip(ours_outs, ref_outs, auto_outs):
        new_params, loss, grads = list(o[:n]), o[n], list(o[n + 1:])
        diffs["loss"] = max(diffs["loss"], abs(float(loss) - float(r[1])))
        diffs["grads"] = max(diffs["grads"], max_diff(grads, [r[2][k] for k in keys]))
        diffs["params"] = max(diffs["params"], max_diff(new_params, [r[0][k] for k in keys]))
        diffs["xla_auto_vs_ref"] = max(diffs["xla_auto_vs_ref"], abs(float(x[1]) - float(r[1])))
    summary = parted.summary()
    return {"case": f"{model}-{mesh_key}" + ("" if strategy == "complete" else f"@{strategy}"), "diffs": diffs, "losses": [float(r[1]) for r in ref_outs],
            "plan_counts": summary.collectives, "plan_bytes": summary.bytes_per_device,
            "plan_cost_us": summary.cost_us, "reshards": summary.reshards,
            "hlo_counts": tensor_collectives(hlo), "hlo_instructions": count_collectives(hlo), "hlo_bytes": collective_bytes(hlo),
            "xla_counts": tensor_collectives(auto_hlo), "xla_instructions": count_collectives(auto_hlo), "xla_bytes": collective_bytes(auto_hlo),
            "ours_ms": ours_ms, "xla_ms": auto_ms, "partition_s": plan_s}


def run_iota_case():
    """Iotas whose consumers want them split are computed split (offset by the shard's place),
    with no collective; the values equal one device's."""
    from spmdkit.partition import LocalOp
    jmesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)

    def f(a):
        rows = jnp.arange(8, dtype=jnp.int32)[:, None].astype(jnp.float32)
        cols = jnp.arange(4, dtype=jnp.int32)[None, :].astype(jnp.float32)
        return a * 100.0 + rows * 10.0 + cols

    a = jnp.zeros((8, 4), jnp.float32)
    sharding = NamedSharding(jmesh, P("x", "y"))
    program = import_jax(f, a, arg_shardings=[sharding], inline_calls=True)
    program.main.result_shardings = [program.main.args[0].sharding]
    complete_forward(program)
    parted = partition(program)
    iotas = [str(s.result_layouts[0]) for s in parted.steps if isinstance(s, LocalOp) and s.op.name == "jax.iota"]
    got = to_jax(parted, jmesh)(a)[0]
    return {"case": "iota-2x2", "iota_layouts": iotas, "plan_counts": parted.summary().collectives,
            "max_diff": float(np.max(np.abs(np.asarray(got) - np.asarray(f(a)))))}


if __name__ == "__main__":
    for case in sys.argv[1:]:
        if case == "iota-2x2":
            print(json.dumps(run_iota_case()), flush=True)
            continue
        name, _, strategy = case.partition("@")   # "gpt-2x2@propagate": shardings from the propagation engine
        model, mesh_key = name.split("-")
        print(json.dumps(run_case(model, mesh_key, strategy or "complete")), flush=True)
