"""Training steps with lax.scan through spmdkit.distributed.parallelize against XLA's partitioning
of the same placements (jax.jit with the same NamedShardings in and out) on 8 virtual CPU
devices: bytes one device receives per step (loop bodies times their trip counts), step time,
first-call time (trace, propagate, partition, compile, run). Prints one line per case.

    python benchmarks/bench_control_flow.py [rnn-2x2 rnn-2x2x2 stack-2x2 stack-2x2x2] [--repeat N]

The models are test/partition/control_flow_worker.py's (an RNN under scan; a transformer whose
layers are stacked under scan). Times are medians of N calls on already placed arrays; "ours" is
the parallelized call (Python wrapper included), "ours-run" the shard_map program alone.
"""
import os
import sys
import time
from pathlib import Path

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test" / "partition"))

import jax  # noqa: E402
import numpy as np  # noqa: E402

import control_flow_worker as worker  # noqa: E402
from spmdkit.distributed import parallelize  # noqa: E402
from spmdkit.distributed.compare import compiled_report, looped_bytes  # noqa: E402
from spmdkit.distributed.tensor import put_all  # noqa: E402


def median_ms(fn, repeat: int) -> float:
    jax.block_until_ready(fn())
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def bench(case: str, repeat: int) -> str:
    model, key = case.split("-")
    step, params, batch, placements = worker.SETUPS[model](key)
    args = (params, *batch)
    t0 = time.perf_counter()
    par = parallelize(step, worker.mesh_of(key), placements)
    jax.block_until_ready(par(*args))
    first_s = time.perf_counter() - t0

    leaves, tree = jax.tree_util.tree_flatten(args)
    placed = put_all(leaves, par._arg_named)
    placed_args = jax.tree_util.tree_unflatten(tree, placed)
    ours_ms = median_ms(lambda: par(*placed_args), repeat)
    run_ms = median_ms(lambda: par._run(*placed), repeat)
    ours_bytes = looped_bytes(par.lower(*args).compile().as_text())

    out_sh = tuple(par._named(l) for l in par.partitioned.result_layouts)
    flat_step = lambda *xs: tuple(jax.tree_util.tree_leaves(step(*jax.tree_util.tree_unflatten(tree, xs))))  # noqa: E731
    t0 = time.perf_counter()
    auto = jax.jit(flat_step, in_shardings=tuple(par._arg_named), out_shardings=out_sh)
    jax.block_until_ready(auto(*placed))
    xla_first_s = time.perf_counter() - t0
    xla = compiled_report(auto.lower(*placed).compile().as_text())
    xla_ms = median_ms(lambda: auto(*placed), repeat)
    return (f"{case}: bytes/step ours {ours_bytes:.0f} (plan {par.plan.bytes_per_device:.0f}) XLA "
            f"{xla['looped_bytes']:.0f}; ms/step ours {ours_ms:.3f} (shard_map alone {run_ms:.3f}) jax.jit "
            f"{xla_ms:.3f}; first call ours {first_s:.2f} s, jax.jit {xla_first_s:.2f} s")


if __name__ == "__main__":
    argv = sys.argv[1:]
    repeat = 50
    if "--repeat" in argv:
        i = argv.index("--repeat")
        repeat = int(argv[i + 1])
        del argv[i:i + 2]
    for case in argv or ["rnn-2x2", "rnn-2x2x2", "stack-2x2", "stack-2x2x2"]:
        print(bench(case, repeat), flush=True)
