"""The calibrated cost model (auto/calibrate.py) and the evaluator of partitioned plans
(auto/evaluate.py): a 2x2 mesh of virtual CPU devices is calibrated in a child process, the MLP
searched with that model, and the evaluator, applied to the partitioned plan, agrees with the
search's own figures: the same bytes as the plan, communication no more than the search modeled
(the partitioner shares reshards between consumers) and the same compute up to the partitioner's
whole-run elementwise regions. No time is asserted (figures depend on the machine)."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))
from child_process import json_rows, run_child  # noqa: E402

from spmdkit import core  # noqa: E402
from spmdkit.auto import DEFAULT_AUTO_COST  # noqa: E402
from spmdkit.auto.calibrate import CPU_CORE_FLOPS_PER_S, CPU_LINK_PER_CORE, default_cost  # noqa: E402

HERE = Path(__file__).parent
needs_rules = pytest.mark.skipif(not core.contains_spmd_rule("jax.dot_general"), reason="no jax.* rules in this build")


@pytest.fixture(scope="module")
def row():
    proc = run_child([HERE / "auto_misc_worker.py", "calibrate"], timeout=600)
    return json_rows(proc.stdout)[0]


@needs_rules
def test_calibration_measures_every_axis(row):
    assert math.isfinite(row["flops_per_s"]) and row["flops_per_s"] > 1e6
    assert sorted(row["links"]) == ["dp", "mp"]
    for alpha_us, gbytes in row["links"].values():
        assert 0 < alpha_us < 1e6 and 0 < gbytes < 1e4


@needs_rules
def test_evaluator_agrees_with_the_search(row):
    rep, ev = row["report"], row["evaluated"]
    assert ev["unpriced"] == 0
    assert ev["bytes"] == pytest.approx(row["plan_bytes"])
    assert ev["comm_us"] <= rep["comm_us"] + 1e-9
    assert rep["compute_us"] * (1 - 1e-9) <= ev["compute_us"] <= 1.1 * rep["compute_us"]


def test_default_cost_scales_with_devices_per_core():
    two = default_cost({"dp": 2, "mp": 2}, "cpu", n_cores=2)
    four = default_cost({"dp": 2, "mp": 4}, "cpu", n_cores=2)
    assert two.flops_per_s == pytest.approx(CPU_CORE_FLOPS_PER_S / 2)
    assert four.flops_per_s == pytest.approx(CPU_CORE_FLOPS_PER_S / 4)
    links = dict(four.reshard.links)
    assert sorted(links) == ["dp", "mp"]
    assert links["mp"].alpha_us == pytest.approx(4 * CPU_LINK_PER_CORE.alpha_us)
    assert links["mp"].gbytes_per_s == pytest.approx(CPU_LINK_PER_CORE.gbytes_per_s / 4)
    # an axis of size 1 has no link of its own; devices elsewhere keep the GPU-like defaults
    assert sorted(dict(default_cost({"dp": 1, "mp": 8}, "cpu", n_cores=8).reshard.links)) == ["mp"]
    assert default_cost({"dp": 2, "mp": 2}, "gpu") is DEFAULT_AUTO_COST
