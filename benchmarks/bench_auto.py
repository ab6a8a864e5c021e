"""spmdkit.auto: search time and plan quality (prints; nothing is asserted).

    python benchmarks/bench_auto.py [--layers 1 12] [--meshes 2x2 2x2x2] [--skip-train] [--search-only]

1. The examples trained with only the batch placed (test/auto/auto_worker.py's rows): bytes per
   device per step and step time of the plan found, of the hand-written placements (propagated)
   and of XLA's partitioning of the hand placements, all in one run; search time and gap; the
   params' placements found.
2. Search time for a GPT training step of N layers (AdamW), batch placed, per mesh: the search
   space (nodes, edges, strategies) before and after the exact reductions, seconds per phase
   (build, costs, reductions, HiGHS), columns of the LP/MILP, status and gap. 18 layers is
   ~10k ops.
3. A wider GPT (d_model 256) with and without a memory limit: which weights the search splits.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test" / "auto"))

import jax  # noqa: E402
import numpy as np  # noqa: E402


def gpt_program(cfg, batch: int, mesh_axes: dict, optimizer: str = "adamw"):
    """A GPT training step traced on shapes only, the batch split over the first mesh axis."""
    from spmdkit.examples.optim import OPTIMIZERS
    from spmdkit.examples.train import make_step
    from spmdkit.ir import import_jax
    from spmdkit.models import gpt
    from spmdkit.sharding import Mesh
    init, update = OPTIMIZERS[optimizer](0.01)
    params = jax.eval_shape(lambda: gpt.init_params(jax.random.PRNGKey(0), cfg))
    state = jax.eval_shape(init, params)
    tokens = jax.ShapeDtypeStruct((batch, cfg.seq), np.int32)
    args = (params, state, tokens, tokens)
    leaves = jax.tree_util.tree_leaves(args)
    first = next(iter(mesh_axes))
    shardings = [None] * (len(leaves) - 2) + [f'#sdy.sharding<@mesh, [{{"{first}"}}, {{}}]>'] * 2
    program = import_jax(make_step(gpt.loss_fn, update), *args, inline_calls=True,
                         meshes={"mesh": Mesh(mesh_axes)}, arg_shardings=shardings)
    labels = [f"args{jax.tree_util.keystr(p)}" for p, _ in jax.tree_util.tree_flatten_with_path(args)[0]]
    outs = [f"out{jax.tree_util.keystr(p)}" for p, _ in
            jax.tree_util.tree_flatten_with_path(jax.eval_shape(make_step(gpt.loss_fn, update), *args))[0]]
    return program, labels, outs


def timed_search(program, labels, outs, memory_limit=None):
    from spmdkit.auto import tie_results
    from spmdkit.auto.cost import build_costs
    from spmdkit.auto.solve import solve
    from spmdkit.auto.strategies import build_space
    ties = tie_results(labels, outs, program)
    pinned = [a.sharding is not None for a in program.main.args]
    t0 = time.perf_counter()
    space = build_space(program, pinned, ties)
    t1 = time.perf_counter()
    costs = build_costs(space)
    t2 = time.perf_counter()
    sol = solve(costs, memory_limit)
    t3 = time.perf_counter()
    return space, costs, sol, {"build_s": t1 - t0, "costs_s": t2 - t1, "solve_s": t3 - t2, "total_s": t3 - t0}


MESHES = {"2x2": {"dp": 2, "mp": 2}, "2x2x2": {"dp": 2, "fsdp": 2, "mp": 2}, "2x4": {"dp": 2, "mp": 4}}


def bench_layers(n_layers: int, mesh: str = "2x2") -> None:
    from spmdkit.models.gpt import GPTConfig
    program, labels, outs = gpt_program(GPTConfig(n_layers=n_layers), 8, MESHES[mesh])
    ops = len(program.main.body.ops)
    space, costs, sol, t = timed_search(program, labels, outs)
    nodes, edges, strategies = sol.reduced
    print(f"GPT step, {n_layers} layer(s), AdamW, {mesh}: {ops} ops; {len(space.nodes)} nodes, {len(space.edges)} edges, "
          f"{sum(len(n.strategies) for n in space.nodes)} strategies -> reduced {nodes} nodes, {edges} edges, "
          f"{strategies} strategies; build {t['build_s']:.2f} s, costs {t['costs_s']:.2f} s, reductions "
          f"{sol.reduce_s:.2f} s, HiGHS {sol.solve_s:.2f} s ({sol.variables} columns), total {t['total_s']:.2f} s; "
          f"{sol.status}, gap {sol.gap:.2%}, objective {sol.objective_us:.6f} us", flush=True)


def bench_wide() -> None:
    from spmdkit.auto import auto_shard, tie_results
    from spmdkit.models.gpt import GPTConfig
    from spmdkit.partition import partition
    cfg = GPTConfig(vocab=512, seq=64, d_model=256, n_heads=8, d_ff=1024)
    for limit in (None, 20e6):   # with activations (auto/memory.py) the least any plan needs is 17.5 MB
        program, labels, outs = gpt_program(cfg, 16, {"dp": 2, "mp": 2})
        report = auto_shard(program, ties=tie_results(labels, outs, program), memory_limit=limit,
                            arg_labels=labels, out_labels=outs)
        plan = partition(program).summary()
        print(f"wide GPT (d_model 256, d_ff 1024, batch 16x64), 2x2, memory limit {limit}: "
              f"search {report.search_s:.2f} s, {report.status}, gap {report.gap:.2%}; modeled {report.objective_us:.1f} us/step, memory "
              f"{report.memory_bytes / 1e6:.2f} MB/device; plan {plan.bytes_per_device:.0f} B/device")
        for label, why in report.params.items():
            if label.startswith("args[0]") and ("w_" in label or "wte" in label):
                print(f"  {label}: {why.split(';')[0]}")


def bench_examples() -> None:
    from auto_worker import run_case
    for case in ("mlp-2x2-sgd", "mlp-2x2x2-adamw", "gpt-2x2-adamw", "gpt-2x2x2-adamw"):
        r = run_case(case, steps=2, reps=7)
        split = {k.split("'")[1]: v for k, v in r["placements"].items() if "Shard" in v}
        print(f"{case}: auto {r['plan_bytes']:.0f} B/device (compiled {r['hlo_bytes']:.0f}), hand "
              f"{r['hand_bytes']:.0f}, XLA of hand {r['xla_bytes']:.0f}; step ms auto {r['auto_ms']:.2f}, hand "
              f"{r['hand_ms']:.2f}, XLA {r['xla_ms']:.2f}; search {r['search_s']:.2f} s (HiGHS {r['solve_s']:.2f} s, "
              f"{r['status']}, gap {r['gap']:.2%}); max loss diff {max(s['loss_diff'] for s in r['steps']):.1e}, "
              f"grad diff {max(s['grad_diff'] for s in r['steps']):.1e}; params split: {split or 'none'}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, nargs="+", default=[1, 12])
    ap.add_argument("--meshes", nargs="+", default=["2x2"], choices=sorted(MESHES))
    ap.add_argument("--skip-train", action="store_true")
    ap.add_argument("--search-only", action="store_true", help="only the search-time section")
    a = ap.parse_args()
    if not (a.skip_train or a.search_only):
        bench_examples()
    for mesh in a.meshes:
        for n in a.layers:
            bench_layers(n, mesh)
    if not a.search_only:
        bench_wide()
