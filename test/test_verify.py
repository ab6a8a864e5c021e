"""Unit tests of spmdkit.verify's simulator: right claims pass, wrong ones are caught.

Runs without any rule library (placements are written by hand); the last test runs the random
mode over every registered op on spmdkit's own rules, in a subprocess (a crashing extension
must fail the test, not the session).
"""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
try:
    import spmdkit.verify  # noqa: F401
except ImportError:  # an install without verify (or none): use the source tree
    sys.path.insert(0, str(ROOT / "python"))
    for name in [m for m in sys.modules if m == "spmdkit" or m.startswith("spmdkit.")]:
        del sys.modules[name]

from child_process import child_env  # noqa: E402
from spmdkit.verify import Placement, TensorArg, load_specs  # noqa: E402
from spmdkit.verify.partial import partial_addends, reduce_parts  # noqa: E402
from spmdkit.verify.placement import block_bounds, local_shape  # noqa: E402
from spmdkit.verify.simulate import Execution, verify_placements  # noqa: E402

P = Placement.make
SPECS = load_specs()


def check(op, mesh, inputs, attrs, ins, outs, seed=0):
    """Execute `op` with inputs placed as `ins`; is the claim `outs` right?"""
    spec = SPECS[op]
    args = [TensorArg(tuple(s), P(*p) if isinstance(p, tuple) else p, hi) for s, p, hi in inputs]
    ex = Execution(spec, mesh, args, attrs, np.random.default_rng(seed))
    return verify_placements(ex, ins, outs)


def T(shape, dims=None, partial=None, int_high=None):
    return (shape, (dims or [-1] * len(shape), partial), int_high)


def test_blocks_are_ceil_div_and_mixed_radix():
    assert [block_bounds(7, 2, i) for i in range(2)] == [(0, 4), (4, 7)]
    assert [block_bounds(4, 3, i) for i in range(3)] == [(0, 2), (2, 4), (4, 4)]
    p = P([[0, 1], -1])  # dim 0 over mesh dims 0 then 1: rank (1, 0) takes block 2 of 4
    assert local_shape((8, 3), p, (2, 2), (1, 0)) == (2, 3)


@pytest.mark.parametrize("rtype", ["sum", "avg", "max", "min", "prod"])
def test_partial_addends_reduce_back(rtype):
    rng = np.random.default_rng(1)
    g = rng.normal(size=(3, 4))
    table = partial_addends(g, [(0, rtype), (1, rtype)], (2, 3), rng)
    inner = [reduce_parts([table[(i, j)] for i in range(2)], rtype) for j in range(3)]
    assert np.allclose(reduce_parts(inner, rtype), g)
    assert not np.allclose(table[(0, 0)], g)


def test_matmul_contraction_is_partial_sum():
    ins = [P([1, 0]), P([0, -1])]
    args = [T((4, 6), [1, 0]), T((6, 8), [0, -1])]
    assert check("matmul", (2, 2), args, [False, False], ins, [P([1, -1], {0: "sum"})])
    not_partial = check("matmul", (2, 2), args, [False, False], ins, [P([1, -1])])
    assert not not_partial and "is not its shard" in not_partial.reason
    assert not check("matmul", (2, 2), args, [False, False], ins, [P([1, -1], {0: "max"})])


def test_output_shape_mismatch_is_caught():
    verdict = check("matmul", (2, 2), [T((4, 6)), T((6, 8))], [False, False], [P([0, -1]), P([-1, -1])], [P([-1, -1])])
    assert not verdict and "shape" in verdict.reason


def test_max_reduction_needs_max_partial():
    args, ins = [T((4, 6), [0, -1])], [P([0, -1])]
    assert check("max", (2,), args, [[0], False], ins, [P([-1], {0: "max"})])
    assert not check("max", (2,), args, [[0], False], ins, [P([-1], {0: "sum"})])


def test_partial_input_types_are_honoured():
    # sum is linear: a sum over an avg-partial input stays avg-partial, a max-partial one does not
    args = [T((4, 6), [-1, -1], {0: "avg"})]
    assert check("sum", (2,), args, [[1], False], [P([-1, -1], {0: "avg"})], [P([-1], {0: "avg"})])
    assert not check("sum", (2,), args, [[1], False], [P([-1, -1], {0: "max"})], [P([-1], {0: "max"})])
    # a nonlinear op on a partial input is wrong whatever the output claims
    assert not check("elementwise_unary", (2,), [T((4,), [-1], {0: "sum"})], [], [P([-1], {0: "sum"})], [P([-1], {0: "sum"})])


def test_uneven_avg_partial_is_wrong():
    args = [T((7,), [0])]
    assert not check("mean_all", (2,), args, [], [P([0])], [P([], {0: "avg"})])
    assert check("mean_all", (2,), [T((8,), [0])], [], [P([0])], [P([], {0: "avg"})])


def test_embedding_row_split_table_gives_partial_sum():
    args = [T((3, 5), int_high=8), T((8, 4), [0, -1])]
    ins = [P([-1, -1]), P([0, -1])]
    assert check("embedding", (2,), args, [-1, False], ins, [P([-1, -1, -1], {0: "sum"})])
    assert not check("embedding", (2,), args, [-1, False], ins, [P([-1, -1, -1])])


def test_integer_ids_cannot_be_partial():
    args = [T((3, 5), int_high=8), T((8, 4))]
    verdict = check("embedding", (2,), args, [-1, False], [P([-1, -1], {0: "sum"}), P([-1, -1])], [P([-1, -1, -1])])
    assert not verdict and "integer" in verdict.reason


def test_reshape_runs_with_local_target_shape():
    args = [T((8, 6), [[0, 1], -1])]
    ins = [P([[0, 1], -1])]
    assert check("reshape", (2, 2), args, [[4, 12]], ins, [P([[0, 1], -1])])
    assert not check("reshape", (2, 2), args, [[4, 12]], ins, [P([0, -1])])


def test_grad_entry_executes_its_kernel():
    args = [T((4, 6), [0, -1]), T((4, 6), [0, -1])]
    assert check("gelu_grad", (2,), args, [False], [P([0, -1]), P([0, -1])], [P([0, -1])])
    assert not check("gelu_grad", (2,), args, [False], [P([0, -1]), P([-1, -1])], [P([0, -1])])


def test_invalid_placements_are_wrong():
    verdict = check("elementwise_unary", (2, 2), [T((4, 4))], [], [P([0, 0])], [P([0, 0])])
    assert not verdict and "same mesh dim" in verdict.reason


def test_every_sampler_and_kernel_runs():
    """Replicating everything is always right: any failure is a sampler or kernel bug."""
    from spmdkit.verify import get_backend, run_random, verifiable_ops
    backend = get_backend("replicate")
    for op in verifiable_ops(SPECS):
        for tally in run_random(backend, SPECS[op], SPECS, cases=15, seed=3):
            assert tally.wrong == 0 and tally.skipped == 0, (op, tally.function, tally.counterexample, tally.notes[:1])


def test_cli_table():
    from spmdkit.verify.cli import main
    assert main(["--all", "--backend", "replicate", "--cases", "3", "--draws", "1", "--max-combos", "20"]) == 0


def test_random_mode_on_spmdkit_rules():
    """CI: the random and exhaustive modes over every registered op, bounded; no rule may be wrong."""
    pytest.importorskip("spmdkit")
    pytest.importorskip("spmdkit._core")
    run = subprocess.run([sys.executable, "-m", "spmdkit.verify", "--all", "--cases", "200", "--draws", "1",
                          "--max-combos", "150", "--mode", "both"], capture_output=True, text=True, env=child_env(),
                         timeout=1200)
    assert run.returncode in (0, 1), f"verify crashed (rc {run.returncode}):\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    rows, wrong = set(), {}
    for line in run.stdout.splitlines():
        cols = line.split()
        if len(cols) == 7 and cols[2].isdigit():
            rows.add(cols[0])
            if int(cols[4]) > 0:
                wrong[(cols[0], cols[1])] = int(cols[4])
    from spmdkit.verify import verifiable_ops
    missing = set(verifiable_ops(SPECS)) - rows
    assert not missing, f"verify printed no result for {sorted(missing)}:\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
    assert not wrong, f"wrong spmdkit rules: {wrong}\n{run.stdout}"
