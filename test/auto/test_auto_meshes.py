"""Mesh-shape search (auto/meshes.py): the shapes of a device count, and `search_meshes` on the MLP
over the 2-dim shapes of 8 virtual CPU devices (a child process): every shape's plan is found,
they come back cheapest first by the search's own objective, and the cheapest one trains like one
device."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))
from child_process import json_rows, run_child  # noqa: E402

from spmdkit import core  # noqa: E402
from spmdkit.auto import AutoShardingError, mesh_shapes  # noqa: E402

HERE = Path(__file__).parent


def test_mesh_shapes_factor_the_count():
    assert mesh_shapes(8) == [(1, 8), (2, 4), (4, 2), (8, 1), (2, 2, 2)]
    assert mesh_shapes(8, max_ndim=2) == [(1, 8), (2, 4), (4, 2), (8, 1)]
    assert mesh_shapes(6) == [(1, 6), (2, 3), (3, 2), (6, 1)]
    assert mesh_shapes(1) == [(1, 1)]
    for n in range(1, 33):
        for s in mesh_shapes(n):
            assert len(s) in (2, 3) and s[0] * s[1] * (s[2] if len(s) == 3 else 1) == n


@pytest.mark.parametrize("bad", [0, -2, 2.0, True, "8"])
def test_bad_device_count_is_typed(bad):
    with pytest.raises(AutoShardingError, match="n_devices"):
        mesh_shapes(bad)


@pytest.mark.skipif(not core.contains_spmd_rule("jax.dot_general"), reason="no jax.* rules in this build")
def test_search_meshes_picks_the_cheapest_and_it_trains():
    proc = run_child([HERE / "auto_misc_worker.py", "meshes"], timeout=600)
    row = json_rows(proc.stdout)[0]
    cands = row["candidates"]
    assert sorted(tuple(c["shape"]) for c in cands) == [(1, 8), (2, 4), (4, 2), (8, 1)]
    assert all(c["error"] is None for c in cands), row["text"]
    objectives = [c["objective_us"] for c in cands]
    assert objectives == sorted(objectives)
    assert all(c["objective_us"] == c["report_objective_us"] for c in cands)
    assert row["best"] == cands[0]["shape"]
    assert row["loss_diff"] <= 1e-5 and row["grad_diff"] <= 1e-5
