"""A `jax.shard_map` inside the step (sdy.manual_computation, partition/manual.py): its operands
resharded to its in_specs, its body run as written, its results defined in its out_specs.

In a child process with 8 virtual devices (manual_worker.py, 2x4 mesh), under propagate and auto:
a row-parallel matmul reduced with the user's psum (check_vma on and off), an all_to_all between
two splits, that shard_map inside a scan, a scan (psum per step) inside it, and a collective
matmul (ppermute in a fori_loop), and two of them in a step whose sub-axes put it on the fine mesh,
train equal to one device (2 SGD steps); outside
loops, the plan's collectives (ours and the user's, counted by the same ring formulas) are the
compiled program's, kind for kind and byte for byte. Here (no devices): a shard_map manual over
some axes only is refused naming the op."""
from __future__ import annotations

from pathlib import Path

import pytest

from child_process import json_rows, run_child
from spmdkit import _core
from spmdkit.ir import parse
from spmdkit.partition import PartitionError, partition

HERE = Path(__file__).parent
CASES = ["rowpar", "rowpar_unchecked", "all_to_all", "in_scan", "scan_inside", "collective_matmul", "on_fine_mesh",
         "collective_matmul_on_fine_mesh"]

pytestmark = pytest.mark.skipif(not hasattr(_core, "PropagationGraph"), reason="this build has no propagation engine")


@pytest.fixture(scope="module")
def rows():
    proc = run_child([HERE / "manual_worker.py", *CASES], timeout=900)
    return {(r["case"], r["strategy"]): r for r in json_rows(proc.stdout)}


@pytest.mark.parametrize("strategy", ["propagate", "auto"])
@pytest.mark.parametrize("case", CASES)
def test_a_step_with_a_shard_map_trains_equal_to_one_device(rows, case, strategy):
    row = rows[(case, strategy)]
    assert "error" not in row, row.get("error")
    assert row["diff"] <= 1e-5, row


@pytest.mark.parametrize("strategy", ["propagate", "auto"])
@pytest.mark.parametrize("case", ["rowpar", "rowpar_unchecked", "all_to_all", "on_fine_mesh"])
def test_the_plan_counts_the_users_collectives_as_compiled(rows, case, strategy):
    row = rows[(case, strategy)]
    assert row["plan_counts"] == row["hlo_counts"], row
    assert row["plan_bytes"] == pytest.approx(row["hlo_bytes"]), row
    assert row["plan_counts"]["all_reduce"] + row["plan_counts"]["all_to_all"] >= 1  # the user's own are there


PARTLY_MANUAL = """
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>]
      manual_axes={"x"} (%a: tensor<4x8xf32>) {
    %1 = stablehlo.add %a, %a : tensor<4x8xf32>
    sdy.return %1 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""


def test_a_shard_map_manual_over_some_axes_only_is_refused():
    with pytest.raises(PartitionError, match=r"manual over \['x'\] only .* over \['y'\]") as info:
        partition(parse(PARTLY_MANUAL))
    assert info.value.op == "sdy.manual_computation"


@pytest.mark.parametrize("case", ["on_fine_mesh", "collective_matmul_on_fine_mesh"])
def test_a_shard_map_runs_on_the_fine_mesh(rows, case):
    """With sub-axes elsewhere in the step (propagate), the program runs on the fine mesh
    (fine_mesh.py) and the body's psum, axis_index and ppermute over "mp" run over its factors."""
    assert rows[(case, "propagate")]["fine_mesh"], rows[(case, "propagate")]
