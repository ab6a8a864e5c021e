"""Checkpoints and a dead process across two jax.distributed processes (4 virtual CPU devices
each, gloo collectives, the coordinator on 127.0.0.1, joined by spmdkit.distributed.init).

Both processes train the MLP example 2 steps on a 2x2 mesh whose mp dim spans the processes
(each process holds half of every split param and writes those shards itself), save, train 2
more steps, load onto a 2x4 mesh (dp across the processes) with other placements and train 2
steps: the losses equal the uninterrupted run's within 1e-6 on both. Then they train on; the test
kills process 1, and process 0, blocked in a collective with a dead peer, must exit non-zero with
JAX's error within 60 s (spmdkit's heartbeat limit) instead of hanging.
"""
from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from child_process import child_env  # noqa: E402
from dist_support import has_jax_rules, has_propagation  # noqa: E402

HERE = Path(__file__).parent
WORKER = HERE / "checkpoint_worker.py"
START_LIMIT_S = 300     # both processes through the checkpoint part (a shared, loaded machine)
DEATH_LIMIT_S = 60      # issue 16: the survivor exits within this after the other dies


def _free_port() -> int:
    from spmdkit.examples.two_process import free_port
    return free_port()


class Worker:
    """One worker process; its stdout lines are collected by a thread (JSON rows parsed)."""

    def __init__(self, pid: int, port: int, folder: Path):
        self.proc = subprocess.Popen([sys.executable, str(WORKER), "two", str(pid), str(port), "mlp", str(folder)],
                                     env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.rows: list[dict] = []
        self.stderr = ""
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self):
        for line in self.proc.stdout:
            if line.startswith("{"):
                self.rows.append(json.loads(line))

    def _read_stderr(self):
        for line in self.proc.stderr:
            self.stderr += line

    def trained_on(self) -> bool:
        return any("step" in r for r in self.rows)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("two") / "ckpt"
    port = _free_port()
    workers = [Worker(pid, port, folder) for pid in range(2)]
    try:
        deadline = time.monotonic() + START_LIMIT_S
        while not all(w.trained_on() for w in workers):
            if time.monotonic() > deadline or any(w.proc.poll() is not None for w in workers):
                raise AssertionError("workers did not get through the checkpoint part:\n" +
                                     "\n".join(f"process {i}: exit {w.proc.poll()} {w.rows[-3:]}\n{w.stderr[-3000:]}"
                                               for i, w in enumerate(workers)))
            time.sleep(0.2)
        killed_at = time.monotonic()
        workers[1].proc.send_signal(signal.SIGKILL)
        try:
            returncode = workers[0].proc.wait(timeout=DEATH_LIMIT_S)
        except subprocess.TimeoutExpired:
            returncode = None     # hung: the test below fails
        survivor_s = time.monotonic() - killed_at
    finally:
        for w in workers:
            w.proc.kill()
            w.proc.wait()
    time.sleep(0.5)    # the reader threads take the last lines
    rows = [next(r for r in w.rows if "uninterrupted" in r) for w in workers]
    print(f"process 0 exited {returncode} {survivor_s:.1f} s after process 1 was killed; rows: "
          f"{json.dumps([{k: v for k, v in r.items() if k != 'saved'} for r in rows])}")
    return {"rows": rows, "returncode": returncode, "survivor_s": survivor_s, "stderr": workers[0].stderr,
            "folder": folder}


pytestmark = pytest.mark.skipif(not (has_jax_rules() and has_propagation()),
                                reason="this build of spmdkit._core has no jax.* rules or no propagation engine")


def test_two_processes_save_their_own_shards_and_resume_on_another_mesh(run):
    for pid, row in enumerate(run["rows"]):
        assert row["process"] == pid and row["processes"] == 2 and row["devices"] == 8 and row["local_devices"] == 4
        assert row["shards_written_here"] > 0       # mp spans the processes: each writes its halves
        assert row["loaded_layout_is_like"] and row["loaded_value_diff"] == 0.0
        straight, resumed = row["uninterrupted"], row["resumed"]
        assert straight[-1] < straight[0]
        assert max(abs(a - b) for a, b in zip(resumed, straight[2:])) <= 1e-6
    assert run["rows"][0]["resumed"] == run["rows"][1]["resumed"]


def test_a_checkpoint_of_two_processes_loads_in_one(run):
    # this test's process has one device: every leaf comes back whole, as a numpy array
    import jax
    import numpy as np
    from spmdkit.distributed import load_state_dict
    saved = run["rows"][0]["saved"]
    like = {"params": {k: np.zeros_like(v) for k, v in _params().items()}}
    like["opt"] = {"m": like["params"], "v": like["params"], "t": np.float32(0)}
    loaded = load_state_dict(run["folder"], like)
    got = {jax.tree_util.keystr(k): v for k, v in jax.tree_util.tree_flatten_with_path(loaded)[0]}
    assert sorted(got) == sorted(saved)
    for path, value in saved.items():
        np.testing.assert_array_equal(got[path], np.asarray(value, np.float32), err_msg=path)


def _params() -> dict:
    import jax
    import numpy as np
    from spmdkit.models import mlp
    return {k: np.asarray(v) for k, v in mlp.init_params(jax.random.PRNGKey(0)).items()}


def test_init_refuses_limits_that_are_not_whole_seconds():
    from spmdkit.distributed import DistError, init
    with pytest.raises(DistError, match="heartbeat_timeout_s must be a whole number of seconds >= 1, got 0"):
        init("127.0.0.1:1", 2, 0, heartbeat_timeout_s=0)
    with pytest.raises(DistError, match="initialization_timeout_s .* got 2.5"):
        init("127.0.0.1:1", 2, 0, initialization_timeout_s=2.5)


def test_the_survivor_of_a_killed_process_exits_with_an_error(run):
    assert run["returncode"] is not None, f"process 0 still ran {DEATH_LIMIT_S} s after process 1 was killed"
    assert run["returncode"] != 0
    # JAX's coordination service: "Terminating process ... another task died ... The following
    # tasks are unhealthy (stopped sending heartbeats)" (every run so far); a gloo collective that
    # notices the closed connection first would raise its own error, also a clear end
    assert re.search(r"another task died|[Gg]loo.*(closed|reset|[Ee]rror)", run["stderr"]), run["stderr"][-3000:]
