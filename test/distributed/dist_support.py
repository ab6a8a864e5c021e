"""Helpers of the spmdkit.distributed tests: whether this build has the jax.* rules and the
propagation engine, and how to run a worker in a fresh interpreter (test/child_process.py)."""
from __future__ import annotations

from pathlib import Path

from child_process import json_rows, run_child


def has_jax_rules() -> bool:
    from spmdkit import core
    return bool(core.contains_spmd_rule("jax.dot_general"))


def has_propagation() -> bool:
    from spmdkit import core
    return hasattr(core, "PropagationGraph")


def run_worker(script: Path, args: list[str], timeout: float) -> list[dict]:
    return json_rows(run_child([script, *args], timeout).stdout)
