"""Trains an example with `parallelize(..., strategy="auto")` and only the batch placed, on 8
virtual CPU devices, and prints one JSON line per case (started by test_auto_train.py in a fresh
process: XLA_FLAGS must be set before JAX starts; benchmarks/bench_auto.py prints the same rows).

Case: "MODEL-MESH-OPTIMIZER[-memKB|-memrep][-floRATE]" (e.g. gpt-2x2-adamw, mlp-2x2-sgd-mem20,
mlp-2x2-adamw-memrep: a limit one byte below the replicated params' and optimizer state's bytes,
gpt-2x2-sgd-flo1e9: a device's FLOP/s for the search): every step's
loss and gradients against one device, the plan's bytes and the compiled program's, the
hand-written placements of spmdkit.examples (propagated) and XLA's partitioning of them, step
times of the three in the same run, the compiled memory per device, and the placements found."""
import json
import os
import sys
import time

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import numpy as np  # noqa: E402

from spmdkit.distributed import parallelize  # noqa: E402
from spmdkit.distributed.compare import compiled_report, xla_auto_report  # noqa: E402
from spmdkit.examples.optim import OPTIMIZERS, state_placements  # noqa: E402
from spmdkit.examples.setups import SETUPS, mesh_of  # noqa: E402
from spmdkit.examples.train import LR, _named_tree, make_step, max_abs  # noqa: E402


def _median_ms(fn, args, reps: int) -> float:
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times))


def run_case(case: str, steps: int = 3, reps: int = int(os.environ.get("AUTO_WORKER_REPS", "5"))) -> dict:
    parts = case.split("-")
    model, mesh_key, optimizer = parts[:3]
    options = {p[:3]: p[3:] for p in parts[3:]}       # mem<kB>|memrep, flo<FLOP/s of a device>
    from spmdkit.auto import AutoCostModel, set_default_cost
    set_default_cost(AutoCostModel(flops_per_s=float(options["flo"])) if "flo" in options else None)
    setup = SETUPS[model](mesh_key)
    mesh = mesh_of(mesh_key)
    init, update = OPTIMIZERS[optimizer](LR[optimizer])
    step = make_step(setup.loss_fn, update)
    args = (setup.params, init(setup.params), *setup.batch)
    state_bytes = sum(np.asarray(x).nbytes for x in jax.tree_util.tree_leaves(args[:2]))
    memory_limit = None if "mem" not in options else state_bytes - 1 if options["mem"] == "rep" else \
        float(options["mem"]) * 1000
    bp = setup.batch_placements
    t0 = time.perf_counter()
    auto = parallelize(step, mesh, (None, None, bp, bp), strategy="auto", example_args=args,
                       memory_limit=memory_limit)
    trace_s = time.perf_counter() - t0
    rep = auto.search_report
    compiled = auto.lower(*args).compile()
    hlo = compiled_report(compiled.as_text())
    mem = compiled.memory_analysis()
    row = {"case": case, "trace_s": trace_s, "search_s": rep.search_s, "solve_s": rep.solve_s, "gap": rep.gap,
           "status": rep.status, "objective_us": rep.objective_us, "modeled_bytes": rep.comm_bytes,
           "modeled_memory": rep.memory_bytes, "memory_limit": memory_limit, "searched_limit": rep.searched_limit, "state_bytes": state_bytes,
           "plan_bytes": auto.plan.bytes_per_device, "plan_counts": auto.plan.collectives,
           "hlo_bytes": hlo["bytes"], "hlo_counts": hlo["counts"],
           "compiled_memory": {k: int(getattr(mem, k)) for k in ("argument_size_in_bytes", "output_size_in_bytes",
                                                                  "temp_size_in_bytes", "alias_size_in_bytes")},
           "placements": {k: repr(v) for k, v in auto.in_shardings.items() if k.startswith("args[0]")},
           "steps": []}
    ref = jax.jit(step)
    ours_state, ref_state = args, args
    for _ in range(steps):
        out, want = auto(*ours_state), ref(*ref_state)
        row["steps"].append({"loss_diff": abs(float(out[2]) - float(want[2])),
                             "grad_diff": max(max_abs(out[3][k], want[3][k]) for k in want[3]),
                             "param_diff": max(max_abs(out[0][k], want[0][k]) for k in want[0])})
        ours_state, ref_state = (out[0], out[1], *setup.batch), (want[0], want[1], *setup.batch)
    row["state_moved"] = [l for l in auto.moved_args(*ours_state) if not l.startswith(("args[2]", "args[3]"))]
    # the hand-written placements (Megatron on mp, fsdp), propagated, and XLA's partitioning of them
    pp = setup.param_placements
    sp = state_placements(optimizer, pp)
    hand = parallelize(step, mesh, (pp, sp, bp, bp), out_placements=(pp, sp, None, pp), example_args=args)
    in_sh = _named_tree(mesh, (pp, sp, bp, bp), args, "in_placements")
    out_sh = _named_tree(mesh, (pp, sp, None, pp), jax.eval_shape(step, *args), "out_placements")
    xla, xla_fn = xla_auto_report(step, args, in_sh, out_sh)
    row.update({"hand_bytes": hand.plan.bytes_per_device, "xla_bytes": xla["bytes"]})
    if reps:
        row.update({"auto_ms": _median_ms(auto, args, reps), "hand_ms": _median_ms(hand, args, reps),
                    "xla_ms": _median_ms(xla_fn, args, reps)})
    return row


if __name__ == "__main__":
    argv, steps = sys.argv[1:], 3
    if argv[:1] == ["--steps"]:
        steps, argv = int(argv[1]), argv[2:]
    for case in argv:
        print(json.dumps(run_case(case, steps)), flush=True)
