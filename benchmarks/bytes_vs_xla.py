"""Bytes per device per training step: our plan beside XLA's own partitioning of the same step
(jax.jit with the same NamedShardings in and out), on issue 18's models over a 2x2x2 mesh (dp,
fsdp, mp) of 8 virtual CPU devices. Ours is parallelize's plan (default cost model: latency +
bandwidth) and the same propagated program partitioned with a bandwidth-only model. Every number
is read from compiled HLO (ours equals the plan's; the test checks that).

    PYTHONPATH=python python benchmarks/bytes_vs_xla.py [model ...]

Times (this machine: 8 virtual CPU devices on shared cores, noisy): the median step of ours and
of jax.jit with the same shardings, and the first call of a fresh parallelize (trace, propagate,
partition, compile, run). The work runs in test/partition/bytes_worker.py in a child process (JAX must start with 8
devices); this script prints the table.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def counts_text(counts: dict) -> str:
    short = {"all_gather": "AG", "reduce_scatter": "RS", "all_reduce": "AR", "all_to_all": "A2A",
             "collective_permute": "CP"}
    return " ".join(f"{n} {short[k]}" for k, n in counts.items() if n) or "none"


def main(argv: list[str]) -> int:
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "python"), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, str(ROOT / "test/partition/bytes_worker.py"), "--timing", *argv], env=env,
                          capture_output=True, text=True)
    if proc.returncode:
        print(proc.stdout, proc.stderr, file=sys.stderr)
        return proc.returncode
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    head = ("| model | ours (B) | ours, bandwidth-only model (B) | XLA (B) | ours/XLA | collectives ours | XLA | "
            "step ms ours / jax.jit | first call s |")
    print(head)
    print("|---|---:|---:|---:|---:|---|---|---|---:|")
    for r in rows:
        if "error" in r:
            print(f"| {r['model']} | error: {r['error'][:100]} |")
            continue
        worst = max(max(r["diffs"].values()), max(r["bw_diffs"].values()))
        print(f"| {r['model']} | {r['plan_bytes']:,.0f} | {r['bw_plan_bytes']:,.0f} | {r['xla_bytes']:,.0f} | "
              f"{r['plan_bytes'] / r['xla_bytes']:.2f} | {counts_text(r['plan_counts'])} | "
              f"{counts_text(r['xla_counts'])} | {r['ours_ms']:.2f} / {r['jit_ms']:.2f} | {r['first_call_s']:.2f} |")
        if worst > 1e-5:
            print(f"  ({r['model']}: differs from one device by {worst:.1e})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
