"""The partitioner alone, on the propagated transformer steps that bench_program_path.py times.

Imports (import_jax) and propagates the d=128 training step of bench_program_path.py at each layer
count once, then times `spmdkit.partition.partition` of it (best of N, wall ms) against
`spmdkit.propagate` of a fresh import (the stage the issue compares it with): alone, and handed
the propagation's signature numbers as parallelize hands them (`partition(program, signatures=)`).

    PYTHONPATH=python python benchmarks/bench_partition.py [--stages 4 24] [--repeat 5]
        [--profile N] [--digest] [--cpu]
    --profile N: cProfile of partition on the N-layer step (SORT=tottime|cumtime, ROWS=30)
    --digest: print a hash of each partitioned program (every step, layout, attribute and reshard
              plan) to check that a change to the partitioner leaves its plans byte-identical
    --cpu: CPU time of this process instead of wall time (steadier on a shared machine)
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)


def propagated(layers: int):
    """(a fresh import thunk, the propagated program, its ops' signature numbers) of
    bench_program_path's first-call step."""
    import jax.numpy as jnp

    from bench_program_path import _our_inputs, make_step
    from spmdkit.propagation.from_ir import propagate_program
    from spmdkit.ir import import_jax
    step, params, specs = make_step(layers, d=128, heads=4, ffn=512, vocab=256)
    tokens = jnp.zeros((16, 64), jnp.int32)
    mesh, arg_shardings, _ = _our_inputs(step, params, specs, tokens)

    def fresh():
        return import_jax(step, params, tokens, tokens, inline_calls=True, meshes={"mesh": mesh.sharding_mesh},
                          arg_shardings=arg_shardings)
    program = fresh()
    signatures = propagate_program(program).signatures
    return fresh, program, signatures


def digest(parted) -> str:
    """A hash of everything a partitioned program says (values by their place in the program)."""
    from spmdkit.partition.plan import LocalControlFlow, LocalOp, Reshard
    names: dict[int, int] = {}
    for v in parted.function.args:
        names[id(v)] = len(names)
    for op in parted.function.walk():
        for r in op.results:
            names[id(r)] = len(names)
    h = hashlib.sha256()

    def text(x) -> str:
        return re.sub(r" at 0x[0-9a-f]+", "", repr(x))

    def walk(steps):
        for s in steps:
            if isinstance(s, LocalOp):
                h.update(f"op {s.op.name} {[names[id(r)] for r in s.op.results]} {text(sorted(s.attrs.items()))} "
                         f"{s.operand_layouts} {s.result_layouts}\n".encode())
            elif isinstance(s, Reshard):
                h.update(f"reshard {names[id(s.value)]} {s.source} {s.target} {text(s.plan)} {s.reason}\n".encode())
            elif isinstance(s, LocalControlFlow):
                h.update(f"cf {s.op.name} {s.operand_layouts} {s.result_layouts} {s.trip_count}\n".encode())
                for b in s.blocks:
                    h.update(f"block {b.arg_layouts} {[(names.get(id(v)), l) for v, l in b.results]}\n".encode())
                    walk(b.steps)
    h.update(f"{parted.arg_layouts} {parted.result_layouts} "
             f"{[(names[id(v)], l) for v, l in parted.results]}\n".encode())
    walk(parted.steps)
    return h.hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stages", type=int, nargs="*", default=[4, 24])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--profile", type=int, default=0)
    ap.add_argument("--digest", action="store_true")
    ap.add_argument("--cpu", action="store_true")
    args = ap.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    import spmdkit
    from spmdkit.partition import partition
    if args.profile:
        import cProfile
        import pstats
        _, program, _ = propagated(args.profile)
        partition(program)  # warm: rule registry, jax imports
        prof = cProfile.Profile()
        prof.enable()
        partition(program)
        prof.disable()
        stats = pstats.Stats(prof).sort_stats(os.environ.get("SORT", "tottime"))
        stats.print_stats(int(os.environ.get("ROWS", "30")))
        return
    unit = "CPU" if args.cpu else "wall"
    print(f"partition alone, best of {args.repeat}, {unit} ms (propagate: of a fresh import, alternating)")
    print(f"{'layers':>6} {'ops':>6} | {'propagate':>9} {'partition':>9} {'handed':>7} | partition/propagate "
          f"handed/propagate | digest")
    for layers in args.stages:
        fresh, program, signatures = propagated(layers)
        n_ops = sum(1 for _ in program.walk())
        prop, part, handed, parted = [], [], [], None
        for _ in range(args.repeat):
            other = fresh()
            t = clock()
            spmdkit.propagate(other)
            prop.append(clock() - t)
            del other
            t = clock()
            parted = partition(program)
            part.append(clock() - t)
            t = clock()
            parted_handed = partition(program, signatures=signatures)
            handed.append(clock() - t)
        p, q, h = min(prop) * 1e3, min(part) * 1e3, min(handed) * 1e3
        mark = digest(parted) if args.digest else "-"
        if args.digest and digest(parted_handed) != mark:
            mark += " (handed: differs!)"
        print(f"{layers:>6} {n_ops:>6} | {p:>9.1f} {q:>9.1f} {h:>7.1f} | {q / p:>19.2f} {h / p:>16.2f} | {mark}",
              flush=True)


if __name__ == "__main__":
    main()
