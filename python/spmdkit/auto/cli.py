"""`spmdkit auto FILE --mesh dp=2,mp=4 [--memory-limit 2GB]`: search a sharding for every value of
a StableHLO+sdy MLIR program (spmdkit's printed text is the same MLIR) and print the annotated
program. Arguments the file annotates keep their sharding; results with a declared sharding keep
it; everything else is the search's. The search's summary goes to stderr as `//` lines.
"""
from __future__ import annotations

import re
import sys

from ..cli_support import ArgumentParser, mesh_argument

_UNITS = {"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "kib": 2 ** 10, "mib": 2 ** 20, "gib": 2 ** 30,
          "tib": 2 ** 40}
_BYTES = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_bytes(text: str) -> float:
    """`2GB`, `512MiB`, `1e9`, `4096` -> bytes (argparse's type error with the accepted forms)."""
    import argparse
    m = _BYTES.match(text)
    unit = m.group(2).lower() if m else None
    if m is None or unit not in _UNITS or float(m.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive size like 2GB, 512MiB or 1e9 (bytes)")
    return float(m.group(1)) * _UNITS[unit]


def _install_mesh(program, mesh_text) -> None:
    """The --mesh becomes the program's one mesh, under the name the file's annotations use."""
    from ..sharding import Mesh
    names = list(program.meshes)
    if len(names) > 1:
        raise ValueError(f"the file declares {len(names)} meshes ({', '.join(names)}); the search takes one")
    name = names[0] if names else "mesh"
    program.meshes.clear()
    program.meshes[name] = Mesh(dict(mesh_text.axes()))


def main(argv: list[str]) -> int:
    ap = ArgumentParser(prog="spmdkit auto", description=__doc__)
    ap.add_argument("file")
    ap.add_argument("--mesh", required=True, type=mesh_argument, help="e.g. dp=2,mp=4 or 2x4 (axes x, y)")
    ap.add_argument("--memory-limit", type=parse_bytes, default=None,
                    help="bytes per device for arguments and results, e.g. 2GB")
    ap.add_argument("--flops", type=float, default=None, help="one device's FLOP/s (default 1e12)")
    ap.add_argument("--time-limit", type=float, default=30.0, help="solver time limit, seconds (default 30)")
    args = ap.parse_args(argv)
    from .. import ir
    from .cost import DEFAULT_AUTO_COST, AutoCostModel
    from .search import auto_shard
    program = ir.load(args.file)
    ir.inline_calls(program)
    _install_mesh(program, args.mesh)
    cost = DEFAULT_AUTO_COST if args.flops is None else AutoCostModel(flops_per_s=args.flops)
    report = auto_shard(program, memory_limit=args.memory_limit, cost=cost, time_limit_s=args.time_limit)
    print(ir.print_program(program))
    for line in str(report).splitlines():
        print(f"// {line}", file=sys.stderr)
    return 0
