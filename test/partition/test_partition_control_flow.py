"""Issue 18 item 5: while/scan/cond/case partitioned, shardings carried through their regions.

Training steps through spmdkit.distributed.parallelize on 8 virtual CPU devices (one child
process, control_flow_worker.py): an RNN under lax.scan and a transformer whose layers are stacked
under lax.scan on 2x2 and 2x2x2, cond/switch and while_loop/fori_loop steps on 2x2, 5 steps each,
feeding the new params back; loss, gradients and new params equal one device within 1e-5. Random
programs with a while or a case (hypothesis) likewise, each also searched (strategy="auto").
Without devices: the plan's structure (loop-invariant reshards hoisted before the loop, trip
counts, carry layouts from propagation) and typed errors naming the op.
"""
from __future__ import annotations

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from child_process import json_rows, run_child
from spmdkit import core
from spmdkit.partition import LocalControlFlow, PartitionError, Reshard, complete_forward, partition

HERE = Path(__file__).parent
TOL = 1e-5
HAS_PROPAGATION = hasattr(core, "PropagationGraph")
needs_propagation = pytest.mark.skipif(not HAS_PROPAGATION, reason="this build of _core has no propagation engine")
CASES = ["rnn-2x2+xla", "rnn-2x2x2", "stack-2x2", "stack-2x2x2", "branch-2x2", "loop-2x2",
         "stack-2x2+auto", "branch-2x2+auto", "loop-2x2+auto"]   # +auto: the params searched (strategy="auto")


@pytest.fixture(scope="module")
def rows():
    proc = run_child([HERE / "control_flow_worker.py", *CASES, "random-1"], timeout=900)
    return {row["case"]: row for row in json_rows(proc.stdout)}


@needs_propagation
@pytest.mark.parametrize("case", CASES)
def test_steps_with_control_flow_equal_one_device(rows, case):
    row = rows[case]
    assert len(row["loss_diffs"]) == 5
    assert max(row["loss_diffs"]) <= TOL and max(row["grad_diffs"]) <= TOL and max(row["param_diffs"]) <= TOL, row
    assert row["loops"], "the step has no partitioned while/case"
    if case.endswith("+auto"):
        assert row["search_status"] == "Optimal"


@needs_propagation
def test_scans_are_counted_loops_carried_split(rows):
    """A scan's loop (forward and backward) has its trip count read from the program, and its
    carried hidden state stays split as propagation said (not gathered whole)."""
    rnn = rows["rnn-2x2+xla"]
    assert [l["trip_count"] for l in rnn["loops"]] == [4, 4]  # T = 4, forward and backward scan
    assert '[{"dp"}, {"mp"}]' in rnn["loops"][0]["carry"]     # h: batch on dp, hidden on mp
    assert [l["trip_count"] for l in rows["stack-2x2"]["loops"]] == [2, 2]  # two layers
    # the plan's bytes per call are what the compiled program moves, its loops run 4 times
    assert rnn["plan_bytes"] == pytest.approx(rnn["ours_hlo_bytes"]) and rnn["plan_bytes"] > 0


@needs_propagation
def test_backward_scan_accumulates_weight_gradients_partial(rows):
    """The backward scan adds each time step's wh/wx/b gradient (partial over the batch axis dp)
    into a carried accumulator: it stays partial through the loop and is reduced once after it,
    where XLA's partitioning reduces it every iteration."""
    rnn = rows["rnn-2x2+xla"]
    backward = rnn["loops"][1]["carry"]
    assert sum('partial={"dp"}:sum' in c for c in backward) == 3, backward
    assert rnn["plan_bytes"] < rnn["xla_bytes"]
    # the stacked transformer's backward scan writes each layer's six weight gradients into
    # stacked carries: they stay partial too, reduced once after the loop
    stacked = rows["stack-2x2"]["loops"][1]["carry"]
    assert sum('partial={"dp"}:sum' in c for c in stacked) == 6, stacked


@needs_propagation
def test_random_programs_with_loops_and_branches_equal_one_device(rows):
    kinds = rows["random-1"]["kinds"]
    assert {k.split("+")[0] for k in kinds} == {"fori", "scan", "while", "cond", "switch", "nested"}


# -- without devices ------------------------------------------------------------------------------
def _scan_program():
    """h <- tanh(x_t @ w + h) @ cumsum(w) under scan, w split on its rows (the cumsum needs them whole),
    the batch on x."""
    from spmdkit.ir import import_jax
    from spmdkit.sharding import Mesh, parse_sharding

    def f(w, xs):
        return jax.lax.scan(lambda h, x: (jnp.tanh(x @ w + h) @ jnp.cumsum(w, axis=0), None), jnp.zeros((4, 8)), xs)[0]

    mesh = Mesh([("x", 2), ("y", 2)])
    program = import_jax(f, np.zeros((8, 8), np.float32), np.zeros((3, 4, 8), np.float32), inline_calls=True,
                         meshes={"mesh": mesh})
    program.main.args[0].sharding = parse_sharding('#sdy.sharding<@mesh, [{"y"}, {}]>')
    program.main.args[1].sharding = parse_sharding('#sdy.sharding<@mesh, [{}, {"x"}, {}]>')
    return program


@needs_propagation
def test_loop_invariant_reshards_run_once_before_the_loop():
    """w arrives row-split and the body's cumsum needs it whole: that reshard is a step of the
    enclosing block, before the loop, not one of the body's (which runs every iteration)."""
    from spmdkit import propagate
    program = _scan_program()
    propagate(program)
    parted = partition(program)
    loop_at = next(i for i, s in enumerate(parted.steps) if isinstance(s, LocalControlFlow))
    loop = parted.steps[loop_at]
    w = program.main.args[0]
    body_reshards = [s for s in loop.blocks[1].steps if isinstance(s, Reshard)]
    assert not any(r.value is w for r in body_reshards)
    assert any(isinstance(s, Reshard) and s.value is w for s in parted.steps[:loop_at])
    assert loop.trip_count == 3
    # the summary counts a body's collectives once per iteration
    body_bytes = sum(r.plan.bytes for r in body_reshards)
    outside = sum(s.plan.bytes for s in parted.steps if isinstance(s, Reshard))
    assert parted.summary().bytes_per_device == pytest.approx(outside + 3 * body_bytes)


def test_completion_refuses_control_flow_naming_the_op():
    with pytest.raises(PartitionError, match="strategy='propagate'") as e:
        complete_forward(_scan_program())
    assert e.value.op == "stablehlo.while"


def test_other_region_ops_raise_naming_the_op():
    # a sort's comparator is a region the partitioner does not run (a shard_map's body it does:
    # test_partition_manual.py)
    from spmdkit.ir import parse
    program = parse("""
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> tensor<4xf32> {
  %0 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
""")
    with pytest.raises(PartitionError, match="ops with regions other than") as e:
        partition(program)
    assert e.value.op == "stablehlo.sort"


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
