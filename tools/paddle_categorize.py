"""Group the calls where spmdkit and Paddle 3.3.1 still differ by why they differ: Paddle's
rejection message or the simulator's finding, with one example each. Documented differences are
left out unless --raw. What remains is what a documented.py entry (or a fix) must cover.

    python tools/paddle_categorize.py OP [OP ...] [--raw] [--cases 300] [--seed 9]
"""
import argparse
import collections
import re
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))
warnings.filterwarnings("ignore")

from differential.documented import excuse  # noqa: E402
from differential.test_differential import answer, fmt  # noqa: E402
from spmdkit.verify import get_backend, load_specs  # noqa: E402
from spmdkit.verify.random_mode import draw_case, functions_of  # noqa: E402
from spmdkit.verify.samplers import Options, random_mesh  # noqa: E402
from spmdkit.verify.simulate import BadCase  # noqa: E402


def category(theirs, tv, mine, mv) -> str:
    if theirs == "rejected":
        why = re.sub(r"\d+", "N", tv.reason)[:120]
    elif not tv:
        why = "wrong: " + re.sub(r"[\d\[\]\(\),\-]+", "#", tv.reason)[:90]
    else:
        why = "BOTH RIGHT (a tie broken differently: counts against the agreement rate)"
    return ("SPMDKIT WRONG: " if not mv else "") + why


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ops", nargs="+")
    ap.add_argument("--raw", action="store_true", help="also list documented differences")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=9)
    a = ap.parse_args()
    specs = load_specs()
    paddle, ours = get_backend("paddle"), get_backend("spmdkit")
    for op in a.ops:
        for function in functions_of(specs[op]):
            counts, example = collections.Counter(), {}
            for multi in (0.0, 0.3):
                for i in range(a.cases):
                    rng = np.random.default_rng([a.seed, i, len(function), int(multi * 10)])
                    try:
                        case, ex = draw_case(specs[op], function, specs, rng, random_mesh(rng),
                                             Options(partial_types=("sum",), p_multi=multi))
                    except BadCase:
                        continue
                    theirs, tv = answer(paddle, case, ex)
                    mine, mv = answer(ours, case, ex)
                    if theirs == mine or (not tv and mv and not a.raw and excuse(case, tv)):
                        continue
                    why = category(theirs, tv, mine, mv)
                    counts[why] += 1
                    example.setdefault(why, f"{case.describe(ex.spec)}\n      paddle:  {fmt(theirs, tv)}"
                                            f"\n      spmdkit: {fmt(mine, mv)}")
            print(f"== {op}.{function}")
            for why, n in counts.most_common():
                print(f"  {n:4d} {why}\n      e.g. {example[why]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
