"""`spmdkit verify OP | --all [--against-paddle]`: execute rules on simulated ranks."""
from __future__ import annotations

import argparse
import difflib
import sys
import time

from ..cli_support import ArgumentParser, positive_int

from .report import counterexamples, missing_examples, notes, rejections, table
from .specs import load_specs, resolve, verifiable_ops


def parse_args(argv):
    ap = ArgumentParser(prog="spmdkit verify", description=__doc__)
    ap.add_argument("ops", nargs="*", help="op names or aliases")
    ap.add_argument("--all", action="store_true", help="every op with a verify: kernel and sampler")
    ap.add_argument("--against-paddle", action="store_true", help="verify PaddlePaddle 3.3.1's rules instead")
    ap.add_argument("--backend", choices=["spmdkit", "paddle", "replicate"], help=argparse.SUPPRESS)
    ap.add_argument("--cases", type=positive_int, default=200, help="random cases per op function (default 200)")
    ap.add_argument("--draws", type=positive_int, default=2, help="exhaustive: shape/attribute draws per op (default 2)")
    ap.add_argument("--max-combos", type=positive_int, default=400, help="exhaustive: placement combinations per draw")
    ap.add_argument("--mode", choices=["random", "exhaustive", "both"], default="both")
    ap.add_argument("-v", "--verbose", action="store_true", help="also show why the rule rejected calls")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-multi", action="store_true", help="never split a dim over several mesh dims")
    ap.add_argument("--even", action="store_true", help="only splits that divide their dim")
    ap.add_argument("--partial-types", default="sum,avg,max,min",
                    help="random: reduce types for partial inputs (those the backend can express)")
    ap.add_argument("--max-ranks", type=positive_int, default=8, help="random meshes hold at most this many ranks")
    args = ap.parse_args(argv)
    if not args.ops and not args.all:
        ap.error("name an op or pass --all")
    bad = [t for t in args.partial_types.split(",") if t and t not in PARTIAL_TYPES]
    if bad:
        ap.error(f"--partial-types: {', '.join(bad)} not among {', '.join(PARTIAL_TYPES)}")
    return args


PARTIAL_TYPES = ("sum", "avg", "max", "min")


def _resolve(name: str, specs):
    try:
        return resolve(name, specs)
    except KeyError:
        near = difflib.get_close_matches(name, list(specs), n=3)
        raise KeyError(f"no op or alias named {name!r}" + (f"; nearest: {', '.join(near)}" if near else "")
                       + " (spmdkit list shows them all)") from None


def main(argv: list[str] | None = None) -> int:
    from .backends import get_backend
    from .exhaustive import run_exhaustive
    from .random_mode import run_random
    from .samplers import Options

    args = parse_args(sys.argv[1:] if argv is None else argv)
    specs = load_specs()
    names = verifiable_ops(specs) if args.all else [_resolve(n, specs).name for n in args.ops]
    backend_name = args.backend or ("paddle" if args.against_paddle else "spmdkit")
    backend = get_backend(backend_name)
    opts = Options(partial_types=tuple(t for t in args.partial_types.split(",") if t),
                   p_multi=0.0 if args.no_multi else Options.p_multi, even_only=args.even)
    tallies, t0 = [], time.time()
    for name in names:
        spec = specs[name]
        if not (spec.kernel and spec.sampler):
            print(f"{name}: no verify kernel/sampler, skipped", file=sys.stderr)
            continue
        if not backend.has_rule(name):
            print(f"{name}: {backend.name} has no rule of that name, skipped", file=sys.stderr)
            continue
        if args.mode in ("random", "both"):
            tallies += run_random(backend, spec, specs, args.cases, args.seed, args.max_ranks, opts)
        if args.mode in ("exhaustive", "both"):
            tallies.append(run_exhaustive(backend, spec, (2, 2), args.draws, args.seed, args.max_combos, not args.no_multi, args.even))
    print(f"{backend.name} rules, {time.time() - t0:.1f}s")
    print(table(tallies))
    print()
    print(counterexamples(tallies, backend.name))
    for extra in (missing_examples(tallies), notes(tallies), rejections(tallies) if args.verbose else ""):
        if extra:
            print()
            print(extra)
    wrong = any(t.wrong for t in tallies)
    return 1 if wrong and not args.against_paddle else 0


if __name__ == "__main__":
    sys.exit(main())
