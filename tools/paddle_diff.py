"""Explore where spmdkit and Paddle 3.3.1 differ on one op (the differential test, with more cases
and the differing calls printed).

    python tools/paddle_diff.py OP [--cases 200] [--show 4] [--multi 0.0] [--seed 7]
"""
import argparse
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("op")
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--show", type=int, default=4, help="differing calls to print per function")
    ap.add_argument("--multi", type=float, default=0.0, help="chance of splitting a dim over several mesh dims")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    specs = load_specs()
    paddle, ours = get_backend("paddle"), get_backend("spmdkit")
    opts = Options(partial_types=("sum",), p_multi=a.multi)
    for function in functions_of(specs[a.op]):
        stats = dict(cases=0, agree=0, documented=0, differ=0, both_right=0)
        shown = 0
        for i in range(a.cases):
            rng = np.random.default_rng([a.seed, i, len(function)])
            try:
                case, ex = draw_case(specs[a.op], function, specs, rng, random_mesh(rng), opts)
            except BadCase:
                continue
            theirs, tv = answer(paddle, case, ex)
            mine, mv = answer(ours, case, ex)
            stats["cases"] += 1
            if theirs == mine:
                stats["agree"] += 1
                continue
            paddle_wrong = not tv
            if paddle_wrong and mv and excuse(case, tv):
                stats["documented"] += 1
                continue
            stats["differ"] += 1
            stats["both_right"] += bool(mv) and not paddle_wrong
            if shown < a.show:
                shown += 1
                print(case.describe(ex.spec))
                print("  paddle: ", fmt(theirs, tv))
                print("  spmdkit:", fmt(mine, mv))
        print(a.op, function, stats)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
