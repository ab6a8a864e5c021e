"""parallelize(strategy="auto", memory_limit=...) checks the compiled program itself: the model
counts arguments, results and activations, XLA adds temporaries, so after partitioning it reads
`compiled.memory_analysis()` and, when that is over the limit, searches again under a limit
lowered by the excess (distributed/parallelize.py). Run on the MLP with AdamW on 2x2 under a
limit one byte below its replicated state (auto_misc_worker.py's memory_loop job): once as it
compiles, and once with a pretend overhead added to every compiled figure that no plan can meet."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))
from child_process import json_rows, run_child  # noqa: E402

from spmdkit import core  # noqa: E402

pytestmark = pytest.mark.skipif(not core.contains_spmd_rule("jax.dot_general"), reason="no jax.* rules in this build")
HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def job():
    proc = run_child([HERE / "auto_misc_worker.py", "memory_loop"], timeout=600)
    return json_rows(proc.stdout)[0]


def test_a_plan_that_compiles_within_the_limit_is_kept(job):
    run = job["runs"]["as_compiled"]
    assert "error" not in run, run
    assert run["peaks"] == [run["compiled"]]               # compiled once, checked once
    assert run["compiled"] <= job["limit"]
    assert run["searched"] == job["limit"]
    assert "compiled program:" in run["text"]


def test_no_plan_that_fits_once_compiled_is_a_typed_error_with_the_least_figure(job):
    run = job["runs"]["never_fits"]
    assert "compiled" not in run
    assert len(run["peaks"]) >= 2                          # it searched again under a lowered limit
    assert run["smallest_feasible"] == min(run["peaks"])
    assert f"memory_limit={job['limit']}" in run["error"] and "compile to" in run["error"]
