"""The GPT example on two processes (jax.distributed, CPU gloo collectives, the coordinator on
127.0.0.1 only), 2 virtual devices each, a global 2x2 dp x mp mesh: loss and every gradient equal
to one device's within 1e-5 on both processes; the launcher kills both after 150 s."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from child_process import child_env  # noqa: E402
from dist_support import has_jax_rules, has_propagation  # noqa: E402


@pytest.mark.skipif(not has_jax_rules(), reason="this build of spmdkit._core has no jax.* rules")
def test_gpt_on_two_processes_matches_one_device():
    from spmdkit.examples.two_process import launch
    strategy = "propagate" if has_propagation() else "complete"
    rows = launch(steps=5, optimizer="sgd", strategy=strategy, timeout=150, env=child_env())
    assert sorted(r["process"] for r in rows) == [0, 1]
    for row in rows:
        assert row["returncode"] == 0, row["stderr"][-3000:]
        assert row["processes"] == 2 and row["devices"] == 4 and row["local_devices"] == 2
        assert len(row["steps"]) == 5
        for s in row["steps"]:
            assert s["loss_diff"] <= 1e-5 and max(s["grad_diff"].values()) <= 1e-5
        assert row["hlo"]["counts"] == row["plan"]["counts"]
    assert rows[0]["steps"][-1]["loss"] == rows[1]["steps"][-1]["loss"]
