"""Issue 10's check: MLP and GPT-block training steps, annotated on inputs and params, completed,
partitioned by us and run inside jax.shard_map on 8 virtual CPU devices (2x2 and 2x2x2 meshes) for
5 SGD steps, against a single-device run; the compiled program's collectives against our plan;
our bytes beside XLA's own partitioning of the same step (jax.jit with NamedSharding).

The runs happen in one subprocess (partition_worker.py): XLA_FLAGS must be set before JAX starts,
and other test modules of this pytest process import JAX first.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from child_process import json_rows, run_child
from spmdkit import _core

HERE = Path(__file__).parent
CASES = ["mlp-2x2", "gpt-2x2", "mlp-2x2x2", "gpt-2x2x2"]
# the same steps with shardings from the whole-program propagation engine (then completion for
# what it leaves): the partitioner does not care who annotated the values
HAS_PROPAGATION = hasattr(_core, "PropagationGraph")
PROPAGATED = ["mlp-2x2x2@propagate", "gpt-2x2x2@propagate"]
TOL = 1e-5


@pytest.fixture(scope="module")
def results():
    proc = run_child([HERE / "partition_worker.py", *CASES, "iota-2x2", *(PROPAGATED if HAS_PROPAGATION else [])],
                     timeout=900)
    rows = json_rows(proc.stdout)
    for row in rows:  # the numbers the report quotes
        if "diffs" not in row:
            continue
        print(f"{row['case']}: plan {row['plan_counts']} {row['plan_bytes']:.0f} B, "
              f"XLA {row['xla_counts']} {row['xla_bytes']:.0f} B, ours {row['ours_ms']:.2f} ms/step, "
              f"XLA {row['xla_ms']:.2f} ms/step")
    return {row["case"]: row for row in rows}


@pytest.mark.parametrize("case", CASES)
def test_loss_grads_and_params_match_one_device(results, case):
    row = results[case]
    assert len(row["losses"]) == 5 and row["losses"][-1] < row["losses"][0]  # it trains
    assert row["diffs"]["loss"] <= TOL, row["diffs"]
    assert row["diffs"]["grads"] <= TOL, row["diffs"]
    assert row["diffs"]["params"] <= TOL, row["diffs"]


@pytest.mark.parametrize("case", CASES)
def test_compiled_collectives_are_the_plan(results, case):
    row = results[case]
    assert row["hlo_counts"] == row["plan_counts"]
    assert row["hlo_bytes"] == pytest.approx(row["plan_bytes"])
    assert sum(row["plan_counts"].values()) > 0  # the examples need communication


@pytest.mark.parametrize("case", CASES)
def test_bytes_beside_xla_auto_partitioning(results, case):
    row = results[case]
    assert row["xla_bytes"] > 0
    assert row["plan_bytes"] <= row["xla_bytes"]


def test_split_iota_runs_locally_with_offsets(results):
    """Iotas whose consumers all want them split are computed split (each shard offset by its
    block's first index), so broadcasting them against a split operand needs no collective."""
    row = results["iota-2x2"]
    assert row["iota_layouts"] == ['[{"x"}]', '[{"y"}]']
    assert sum(row["plan_counts"].values()) == 0
    assert row["max_diff"] == 0.0


@pytest.mark.skipif(not HAS_PROPAGATION, reason="this build has no propagation engine")
@pytest.mark.parametrize("case", PROPAGATED)
def test_shardings_from_the_propagation_engine(results, case):
    row = results[case]
    assert max(row["diffs"][k] for k in ("loss", "grads", "params")) <= TOL, row["diffs"]
    assert row["hlo_counts"] == row["plan_counts"]
    assert row["plan_bytes"] <= row["xla_bytes"]
