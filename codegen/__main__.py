"""python -m codegen [--specs rules_yaml] --out DIR: write the generated C++ for reading or building."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .emit import write
from .spec import SpecError, load_specs

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m codegen", description=__doc__)
    ap.add_argument("--specs", type=Path, default=ROOT / "rules_yaml", help="folder of *.yaml op specs")
    ap.add_argument("--out", type=Path, required=True, help="folder for the generated C++")
    ap.add_argument("--list", action="store_true", help="print the generated file names and exit")
    args = ap.parse_args(argv)
    try:
        specs = load_specs(args.specs)
    except SpecError as e:
        print(f"spec error: {e}", file=sys.stderr)
        return 2
    paths = write(specs, args.out)
    if args.list:
        print("\n".join(str(p) for p in paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
