"""Per-call latency of rule inference from Python: spmdkit against PaddlePaddle 3.3.1, same run.

    python benchmarks/bench_vs_paddle.py [--calls 2000] [--repeats 25]

Each case builds its specs once, then times blocks of calls, spmdkit's and Paddle's blocks in
turn (so both see the same machine state), timed in this thread's CPU time (time that other
processes take on a shared machine is not counted); the table gives the median microseconds per call over
the blocks and Paddle's time divided by spmdkit's, then the geometric mean over the cases of
issue 15's target (matmul, add with broadcast, reshape, layer_norm, softmax, concat, matmul
reverse: >= 10x, each >= 8x).
"""
from __future__ import annotations

import argparse
import statistics
import time


def _spmdkit_api():
    from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core
    return core, ProcessMesh, TensorDistAttr, DistTensorSpec


def _paddle_api():
    import warnings
    warnings.filterwarnings("ignore")
    import paddle  # noqa: F401
    from paddle.distributed import ProcessMesh
    from paddle.distributed.auto_parallel.static.dist_attribute import TensorDistAttr
    from paddle.framework import core
    return core, ProcessMesh, TensorDistAttr, core.DistTensorSpec


def cases(api):
    core, ProcessMesh, TensorDistAttr, DistTensorSpec = api
    mesh = ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])

    def spec(shape, mapping):
        a = TensorDistAttr()
        a.process_mesh = mesh
        a.dims_mapping = mapping
        return DistTensorSpec(shape, a)

    rule = core.get_phi_spmd_rule
    x, y = spec([64, 32], [1, 0]), spec([32, 48], [0, -1])
    out = spec([64, 48], [1, 0])
    a3, b2 = spec([4, 8, 16], [0, -1, -1]), spec([8, 16], [-1, 1])
    r3 = spec([6, 12, 48], [0, -1, 1])
    ln_x, ln_s, ln_b = spec([8, 16, 32], [0, 1, -1]), spec([32], [-1]), spec([32], [-1])
    sm = spec([8, 16, 32], [0, -1, 1])
    cat = [spec([8, 16, 32], [0, -1, 1]), spec([8, 24, 32], [-1, -1, 1]), spec([8, 8, 32], [0, -1, -1])]
    return {
        "matmul": (rule("matmul").infer_forward, (x, y, False, False)),
        "add": (rule("add").infer_forward, (a3, b2)),
        "reshape": (rule("reshape").infer_forward, (r3, [72, 6, 8])),
        "layer_norm": (rule("layer_norm").infer_forward, (ln_x, ln_s, ln_b, 1e-5, 2)),
        "softmax": (rule("softmax").infer_forward, (sm, -1)),
        "concat": (rule("concat").infer_forward, (cat, 1)),
        "matmul reverse": (rule("matmul").infer_backward, (x, y, out, False, False)),
        "relu": (rule("relu").infer_forward, (sm,)),
    }


TARGET = ("matmul", "add", "reshape", "layer_norm", "softmax", "concat", "matmul reverse")


def _block(fn, args, calls: int) -> float:
    # CPU time of this thread: on a shared machine, time other processes take is not counted
    t0 = time.thread_time_ns()
    for _ in range(calls):
        fn(*args)
    return (time.thread_time_ns() - t0) / calls / 1000.0


def measure(pairs, calls: int, repeats: int) -> list[float]:
    """Median us per call of each (fn, args), their blocks interleaved."""
    for fn, args in pairs:
        for _ in range(200):
            fn(*args)
    times = [[] for _ in pairs]
    for _ in range(repeats):
        for k, (fn, args) in enumerate(pairs):
            times[k].append(_block(fn, args, calls))
    return [statistics.median(t) for t in times]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=25)
    args = ap.parse_args(argv)
    ours = cases(_spmdkit_api())
    try:
        theirs = cases(_paddle_api())
    except ImportError:
        theirs = {}
        print("paddlepaddle is not installed: spmdkit timings only")
    print(f"{'call':<16}{'spmdkit us':>12}{'paddle us':>12}{'ratio':>8}")
    ratios = {}
    for name, (fn, a) in ours.items():
        if name in theirs:
            t_ours, t_theirs = measure([(fn, a), theirs[name]], args.calls, args.repeats)
            ratios[name] = t_theirs / t_ours
            print(f"{name:<16}{t_ours:>12.2f}{t_theirs:>12.2f}{t_theirs / t_ours:>7.1f}x")
        else:
            print(f"{name:<16}{measure([(fn, a)], args.calls, args.repeats)[0]:>12.2f}")
    target = [ratios[n] for n in TARGET if n in ratios]
    if target:
        worst = min((ratios[n], n) for n in TARGET if n in ratios)
        print(f"geometric mean over {', '.join(TARGET)}: {statistics.geometric_mean(target):.1f}x "
              f"(min {worst[0]:.1f}x, {worst[1]}; target >= 10x, each >= 8x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
