"""Plan quality with only the batch placed, beyond the MLP (test_auto_train.py): the GPT example on
2x2 and 2x2x2 with AdamW and the checks' own 4-layer encoder (spmdkit.models.encoder) on a 2x4 mesh, in a
child process with 8 virtual CPU devices, searched with the default CPU cost model.

- one training step's loss and every gradient equal one device's within 1e-5;
- the compiled program runs exactly the partitioned plan's collectives and bytes;
- it moves no more bytes per device than the hand-written Megatron placements (propagated) nor
  XLA's partitioning of them; the state comes back in the layout it went in.

And the memory limit with activations (auto/memory.py): the MLP with AdamW and a limit one byte
below its replicated params' and optimizer state's bytes: the plan splits them, and the compiled
program's arguments, outputs and temporaries per device fit the limit.
(Step times are the benchmark's: benchmarks/bench_auto_quality.py.)"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))
from child_process import json_rows, run_child  # noqa: E402

from spmdkit import core  # noqa: E402

pytestmark = pytest.mark.skipif(not core.contains_spmd_rule("jax.dot_general"), reason="no jax.* rules in this build")
HERE = Path(__file__).parent
CASES = ["gpt-2x2-adamw", "gpt-2x2x2-adamw", "encoder-2x4-sgd", "mlp-2x2-adamw-memrep"]
TOL = 1e-5


@pytest.fixture(scope="module")
def rows():
    proc = run_child([HERE / "auto_worker.py", "--steps", "1", *CASES], timeout=900, AUTO_WORKER_REPS="0")
    return {r["case"]: r for r in json_rows(proc.stdout)}


@pytest.mark.parametrize("case", CASES)
def test_step_equals_one_device_and_compiled_is_the_plan(rows, case):
    row = rows[case]
    for s in row["steps"]:
        assert s["loss_diff"] <= TOL and s["grad_diff"] <= TOL and s["param_diff"] <= TOL, s
    assert row["state_moved"] == []
    assert row["hlo_counts"] == row["plan_counts"]
    assert row["hlo_bytes"] == pytest.approx(row["plan_bytes"])
    assert row["plan_bytes"] <= row["modeled_bytes"] + 1e-9


@pytest.mark.parametrize("case", CASES[:3])
def test_no_more_bytes_than_hand_or_xla(rows, case):
    row = rows[case]
    assert row["status"] == "Optimal" and row["gap"] <= 1e-9
    assert row["plan_bytes"] <= row["hand_bytes"] and row["plan_bytes"] <= row["xla_bytes"], row


def test_memory_limit_below_replicated_state_fits_compiled(rows):
    row = rows["mlp-2x2-adamw-memrep"]
    assert row["memory_limit"] == row["state_bytes"] - 1
    assert row["modeled_memory"] <= row["memory_limit"]
    assert any("Shard" in p for p in row["placements"].values()), row["placements"]
    m = row["compiled_memory"]
    peak = m["argument_size_in_bytes"] + m["output_size_in_bytes"] + m["temp_size_in_bytes"] - m["alias_size_in_bytes"]
    assert peak <= row["memory_limit"], m
