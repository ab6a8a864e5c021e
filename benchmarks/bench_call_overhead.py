"""Per-call Python overhead of a parallelized step: `step(*args)` against the jitted shard_map it
runs (`step._run`) called directly with the same, already placed, arguments; and `jax.jit` of the
step with the same shardings. A tiny step (a few small arrays) so that the wrapper is all there
is to see. Prints microseconds per call (median of several rounds).

Running the step on virtual CPU devices costs far more (and varies more) than the wrapper, so
the wrapper is also timed alone: `step(*args)` with its jitted function replaced by one that
returns the results at once, minus that function called directly.

    python benchmarks/bench_call_overhead.py [--calls 2000] [--rounds 7]
"""
import argparse
import os
import statistics
import time

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from spmdkit.distributed import ProcessMesh, Replicate, Shard, parallelize  # noqa: E402


def tiny_step(params, x):
    h = jnp.tanh(x @ params["w"] + params["b"])
    return {"w": params["w"] * 0.99, "b": params["b"] * 0.99}, h.sum()


def per_call_us(fns: dict, calls: int, rounds: int) -> dict:
    """{name: median us per call} of fns {name: (fn, args)}, timed in turns (round-robin), so
    that a busy machine slows them alike."""
    times: dict = {name: [] for name in fns}
    for fn, args in fns.values():
        jax.block_until_ready(fn(*args))
    for _ in range(rounds):
        for name, (fn, args) in fns.items():
            t = time.perf_counter()
            for _ in range(calls):
                out = fn(*args)
            jax.block_until_ready(out)
            times[name].append((time.perf_counter() - t) / calls * 1e6)
    return {name: statistics.median(t) for name, t in times.items()}


def wide_step(params, x):
    """Many small leaves (an optimizer state's worth), a trivial body."""
    return jax.tree_util.tree_map(lambda p: p * 0.99, params), x.sum()


def wrapper_us(step, example, calls: int, rounds: int) -> float:
    """The wrapper's own time per call: `step(*args)` with its jitted function replaced by one
    returning the results at once, minus that function called directly."""
    leaves, treedef = jax.tree_util.tree_flatten(example)
    placed = step._place(leaves)
    args = jax.tree_util.tree_unflatten(treedef, placed)
    results = step._run(*placed)
    instant = lambda *_: results  # noqa: E731
    step._run = instant
    t = per_call_us({"wrapped": (step, args), "bare": (instant, placed)}, calls, rounds)
    return t["wrapped"] - t["bare"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    a = parser.parse_args()
    mesh = ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
    pl = {"w": [Replicate(), Shard(1)], "b": [Replicate(), Shard(0)]}
    params = {"w": np.ones((8, 8), np.float32), "b": np.zeros(8, np.float32)}
    x = np.ones((8, 8), np.float32)
    step = parallelize(tiny_step, mesh, (pl, [Shard(0), Replicate()]), out_placements=(pl, None),
                       example_args=(params, x))
    placed = step._place(jax.tree_util.tree_leaves((params, x)))
    args = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure((params, x)), placed)
    assert step.moved_args(*args) == []
    jitted = jax.jit(tiny_step, in_shardings=jax.tree_util.tree_map(lambda v: v.sharding, args))
    t = per_call_us({"ours": (step, args), "direct": (step._run, placed), "xla": (jitted, args)}, a.calls, a.rounds)
    print(f"device: {jax.devices()[0].platform} x{len(jax.devices())}, mesh 2x2, {len(placed)} argument leaves")
    print(f"step(*args)                      {t['ours']:8.1f} us/call")
    print(f"its jitted shard_map, direct     {t['direct']:8.1f} us/call")
    print(f"jax.jit, same shardings          {t['xla']:8.1f} us/call")
    print(f"end-to-end difference            {t['ours'] - t['direct']:8.1f} us")
    print(f"wrapper alone (its Python work)  {wrapper_us(step, (params, x), a.calls * 10, a.rounds):8.1f} us/call")
    wide = {f"p{i}": np.ones((4, 4), np.float32) for i in range(64)}
    wide_pl = {k: [Replicate(), Shard(i % 2)] for i, k in enumerate(wide)}
    wstep = parallelize(wide_step, mesh, (wide_pl, [Shard(0), Replicate()]), out_placements=(wide_pl, None),
                        example_args=(wide, x))
    out_params, _ = wstep(wide, x)  # a previous step's outputs as the next arguments
    assert wstep.moved_args(out_params, x) == ["args[1]"]
    x_placed = wstep._place(jax.tree_util.tree_leaves((out_params, x)))[-1]
    wide_us = wrapper_us(wstep, (out_params, x_placed), a.calls * 10, a.rounds)
    print(f"wrapper alone, 65 leaves         {wide_us:8.1f} us/call")


if __name__ == "__main__":
    main()
