"""Helpers of the spmdkit.dist tests: whether this build has the jax.* rules and the
propagation engine, and how to run a worker in a fresh interpreter."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def has_jax_rules() -> bool:
    from spmdkit import core
    return bool(core.contains_spmd_rule("jax.dot_general"))


def has_propagation() -> bool:
    from spmdkit import core
    return hasattr(core, "PropagationGraph")


def worker_env() -> dict:
    env = dict(os.environ)
    # the spmdkit this process imported (the installed one in CI, python/ in a development tree)
    import spmdkit
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(spmdkit.__file__).resolve().parent.parent),
                                                      env.get("PYTHONPATH")]))
    env.pop("XLA_FLAGS", None)
    return env


def run_worker(script: Path, args: list[str], timeout: float) -> list[dict]:
    proc = subprocess.run([sys.executable, str(script), *args], env=worker_env(), capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"worker failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
