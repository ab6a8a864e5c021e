"""benchmarks/gpu_check.py runs on a machine without a GPU too: it says so, runs every check on
one CPU device (parallelize against jax.jit, float32 and bf16) and exits 0."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from child_process import json_rows, run_child  # noqa: E402

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "gpu_check.py"


def test_gpu_check_on_a_cpu_only_machine():
    proc = run_child([SCRIPT, "--steps", "3", "--repeats", "1", "--json"], timeout=300, JAX_PLATFORMS="cpu")
    assert "no GPU: running every check on one CPU device" in proc.stdout
    (row,) = json_rows(proc.stdout)
    assert row["gpu"] is False and row["gpu_plus_cpu_mesh"]["refused"] == "no GPU"
    f32, bf16 = row["one_device_mesh"], row["bf16"]
    assert f32["ok"] and f32["max_rel_loss_diff"] <= 1e-5 and f32["max_grad_diff_step0"] <= 1e-5
    assert bf16["ok"] and 0 < bf16["max_rel_loss_diff"] <= 1e-2
    assert row["timings"]["matmul_infer_forward_us"] > 0 and row["timings"]["gpt_step_ops"] > 100
