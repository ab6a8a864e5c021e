"""The GPT example across two processes: `jax.distributed` on the loopback with CPU (gloo)
collectives, each process holding 2 virtual devices of a global 2x2 dp x mp mesh, running the
partitioned training step and checking loss and gradients against one device (each process
runs the single-device step locally).

    python -m spmdkit.examples.two_process               # launches both workers, bounded in time
    python -m spmdkit.examples.two_process --worker 0 --port P   (what the launcher starts)
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time

LOCAL_DEVICES = 2


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(pid: int, port: int, steps: int, optimizer: str, strategy: str) -> int:
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={LOCAL_DEVICES}"
    import jax
    from ..distributed import init
    # spmdkit's limits: if the other process dies, this one exits within ~15 s instead of hanging
    init(f"127.0.0.1:{port}", 2, pid, coordinator_bind_address=f"127.0.0.1:{port}")
    from .train import report, run
    ids = [d.id for d in jax.devices()]   # global ids, process 0's first
    row = run("gpt", "2x2", steps, optimizer, strategy, device_ids=ids, xla=False)
    row.update(process=pid, processes=jax.process_count(), devices=len(ids), local_devices=jax.local_device_count())
    if pid == 0:
        print(report(row), file=sys.stderr)
    print(json.dumps({k: v for k, v in row.items() if k != "pictures"}), flush=True)
    jax.distributed.shutdown()
    return 0 if all(row["checks"].values()) else 1


def launch(steps: int = 5, optimizer: str = "adamw", strategy: str = "propagate", timeout: float = 150.0,
           env: dict | None = None) -> list[dict]:
    """Start both workers, wait at most `timeout` seconds (then kill them), return each one's
    JSON row with its exit code; raises RuntimeError with their output when one fails."""
    port = free_port()
    env = dict(os.environ if env is None else env)
    env.pop("XLA_FLAGS", None)
    procs = [subprocess.Popen([sys.executable, "-m", "spmdkit.examples.two_process", "--worker", str(pid),
                               "--port", str(port), "--steps", str(steps), "--optimizer", optimizer,
                               "--strategy", strategy], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for pid in range(2)]
    deadline = time.monotonic() + timeout
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            outs.append((p.returncode, out, err))
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        for p in procs:
            p.communicate()
        raise RuntimeError(f"two-process run did not finish in {timeout:.0f} s") from None
    rows = []
    for pid, (rc, out, err) in enumerate(outs):
        lines = [l for l in out.splitlines() if l.startswith("{")]
        if rc != 0 and not lines:
            raise RuntimeError(f"worker {pid} exited {rc}:\n{out[-2000:]}\n{err[-4000:]}")
        row = json.loads(lines[-1])
        row["returncode"], row["stderr"] = rc, err
        rows.append(row)
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m spmdkit.examples.two_process", description=__doc__.splitlines()[0])
    p.add_argument("--worker", type=int, choices=[0, 1])
    p.add_argument("--port", type=int)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--optimizer", choices=["adamw", "sgd"], default="adamw")
    p.add_argument("--strategy", choices=["propagate", "complete"], default="propagate")
    p.add_argument("--timeout", type=float, default=150.0)
    args = p.parse_args(argv)
    if args.worker is not None:
        return worker(args.worker, args.port, args.steps, args.optimizer, args.strategy)
    rows = launch(args.steps, args.optimizer, args.strategy, args.timeout)
    print(rows[0]["stderr"], end="")
    for row in rows:
        print(f"process {row['process']}: {row['processes']} processes, {row['devices']} devices "
              f"({row['local_devices']} local), exit {row['returncode']}, losses "
              f"{[round(s['loss'], 6) for s in row['steps']]}")
    return 0 if all(r["returncode"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
