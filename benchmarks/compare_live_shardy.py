"""Agreement of our propagation with the live Shardy (jaxlib's), value by value, on random
StableHLO programs (test/propagation/stablehlo_programs.py: elementwise, dot_general, transpose,
reshape, reduce, broadcast_in_dim; random meshes and argument shardings), with and without
sharding constraints and user priorities. Prints how many programs and values differ, and a few
examples. (Real programs, the GPT and control-flow steps, agree on every value:
test/propagation/test_propagation_vs_live_shardy.py.)

    PYTHONPATH=python python benchmarks/compare_live_shardy.py [--programs 300] [--ops 8]
"""
from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, "test"), os.path.join(ROOT, "test", "propagation")]
from stablehlo_programs import random_stablehlo_program  # noqa: E402
from test_propagation_vs_live_shardy import compare  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=300)
    ap.add_argument("--ops", type=int, default=8)
    args = ap.parse_args()
    for constraints, priorities in [(False, False), (True, False), (False, True), (True, True)]:
        programs = values = differ_programs = differ_values = 0
        examples = []
        for seed in range(args.programs):
            compared, differ = compare(random_stablehlo_program(seed, args.ops, constraints, priorities))
            programs += 1
            values += compared
            differ_programs += bool(differ)
            differ_values += len(differ)
            if differ and len(examples) < 2:
                examples.append((seed, differ[0]))
        print(f"constraints={constraints!s:5} priorities={priorities!s:5}: {differ_programs} of {programs} programs, "
              f"{differ_values} of {values} values differ ({100 * differ_values / max(values, 1):.2f}%); e.g. {examples}")


if __name__ == "__main__":
    main()
