"""Inputs of any placement (issue 18): the first call of a parallelized step with arrays from
shard_tensor, jax.device_put, an explicit-axes mesh, the host, and a previous step's outputs;
arrays laid out otherwise moved once; layout constraints inside the step (with_sharding_constraint,
jax.sharding.reshard) honoured; a padded 1-D convolution; every example program printed and parsed
back exactly. All equal to one device (child process with 8 virtual devices)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from dist_support import has_jax_rules, has_propagation, run_worker  # noqa: E402

HERE = Path(__file__).parent
CASES = ["first_shard_tensor", "first_device_put", "first_explicit_mesh", "first_host", "first_abstract",
         "previous_outputs", "constraint_wsc", "constraint_reshard", "constraint_none", "constraint_wsc_complete",
         "unmovable", "conv", "print_round_trip", "donation", "static", "explicit_context"]
TOL = 1e-5
SPLIT = {"args[0]['a']": "[Replicate(), Shard(1)]", "args[0]['b']": "[Replicate(), Shard(0)]",
         "args[1]": "[Shard(0), Replicate()]"}


@pytest.fixture(scope="module")
def rows():
    if not (has_jax_rules() and has_propagation()):
        pytest.skip("this build of spmdkit._core has no jax.* rules or no propagation engine")
    rows = {r["case"]: r for r in run_worker(HERE / "inputs_worker.py", CASES, timeout=600)}
    return rows


def _row(rows, case):
    row = rows[case]
    assert "error" not in row, row["error"]
    return row


@pytest.mark.parametrize("kind", ["shard_tensor", "device_put", "explicit_mesh"])
def test_first_call_with_sharded_arrays_takes_their_placements(rows, kind):
    row = _row(rows, f"first_{kind}")
    assert row["diff"] <= TOL
    assert row["shardings"] == SPLIT  # read off the arrays (placements given: None)
    assert row["moved"] == []  # and nothing is copied: they are where the program takes them


def test_first_call_with_host_arrays_replicates_them(rows):
    row = _row(rows, "first_host")
    assert row["diff"] <= TOL
    assert set(row["shardings"].values()) == {"[Replicate(), Replicate()]"}
    assert len(row["moved"]) == 3  # host arrays always go to the devices


def test_tracing_on_shape_dtype_structs_reads_their_shardings(rows):
    row = _row(rows, "first_abstract")
    assert row["diff"] <= TOL and row["shardings"] == SPLIT
    assert len(row["moved"]) == 3  # host arrays then go where the traced program takes them


def test_previous_outputs_feed_the_next_step_in_place(rows):
    row = _row(rows, "previous_outputs")
    assert len(row["diffs"]) == 4 and max(row["diffs"]) <= TOL
    # the params come back as the next step takes them; only the host batch of the first step moved
    assert row["moved"] == [["args[1]"], [], [], []]
    # arrays on other devices or in other placements are moved once before the call, values kept
    assert row["moved_elsewhere"] == ["args[0]['a']", "args[0]['b']", "args[1]"]
    assert row["elsewhere_diff"] <= TOL


def test_donated_params_are_reused_by_the_step(rows):
    row = _row(rows, "donation")
    assert len(row["diffs"]) == 4 and max(row["diffs"]) <= TOL
    assert row["first_deleted"] == [True, True] and not row["data_deleted"]
    # an argument that had to be moved first is copied, the copy donated: the caller's stays valid
    assert row["moved_kept"] and row["moved_diff"] <= TOL
    # XLA aliases the donated params' buffers to the new params (4 + 16 floats per device here)
    assert row["alias_bytes"] >= 4 * (8 * 16 + 16 * 4) // 2 and row["alias_bytes_keeping"] == 0
    errors = row["errors"]
    assert errors["'x'"].startswith("TypeError: donate_argnums must be an int")
    assert errors["[0, 1.5]"].startswith("TypeError: donate_argnums must be an int")
    assert errors["-1"].startswith("DistError") and "positions" in errors["-1"]
    assert errors["5"].startswith("DistError") and "called with 2 arguments" in errors["5"]


def test_static_arguments_reach_the_step_as_they_are(rows):
    row = _row(rows, "static")
    assert len(row["diffs"]) == 10 and max(row["diffs"]) <= TOL and row["small_diff"] <= TOL
    assert row["tanh_ops"] == [1, 0, 1, 1, 0]  # each flag's own program
    # values seen before take their kept program again (as jax.jit's cache), a new batch size its own
    assert row["kept"] == [0, 1, 2, 0, 1, 0] and row["small_new"]
    assert row["donated_deleted"] and row["donated_diff"] <= TOL
    assert row["labels"] == ["args[0]", "args[1]"]  # traced leaves keep their positions in the call
    errors = row["errors"]
    assert errors["placement_at_static"].startswith("DistError") and "in_placements[2]" in errors["placement_at_static"]
    assert errors["unhashable"].startswith("TypeError: static argument 3 must be hashable")
    assert max(row["string_diffs"]) <= TOL
    assert errors["flag_traced"].startswith("TracerBoolConversionError")  # a traced bool, as under jax.jit
    assert errors["unhashable_leaf"].startswith("TypeError: args[3]['how'] is a bytearray: neither an array")
    assert errors["past_the_end"].startswith("DistError") and "called with 4 arguments" in errors["past_the_end"]
    assert errors["static_and_donated"] == "DistError: argument 0 is both static and donated"


def test_a_step_written_for_explicit_sharding_runs_in_its_context(rows):
    row = _row(rows, "explicit_context")
    assert row["diff"] <= TOL and row["same_mesh"] and row["moved"] == []
    assert np.isfinite(row["used_on"])


def test_an_argument_that_cannot_be_moved_is_named(rows):
    row = _row(rows, "unmovable")
    assert row["error_type"] == "DistError" and row["value"] == "args[0]['b']", row
    assert "cannot lay it out" in row["message"]
    assert row["donated_error"] == "DistError: value args[0]['b']"


@pytest.mark.parametrize("kind", ["wsc", "reshard", "wsc_complete"])
def test_a_constraint_inside_the_step_sets_the_layout(rows, kind):
    row, free = _row(rows, f"constraint_{kind}"), _row(rows, "constraint_none")
    assert row["diff"] <= TOL and free["diff"] <= TOL
    assert row["constraint_layouts"] == ["((), ('mp',))"] and free["constraint_layouts"] == []
    # the constrained activations split over mp leave the column sums split over mp: the plan
    # gathers the batch for the constraint instead of all-reducing the sums
    if kind != "wsc_complete":  # completion leaves an unconstrained result replicated
        assert row["out"] == "{'out[0]': [Replicate(), Shard(0)]}"
    assert free["out"] == "{'out[0]': [Replicate(), Replicate()]}"
    assert row["collectives"]["all_gather"] >= 1 and row["collectives"] != free["collectives"]


def test_padded_conv_trains_equal_to_one_device(rows):
    row = _row(rows, "conv")
    assert len(row["diffs"]) == 3 and max(row["diffs"]) <= TOL
    assert row["losses"][-1] < row["losses"][0]


def test_every_printed_program_parses_back_equal(rows):
    row = _row(rows, "print_round_trip")
    assert row["has_unreduced_max"]  # the vocab-split cross entropy has max-pending values
    assert row["programs"] and set(row["programs"].values()) == {"equal"}, row["programs"]
