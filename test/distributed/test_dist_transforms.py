"""A parallelized step inside JAX's transformations (under_transforms.py): jit, grad, vmap, scan,
second-order grad, a user's jitted optax loop, integer / PRNG-key arguments, jit and grad under
an explicit-axes mesh context, all equal to the same transformation of the plain function; the
reverse pass is a partitioned VJP taking the primals as the forward does; forward mode refused
clearly (child process with 8 virtual devices)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from dist_support import has_jax_rules, has_propagation, run_worker  # noqa: E402

HERE = Path(__file__).parent
FORWARDS = ["mlp", "softmax", "reshape", "multi", "cumsum", "gather", "concat"]
CASES = [f"derivatives_{n}" for n in FORWARDS] + ["second_order", "integers_and_keys", "optax_loop", "scan",
                                                   "refusals", "explicit_context"]
TOL = 1e-5


@pytest.fixture(scope="module")
def rows():
    if not (has_jax_rules() and has_propagation()):
        pytest.skip("this build of spmdkit._core has no jax.* rules or no propagation engine")
    return {r["case"]: r for r in run_worker(HERE / "transforms_worker.py", CASES, timeout=900)}


def _row(rows, case):
    row = rows[case]
    assert "error" not in row, row["error"]
    return row


@pytest.mark.parametrize("name", FORWARDS)
def test_derivatives_equal_the_plain_functions(rows, name):
    """JAX's transposition of the program itself is off for cumsum, gather, concat and reshape
    over split dims and has no rule for softmax's pmax; the partitioned VJP is exact."""
    for row in _row(rows, f"derivatives_{name}")["rows"]:
        assert set(row["diffs"]) == {"grad", "jit_grad", "jit", "vmap", "vmap_grad"}
        assert all(d <= TOL for d in row["diffs"].values()), (row["x"], row["diffs"])
        assert row["backward"]  # the reverse pass ran as a partitioned program
        # its primals are laid out as the forward takes them (no move between the two)
        assert row["backward_primals"] == row["forward_primals"]


@pytest.mark.parametrize("case", ["second_order", "integers_and_keys", "scan"])
def test_composed_derivatives(rows, case):
    assert _row(rows, case)["diff"] <= TOL


def test_a_users_jitted_optax_loop_around_a_parallelized_model(rows):
    row = _row(rows, "optax_loop")
    assert row["diff"] <= TOL
    assert row["losses"][-1] < row["losses"][0]  # it trains


def test_forward_mode_is_refused_clearly(rows):
    assert _row(rows, "refusals")["jvp"] == "TypeError"  # JAX's own: no forward mode through a custom_vjp


def test_inside_jit_under_an_explicit_axes_context(rows):
    row = _row(rows, "explicit_context")
    assert row["jit"] <= TOL and row["grad"] <= TOL and row["outside_jit"] <= TOL
    assert row["grad_mesh_is_context"]  # typed by the context's mesh, as the code around expects
