"""Training steps with lax.scan through spmdkit.distributed.parallelize against XLA's partitioning
of the same placements (jax.jit with the same NamedShardings in and out) on 8 virtual CPU
devices: bytes one device receives per step (loop bodies times their trip counts), step time,
first-call time (trace, propagate, partition, compile, run). Prints one line per case.

    python benchmarks/bench_control_flow.py [rnn-2x2 rnn-2x2x2 stack-2x2 stack-2x2x2] [--repeat N]

The models are test/partition/control_flow_worker.py's (an RNN under scan; a transformer whose
layers are stacked under scan). Times are the min and median of N calls on already placed arrays,
the three called in turn; "ours" is the parallelized call (Python wrapper included), "shard_map
alone" its jitted program without the wrapper.
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


def interleaved_ms(fns: dict, repeat: int) -> dict:
    """{name: (min, median) ms per call}, the functions called in turn so that load from other
    processes falls on all of them alike."""
    for fn in fns.values():
        jax.block_until_ready(fn())
    times = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            jax.block_until_ready(fn())
            times[name].append(time.perf_counter() - t0)
    return {name: (1e3 * min(t), 1e3 * float(np.median(t))) for name, t in times.items()}


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
    ours_bytes = looped_bytes(par.lower(*args).compile().as_text())

    out_sh = tuple(par._named(l) for l in par.partitioned.result_layouts)
    flat_step = lambda *xs: tuple(jax.tree_util.tree_leaves(step(*jax.tree_util.tree_unflatten(tree, xs))))  # noqa: E731
    t0 = time.perf_counter()
    auto = jax.jit(flat_step, in_shardings=tuple(par._arg_named), out_shardings=out_sh)
    jax.block_until_ready(auto(*placed))
    xla_first_s = time.perf_counter() - t0
    xla = compiled_report(auto.lower(*placed).compile().as_text())
    ms = interleaved_ms({"ours": lambda: par(*placed_args), "shard_map alone": lambda: par._run(*placed),
                         "jax.jit": lambda: auto(*placed)}, repeat)
    times = ", ".join(f"{k} {lo:.3f}/{med:.3f}" for k, (lo, med) in ms.items())
    return (f"{case}: bytes/step ours {ours_bytes:.0f} (plan {par.plan.bytes_per_device:.0f}) XLA "
            f"{xla['looped_bytes']:.0f}; ms/step min/median: {times}; first call ours {first_s:.2f} s, "
            f"jax.jit {xla_first_s:.2f} s")


if __name__ == "__main__":
    argv = sys.argv[1:]
    repeat = 50
    if "--repeat" in argv:
        i = argv.index("--repeat")
        repeat = int(argv[i + 1])
        del argv[i:i + 2]
    for case in argv or ["rnn-2x2", "rnn-2x2x2", "stack-2x2", "stack-2x2x2"]:
        print(bench(case, repeat), flush=True)
