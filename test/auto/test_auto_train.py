"""`parallelize(..., strategy="auto")` with only the batch placed trains the MLP example on a 2x2
mesh of virtual CPU devices (a child process, as test/distributed does): loss, gradients and
params equal one device's within 1e-5; the compiled program runs exactly the partitioned plan's
collectives; it moves no more bytes than the hand-written placements of spmdkit.examples nor
XLA's partitioning of them; the state comes back in the layout it went in. With a memory limit
below the modeled footprint of the free plan the plan shards params, and the compiled program
(arguments, outputs and temporaries, which parallelize checks itself) fits the limit per device."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))
from child_process import json_rows, run_child  # noqa: E402

from spmdkit import core  # noqa: E402

pytestmark = pytest.mark.skipif(not core.contains_spmd_rule("jax.dot_general"), reason="no jax.* rules in this build")
HERE = Path(__file__).parent
CASES = ["mlp-2x2-sgd", "mlp-2x2-sgd-mem7"]
TOL = 1e-5


@pytest.fixture(scope="module")
def rows():
    proc = run_child([HERE / "auto_worker.py", *CASES], timeout=600, AUTO_WORKER_REPS="0")
    return {r["case"]: r for r in json_rows(proc.stdout)}


@pytest.mark.parametrize("case", CASES)
def test_trains_like_one_device(rows, case):
    row = rows[case]
    assert len(row["steps"]) == 3
    for s in row["steps"]:
        assert s["loss_diff"] <= TOL and s["grad_diff"] <= TOL and s["param_diff"] <= TOL, s
    assert row["state_moved"] == []
    assert row["status"] == "Optimal" and row["gap"] <= 1e-9


@pytest.mark.parametrize("case", CASES)
def test_compiled_collectives_are_the_plan_and_no_more_bytes_than_hand_or_xla(rows, case):
    row = rows[case]
    assert row["hlo_counts"] == row["plan_counts"]
    assert row["hlo_bytes"] == pytest.approx(row["plan_bytes"])
    # the model charges each consumer its own reshard; the partitioner shares them
    assert row["plan_bytes"] <= row["modeled_bytes"] + 1e-9
    if case == "mlp-2x2-sgd":
        assert row["plan_bytes"] <= row["hand_bytes"] and row["plan_bytes"] <= row["xla_bytes"]


def test_memory_limit_shards_params(rows):
    free, limited = rows["mlp-2x2-sgd"], rows["mlp-2x2-sgd-mem7"]
    assert free["modeled_memory"] > limited["memory_limit"] >= limited["modeled_memory"]
    assert any("Shard" in p for p in limited["placements"].values()), limited["placements"]
    compiled = limited["compiled_memory"]
    peak = (compiled["argument_size_in_bytes"] + compiled["output_size_in_bytes"] + compiled["temp_size_in_bytes"]
            - compiled["alias_size_in_bytes"])
    assert peak <= limited["memory_limit"], compiled
