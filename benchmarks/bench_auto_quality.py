"""spmdkit.auto plan quality on this machine (prints; nothing is asserted).

    python benchmarks/bench_auto_quality.py [CASE ...]     # default: the cases below

Per case ("MODEL-MESH-OPTIMIZER", e.g. gpt-2x2-adamw, encoder-2x4-sgd): the candidate plans

- auto:      parallelize(strategy="auto") with only the batch placed, the default cost model
             (fixed CPU figures on CPU devices, auto/calibrate.py)
- auto-cal:  the same searched with the model calibrated on this mesh now
- hand:      the examples' hand-written placements (Megatron over mp, fsdp), propagated
- dp:        params and optimizer state replicated, the batch split (propagated)
- xla:       XLA's own partitioning of the hand placements (jax.jit with their shardings)

and per plan: bytes per device per step, the calibrated model's cost of the partitioned plan
(auto/evaluate.py; none for XLA's), and the measured step time (median of interleaved rounds:
each round calls every plan once, so load changes hit all plans alike). Then whether the
ranking by modeled cost matches the measured one (Kendall's tau over the plans the model prices).
Also: the calibration, loss and gradient differences from one device for the auto plans.

    python benchmarks/bench_auto_quality.py --meshes gpt-adamw gptwide-adamw [--max-ndim 3]

searches the mesh shapes of 8 devices (auto/meshes.py) with the batch over dim 0.
"""
from __future__ import annotations

import os
import sys
import time

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import numpy as np  # noqa: E402

CASES = ("mlp-2x2-sgd", "mlp-2x2x2-adamw", "gpt-2x2-adamw", "encoder-2x4-sgd")


def interleaved_ms(fns: dict, args, rounds: int) -> dict:
    for f in fns.values():
        jax.block_until_ready(f(*args))
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            t = time.perf_counter()
            jax.block_until_ready(f(*args))
            times[k].append((time.perf_counter() - t) * 1e3)
    return {k: float(np.median(v)) for k, v in times.items()}


def kendall_tau(a: list, b: list) -> float:
    pairs = [(i, j) for i in range(len(a)) for j in range(i + 1, len(a))]
    if not pairs:
        return 1.0
    agree = sum(np.sign(a[i] - a[j]) * np.sign(b[i] - b[j]) for i, j in pairs)
    return float(agree / len(pairs))


def run(case: str, rounds: int = 40, cal_search: bool = True) -> dict:
    from spmdkit.auto import set_default_cost
    from spmdkit.auto.calibrate import calibrate, describe
    from spmdkit.auto.evaluate import modeled_cost
    from spmdkit.distributed import Replicate, parallelize
    from spmdkit.distributed.compare import xla_auto_report
    from spmdkit.examples.optim import OPTIMIZERS, state_placements
    from spmdkit.examples.setups import SETUPS, mesh_of
    from spmdkit.examples.train import LR, _named_tree, make_step, max_abs

    model, mesh_key, optimizer = case.split("-")[:3]
    setup, mesh = SETUPS[model](mesh_key), mesh_of(mesh_key)
    init, update = OPTIMIZERS[optimizer](LR[optimizer])
    step = make_step(setup.loss_fn, update)
    args = (setup.params, init(setup.params), *setup.batch)
    bp = setup.batch_placements
    calibrated, cal = calibrate(mesh)
    print(f"{case}: calibration {describe(cal)}", flush=True)

    plans, searches = {}, {}
    for name, cost in (("auto", None), ("auto-cal", calibrated))[:2 if cal_search else 1]:
        set_default_cost(cost)
        t = time.perf_counter()
        plans[name] = parallelize(step, mesh, (None, None, bp, bp), strategy="auto", example_args=args)
        searches[name] = (time.perf_counter() - t, plans[name].search_report)
    set_default_cost(None)
    pp = setup.param_placements
    sp = state_placements(optimizer, pp)
    plans["hand"] = parallelize(step, mesh, (pp, sp, bp, bp), out_placements=(pp, sp, None, pp), example_args=args)
    rep = {k: [Replicate()] * mesh.ndim for k in setup.params}
    rs = state_placements(optimizer, rep)
    plans["dp"] = parallelize(step, mesh, (rep, rs, bp, bp), out_placements=(rep, rs, None, rep), example_args=args)
    in_sh = _named_tree(mesh, (pp, sp, bp, bp), args, "in_placements")
    out_sh = _named_tree(mesh, (pp, sp, None, pp), jax.eval_shape(step, *args), "out_placements")
    xla, xla_fn = xla_auto_report(step, args, in_sh, out_sh)

    ms = interleaved_ms({**plans, "xla": xla_fn}, args, rounds)
    modeled = {k: modeled_cost(p.partitioned, calibrated) for k, p in plans.items()}
    want = jax.jit(step)(*args)
    for name in searches:
        took, r = searches[name]
        out = plans[name](*args)
        split = sorted(k.split("'")[1] for k, v in plans[name].in_shardings.items()
                       if k.startswith("args[0]") and "Shard" in repr(v))
        print(f"  {name}: search {r.search_s:.2f} s (trace + search {took:.2f} s), HiGHS {r.status}, gap {r.gap:.2%}; "
              f"loss diff {abs(float(out[2]) - float(want[2])):.1e}, grad diff "
              f"{max(max_abs(out[3][k], want[3][k]) for k in want[3]):.1e}; params split: "
              f"{', '.join(split) if split else 'none'}")
    print(f"  {'plan':9s} {'bytes/dev':>10s} {'modeled us':>11s} {'(compute':>9s} {'comm)':>8s} {'measured ms':>12s}")
    for k in plans:
        m = modeled[k]
        print(f"  {k:9s} {plans[k].plan.bytes_per_device:10.0f} {m.total_us:11.1f} {m.compute_us:9.1f} "
              f"{m.comm_us:8.1f} {ms[k]:12.2f}")
    print(f"  {'xla':9s} {xla['bytes']:10.0f} {'-':>11s} {'':9s} {'':8s} {ms['xla']:12.2f}")
    # a candidate that partitions like another (same collectives, bytes and modeled cost) is the
    # same plan: ranked once
    def key(k):
        return (plans[k].plan.bytes_per_device, tuple(sorted(plans[k].plan.collectives.items())),
                round(modeled[k].total_us, 6))
    names = [k for i, k in enumerate(plans) if all(key(k) != key(j) for j in list(plans)[:i])]
    tau = kendall_tau([modeled[k].total_us for k in names], [ms[k] for k in names])
    by_model = sorted(names, key=lambda k: modeled[k].total_us)
    by_time = sorted(names, key=lambda k: ms[k])
    same = [k for k in plans if k not in names]
    print(f"  ranking by model {by_model}, by measured time {by_time}; Kendall tau {tau:+.2f}"
          + (f" ({', '.join(same)}: same placements as a plan above, not ranked)" if same else ""), flush=True)
    return {"case": case, "ms": ms, "modeled": {k: m.total_us for k, m in modeled.items()}, "tau": tau}


def run_meshes(case: str, max_ndim: int) -> None:
    """search_meshes over the shapes of 8 devices, the batch over dim 0 ("MODEL-OPTIMIZER")."""
    from spmdkit.auto import search_meshes
    from spmdkit.distributed import Replicate, Shard
    from spmdkit.examples.optim import OPTIMIZERS
    from spmdkit.examples.setups import SETUPS
    from spmdkit.examples.train import LR, make_step
    model, optimizer = case.split("-")[:2]
    setup = SETUPS[model]("2x2")
    init, update = OPTIMIZERS[optimizer](LR[optimizer])
    step = make_step(setup.loss_fn, update)
    args = (setup.params, init(setup.params), *setup.batch)
    batch = lambda mesh: [Shard(0)] + [Replicate()] * (mesh.ndim - 1)  # noqa: E731
    found = search_meshes(step, 8, lambda mesh: (None, None, batch(mesh), batch(mesh)), args, max_ndim=max_ndim)
    print(f"{case}: {found}", flush=True)
    ok = [c for c in found.candidates if c.step is not None]
    ms = interleaved_ms({"x".join(map(str, c.shape)): c.step for c in ok}, args, 20)
    by_model = ["x".join(map(str, c.shape)) for c in ok]
    print(f"  measured ms: {', '.join(f'{k} {v:.2f}' for k, v in ms.items())}; ranking by model {by_model}, "
          f"by time {sorted(ms, key=ms.get)}; Kendall tau "
          f"{kendall_tau([c.objective_us for c in ok], [ms[k] for k in by_model]):+.2f}", flush=True)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*", default=list(CASES))
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--skip-cal-search", action="store_true", help="search once (default model) only")
    ap.add_argument("--meshes", action="store_true", help="cases are MODEL-OPTIMIZER: search the mesh shapes of 8")
    ap.add_argument("--max-ndim", type=int, default=2, help="with --meshes: 3 adds 2x2x2 (slow: minutes)")
    a = ap.parse_args()
    for c in a.cases:
        if a.meshes:
            run_meshes(c, a.max_ndim)
        else:
            run(c, a.rounds, not a.skip_cal_search)
