"""Per-call latency from Python of the JAX / StableHLO rules (pattern builders run per call)
next to Paddle-style static rules, and of SpmdRule.factors (off the inference path).

    python benchmarks/bench_jax_rules.py [--calls 20000]
"""
from __future__ import annotations

import argparse
import time

from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core


def spec(mesh, shape, mapping):
    a = TensorDistAttr()
    a.process_mesh = mesh
    a.dims_mapping = mapping
    return DistTensorSpec(shape, a)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20000)
    n = ap.parse_args().calls
    mesh = ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])
    x, y = spec(mesh, [64, 32], [1, 0]), spec(mesh, [32, 48], [0, -1])
    e = spec(mesh, [64, 32], [0, 1])
    ids = spec(mesh, [16, 1], [0, -1])
    calls = {
        "matmul.infer_forward": (core.get_phi_spmd_rule("matmul").infer_forward, (x, y, False, False)),
        "jax.dot_general.infer_forward": (core.get_phi_spmd_rule("jax.dot_general").infer_forward, (x, y, [1], [0])),
        "add.infer_forward": (core.get_phi_spmd_rule("add").infer_forward, (e, e)),
        "jax.add.infer_forward": (core.get_phi_spmd_rule("jax.add").infer_forward, (e, e)),
        "jax.gather.infer_forward": (core.get_phi_spmd_rule("jax.gather").infer_forward,
                                     (e, ids, [1], [0], [0], [1, 32])),
        "jax.reduce_sum.infer_forward": (core.get_phi_spmd_rule("jax.reduce_sum").infer_forward, (e, [1])),
        "matmul.factors": (core.get_phi_spmd_rule("matmul").factors, (x, y, False, False)),
        "jax.dot_general.factors": (core.get_phi_spmd_rule("jax.dot_general").factors, (x, y, [1], [0])),
        "stablehlo.reshape.factors": (core.get_phi_spmd_rule("stablehlo.reshape").factors, (e, [8, 8, 32])),
    }
    for name, (fn, args) in calls.items():
        fn(*args)
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(n // 5):
                fn(*args)
            best = min(best, (time.perf_counter() - t) / (n // 5))
        print(f"{name:34s} {best * 1e6:6.2f} us/call")


if __name__ == "__main__":
    main()
