"""python -m codegen [--specs rules_yaml] --out DIR: write the generated C++ for reading or building.

Needs the build's own requirements, which installing spmdkit does not bring along:
`pip install jinja2 jsonschema pyyaml` (or `pip install ".[test]"`).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

NEEDS = ("jinja2", "jsonschema", "yaml")

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m codegen", description=__doc__)
    ap.add_argument("--specs", type=Path, default=ROOT / "rules_yaml", help="folder of *.yaml op specs")
    ap.add_argument("--out", type=Path, help="folder for the generated C++")
    ap.add_argument("--list", action="store_true", help="print the generated file names and exit")
    ap.add_argument("--check", action="store_true",
                    help="only check the specs (what CMake runs when it configures, so that a spec's error is "
                         "the last thing a build prints)")
    args = ap.parse_args(argv)
    if args.out is None and not args.check:
        ap.error("--out DIR is required (or --check)")
    try:
        from .spec import SpecError, load_specs
        if not args.check:
            from .emit import write
    except ImportError as e:
        if e.name not in NEEDS:
            raise
        pip = {"yaml": "pyyaml"}.get(e.name, e.name)
        print(f"python -m codegen: error: it needs {pip}, a build requirement that installing spmdkit does not "
              f"bring: pip install jinja2 jsonschema pyyaml", file=sys.stderr)
        return 2
    try:
        specs = load_specs(args.specs)
        if args.check:
            return 0
        paths = write(specs, args.out)
    except SpecError as e:
        print(f"spec error: {e}", file=sys.stderr)
        return 2
    if args.list:
        print("\n".join(str(p) for p in paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
