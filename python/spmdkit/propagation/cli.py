"""`spmdkit propagate FILE` and `spmdkit explain FILE [VALUE ...]`: whole-program propagation of
a StableHLO+sdy MLIR program (or spmdkit's own printed text, which is the same MLIR)."""
from __future__ import annotations

import argparse
import sys


def _load(path):
    from .. import ir
    return ir.load(path)


def _labels(program):
    """Printed-style labels per IR value: fn.argI for arguments, fn.%N for op results in order."""
    out = []
    for fn in program.functions.values():
        for i, a in enumerate(fn.args):
            out.append((f"@{fn.name}.%arg{i}", a))
        n = 0
        for op in fn.walk():
            for r in op.results:
                out.append((f"@{fn.name}.%{n}", r))
                n += 1
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog=f"spmdkit {argv[0]}", description=__doc__)
    ap.add_argument("file")
    if argv[0] == "explain":
        ap.add_argument("values", nargs="*", help="labels like @main.%%3 or @main.%%arg0 (default: all)")
    ap.add_argument("--basic", action="store_true", help="basic propagation only (no conflict resolution)")
    ap.add_argument("--no-op-priority", action="store_true")
    ap.add_argument("--no-user-priority", action="store_true")
    args = ap.parse_args(argv[1:])
    from .from_ir import propagate_program
    try:
        program = _load(args.file)
        result = propagate_program(program, aggressive=not args.basic, op_priority=not args.no_op_priority,
                                   user_priority=not args.no_user_priority)
    except (ValueError, TypeError, KeyError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if argv[0] == "propagate":
        from ..ir import print_program
        print(print_program(program))
        for name, why in result.opaque:
            print(f"// note: {name} has no factor table here, nothing propagated through it ({why})", file=sys.stderr)
        return 0
    wanted = set(args.values)
    for label, value in _labels(program):
        if (not wanted or label in wanted) and id(value) in result.value_ids:
            print(label + " " + result.explain(value))
    return 0
