"""Trains issue 18's models (models_issue18.py) with spmdkit.distributed.parallelize on 8 virtual
CPU devices (2x2x2: dp, fsdp, mp) against one device, and measures in the same run the bytes our
compiled program moves and the bytes XLA's own partitioning (jax.jit with the same NamedShardings
in and out) moves. Prints one JSON line per model named on the command line (default: all).

Started in a fresh process (XLA_FLAGS must be set before JAX starts) by
test_partition_slices_bytes.py and benchmarks/bytes_vs_xla.py (`--timing`: also the first call's
time and per-step times of ours and of jax.jit with the same shardings; only printed, never asserted).
"""
import json
import os
import sys
import time
from pathlib import Path

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
sys.path.insert(0, str(Path(__file__).parent))

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402

import models_issue18 as models  # noqa: E402
from spmdkit.distributed import parallelize  # noqa: E402
from spmdkit.distributed.compare import compiled_report, xla_auto_report  # noqa: E402
from spmdkit.examples.train import _named_tree as named_tree, max_abs  # noqa: E402
from spmdkit.partition import partition, to_jax  # noqa: E402
from spmdkit.reshard import CostModel  # noqa: E402
from spmdkit.reshard.cost import INTER_NODE, INTRA_NODE, AxisLink  # noqa: E402
from spmdkit.partition.execute import user_partition_spec  # noqa: E402

# the planner's bandwidth-only model (no latency term): every choice minimises bytes
BANDWIDTH_ONLY = CostModel(intra=AxisLink(0.0, INTRA_NODE.gbytes_per_s), inter=AxisLink(0.0, INTER_NODE.gbytes_per_s))

STEPS = 3


def train(fn, params, inputs, targets, reference) -> dict:
    """Max differences to one device over STEPS SGD steps, feeding the new params back."""
    diffs = {"loss": 0.0, "grads": 0.0, "params": 0.0}
    p_ours = p_ref = params
    for _ in range(STEPS):
        new_ours, loss, grads = fn(p_ours, inputs, targets)
        new_ref, ref_loss, ref_grads = reference(p_ref, inputs, targets)
        diffs["loss"] = max(diffs["loss"], abs(float(loss) - float(ref_loss)))
        diffs["grads"] = max(diffs["grads"], max(max_abs(grads[k], ref_grads[k]) for k in ref_grads))
        diffs["params"] = max(diffs["params"], max(max_abs(new_ours[k], new_ref[k]) for k in new_ref))
        p_ours, p_ref = new_ours, new_ref
    return diffs


def bandwidth_only(ours, step, args):
    """The same propagated program partitioned with the bandwidth-only cost model, as a function
    of the step's arguments (pytrees in and out) and its compiled report."""
    parted = partition(ours.program, cost=BANDWIDTH_ONLY)
    jm = ours.mesh.jax_mesh()
    run = to_jax(parted, jm)
    shardings = [NamedSharding(jm, user_partition_spec(layout, parted.mesh)) for layout in parted.arg_layouts]
    out_def = jax.tree_util.tree_structure(jax.eval_shape(step, *args))

    def call(*a):
        leaves = [jax.device_put(x, s) for x, s in zip(jax.tree_util.tree_leaves(a), shardings)]
        return jax.tree_util.tree_unflatten(out_def, list(run(*leaves)))
    leaves = [jax.device_put(x, s) for x, s in zip(jax.tree_util.tree_leaves(args), shardings)]
    return parted, call, compiled_report(run.lower(*leaves).compile().as_text())


def step_ms(fn, args, reps: int = 20) -> float:
    """Median ms of one call after warm-up (the state is fed back as a training loop does)."""
    params, inputs, targets = args
    times = []
    for _ in range(reps + 2):
        t = time.perf_counter()
        params = jax.block_until_ready(fn(params, inputs, targets))[0]
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times[2:]))


def timings(step, mesh, pp, bp, args, in_sh, out_sh) -> dict:
    """First call (trace, propagate, partition, compile, run) and per-step times: ours against
    jax.jit with the same shardings (XLA's partitioning)."""
    t = time.perf_counter()
    fresh = parallelize(step, mesh, (pp, bp, bp), out_placements=(pp, None, pp))
    jax.block_until_ready(fresh(*args))
    first_s = time.perf_counter() - t
    auto = jax.jit(step, in_shardings=in_sh, out_shardings=out_sh)
    placed = jax.device_put(args, in_sh)
    return {"first_call_s": first_s, "ours_ms": step_ms(fresh, placed), "jit_ms": step_ms(auto, placed)}


def run(name: str, strategy: str = "propagate", timed: bool = False) -> dict:
    params, inputs, targets, loss_fn, pp, bp = models.MODELS[name]()
    step = models.train_step_of(loss_fn)
    mesh = models.mesh(name)
    args = (params, inputs, targets)
    t0 = time.perf_counter()
    ours = parallelize(step, mesh, (pp, bp, bp), out_placements=(pp, None, pp), strategy=strategy,
                       example_args=args)
    partition_s = time.perf_counter() - t0
    hlo = compiled_report(ours.lower(*args).compile().as_text())
    in_sh = named_tree(mesh, (pp, bp, bp), args, "in_placements")
    out_sh = named_tree(mesh, (pp, None, pp), jax.eval_shape(step, *args), "out_placements")
    xla, _ = xla_auto_report(step, args, in_sh, out_sh)
    reference = jax.jit(step)
    plan = ours.plan
    bw_parted, bw_call, bw_hlo = bandwidth_only(ours, step, args)
    bw_plan = bw_parted.summary()
    times = timings(step, mesh, pp, bp, args, in_sh, out_sh) if timed else {}
    return {**times, "model": name, "strategy": strategy, "diffs": train(ours, *args, reference),
            "plan_counts": plan.collectives, "plan_bytes": plan.bytes_per_device, "plan_us": plan.cost_us,
            "hlo_counts": hlo["counts"], "hlo_bytes": hlo["bytes"],
            "bw_diffs": train(bw_call, *args, reference),
            "bw_plan_counts": bw_plan.collectives, "bw_plan_bytes": bw_plan.bytes_per_device,
            "bw_hlo_counts": bw_hlo["counts"], "bw_hlo_bytes": bw_hlo["bytes"],
            "xla_counts": xla["counts"], "xla_bytes": xla["bytes"], "partition_s": partition_s,
            "fine_mesh": str(ours.partitioned.mesh.mesh) if ours.partitioned.mesh.pieces else None,
            "out_mesh_axes": sorted({str(a) for leaf in jax.tree_util.tree_leaves(ours(*args)[0])
                                     for a in leaf.sharding.mesh.axis_names})}


if __name__ == "__main__":
    timed = "--timing" in sys.argv
    for name in [a for a in sys.argv[1:] if a != "--timing"] or list(models.MODELS):
        try:
            row = run(name, timed=timed)
        except Exception as e:  # one failing model must not hide the others' numbers
            row = {"model": name, "error": f"{type(e).__name__}: {e}"[:2000]}
        print(json.dumps(row), flush=True)
