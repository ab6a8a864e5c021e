"""Issue 10's checks on the examples: the MLP and the GPT block trained 5 steps with
spmdkit.distributed.parallelize on dp x mp (2x2) and dp x mp x fsdp (2x2x2) meshes of virtual CPU devices,
with SGD and AdamW: loss and every gradient within 1e-5 of one device, the compiled program's
collectives equal to our plan, and our bytes beside XLA's own partitioning of the same step. Plus
the user API on 4 devices (shard_tensor, reshard, shard_map, visualize) and the `spmdkit train`
command. Every run is a subprocess with a timeout (JAX's device count is fixed at start)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from child_process import run_child  # noqa: E402
from dist_support import has_jax_rules, has_propagation, run_worker  # noqa: E402

HERE = Path(__file__).parent
EXAMPLES = ["mlp-2x2-sgd", "gpt-2x2-adamw", "mlp-2x2x2-adamw", "gpt-2x2x2-sgd", "gpt-2x2x2-adamw"]
STRATEGIES = ["propagate", "complete"]
TOL = 1e-5
# where our plan moves more bytes than XLA's partitioner, and why (reported, not hidden)
_COMPLETION = ("completion decides each op from its operands only: the fsdp split of a weight's other dim is "
               "gathered again after the qkv split and the heads' reshapes")
MORE_BYTES_THAN_XLA = {
    ("gpt-2x2x2-sgd", "complete"): _COMPLETION + " (100838 B vs XLA's 84454 B)",
    ("gpt-2x2x2-adamw", "complete"): _COMPLETION + " (99878 B vs XLA's 84454 B)",
}

pytestmark = pytest.mark.skipif(not has_jax_rules(), reason="this build of spmdkit._core has no jax.* rules")


def _available(strategy):
    return strategy == "complete" or has_propagation()


@pytest.fixture(scope="module")
def rows():
    cases = [f"{e}-{s}" for s in STRATEGIES if _available(s) for e in EXAMPLES] + ["api"]
    return {r["case"]: r for r in run_worker(HERE / "dist_worker.py", cases, timeout=900)}


def _row(rows, example, strategy):
    if not _available(strategy):
        pytest.skip("this build of spmdkit._core has no propagation engine")
    return rows[f"{example}-{strategy}"]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("example", EXAMPLES)
def test_loss_and_every_gradient_match_one_device(rows, example, strategy):
    row = _row(rows, example, strategy)
    steps = row["steps"]
    assert len(steps) == 5 and steps[-1]["ref_loss"] < steps[0]["ref_loss"]  # it trains
    for s in steps:
        assert s["loss_diff"] <= TOL, s
        assert len(s["grad_diff"]) >= 4 and max(s["grad_diff"].values()) <= TOL, s["grad_diff"]
        if example.endswith("-sgd"):
            assert s["param_diff"] <= TOL


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("example", EXAMPLES)
def test_compiled_collectives_are_the_plan(rows, example, strategy):
    row = _row(rows, example, strategy)
    assert row["hlo"]["counts"] == row["plan"]["counts"]
    assert row["hlo"]["bytes"] == pytest.approx(row["plan"]["bytes"])
    assert sum(row["plan"]["counts"].values()) > 0   # dp x mp needs communication


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("example", EXAMPLES)
def test_bytes_not_more_than_xla_auto_partitioning(rows, example, strategy, request):
    row = _row(rows, example, strategy)
    print(f"{example} {strategy}: ours {row['plan']['counts']} {row['plan']['bytes']:.0f} B; "
          f"XLA {row['xla']['counts']} {row['xla']['bytes']:.0f} B")
    reason = MORE_BYTES_THAN_XLA.get((example, strategy))
    if reason:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
    assert row["xla"]["bytes"] > 0
    assert row["plan"]["bytes"] <= row["xla"]["bytes"]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("example", EXAMPLES)
def test_state_comes_back_in_the_layout_it_went_in(rows, example, strategy):
    # otherwise each step starts by resharding its own state: collectives outside the plan's bytes
    row = _row(rows, example, strategy)
    assert row["state_moved"] == []
    assert row["checks"]["state kept its layout between steps"]


def test_user_api_on_four_devices(rows):
    row = rows["api"]
    assert row["shard_tensor_equal"] and row["shard_tensor_local_shape"] == [4, 6]
    assert row["reshard_equal"] and row["reshard_local_shape"] == [8, 3]
    assert row["placements_of"] == "[Replicate(), Shard(1)]"
    assert row["reshard_kinds"] == ["slice", "all_gather"]   # slice the new split first: gather half
    # onto another mesh (the same devices in another order, one dim): JAX's transfer, exact
    assert row["across_equal"] and row["across_placements"] == "[Shard(0)]"
    assert row["across_device_order"] == [3, 2, 1, 0]
    assert row["col_sums_diff"] == 0.0
    assert row["row_owner"] == [0.0] * 4 + [1.0] * 4
    # x [8, 6] split on columns over mp: devices 0 and 2 (mp index 0) hold the left half
    assert row["picture"].splitlines()[2] == "| 0 2 | 1 3 |"
    assert max(row["layer_diffs"]) <= 1e-6   # the rows' tanh(x @ w), for 8 and then 4 rows
    assert row["layer_out"] == "{'out[0]': [Shard(0), Shard(1)]}"   # propagated: rows over dp, columns over mp


def test_train_command_runs_an_example_and_prints_the_report():
    proc = run_child(["-m", "spmdkit.examples.mlp", "--mesh", "2x2", "--steps", "5", "--optimizer", "sgd",
                      "--strategy", "complete", "--no-xla"], timeout=300)
    out = proc.stdout
    assert sum(line.startswith("step ") and "one device" in line for line in out.splitlines()) == 5
    assert "compiled HLO" in out and "[ok] every gradient within 1e-5" in out and "per-step time" in out
    assert "FAIL" not in out and "+-----" in out


def test_train_command_with_the_search_places_only_the_batch():
    # `spmdkit train --strategy auto`: params, optimizer state and results left to spmdkit.auto
    proc = run_child(["-m", "spmdkit.examples", "--example", "gpt", "--mesh", "2x2", "--steps", "2",
                      "--strategy", "auto"], timeout=300)
    out = proc.stdout
    assert sum(line.startswith("step ") and "one device" in line for line in out.splitlines()) == 2
    assert "search (only the batch placed): Optimal, gap 0.00%" in out
    for check in ("state kept its layout between steps", "every gradient within 1e-5", "compiled collectives == plan",
                  "bytes <= XLA's"):
        assert f"[ok] {check}" in out, out
    assert "FAIL" not in out
