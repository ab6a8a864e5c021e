"""Running work in a fresh Python interpreter from a test.

JAX fixes its device count when it starts, so a test that needs N virtual devices runs its
work in a child process. The child must import the spmdkit this test run imported: the
installed one in CI (a clean clone's python/ has no compiled _core), python/ in a
development tree."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def spmdkit_home() -> str:
    """The folder holding the spmdkit package this process imported."""
    import spmdkit
    return str(Path(spmdkit.__file__).resolve().parent.parent)


def child_env(**set_vars: str) -> dict:
    """This process's environment with spmdkit_home() first on PYTHONPATH; XLA_FLAGS is dropped
    (the child chooses its own device count)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [spmdkit_home(), env.get("PYTHONPATH")]))
    env.pop("XLA_FLAGS", None)
    env.update(set_vars)
    return env


def run_child(argv: list[str], timeout: float, **set_vars: str) -> subprocess.CompletedProcess:
    """Runs `python ARGV...` in child_env(); a failed child fails the test with its output."""
    proc = subprocess.run([sys.executable, *map(str, argv)], env=child_env(**set_vars), capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"child failed ({proc.returncode}): {' '.join(map(str, argv))[:200]}\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")
    return proc


def json_rows(stdout: str) -> list[dict]:
    """The JSON objects a worker printed, one per line."""
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
