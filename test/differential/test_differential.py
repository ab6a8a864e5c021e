"""Differential test: spmdkit and Paddle 3.3.1 get identical calls and must give identical
answers (every input and output: multi_dims_mapping, partial mesh dims and reduce types).

Cases come from the ops' samplers with seeded rngs, on random 1-D to 3-D meshes, each dim split
over at most one mesh dim (Paddle's model) and partial inputs SUM only (all Paddle can set).
Every registry name is called: an op's own name on many cases, each alias on fewer (Paddle binds
some aliases to other functions, e.g. `multiply` vs `elementwise_mul`). A disagreement passes
only if documented.py excuses it and the simulator proves spmdkit right and Paddle wrong on that
very case.
"""
from dataclasses import replace

import numpy as np
import pytest

from spmdkit.verify import RuleRejected, load_specs, verifiable_ops
from spmdkit.verify.random_mode import check_call, draw_case, functions_of
from spmdkit.verify.samplers import Options, random_mesh
from spmdkit.verify.simulate import BadCase, Verdict

from .documented import excuse

SPECS = load_specs()
SEED = 2024
# (cases per function, options): one mesh dim per tensor dim as in Paddle's classic model, and
# a run where dims are also split over several mesh dims (Paddle 3.3.1's co-shard).
VARIANTS = {
    "single": (250, Options(partial_types=("sum",), p_multi=0.0)),
    "coshard": (80, Options(partial_types=("sum",), p_multi=0.3)),
}
ALIAS_CASES = {"single": 30, "coshard": 12}
# (registry name, YAML entry): every name spmdkit registers for a verifiable op. Dialect-prefixed
# names (jax.*, stablehlo.*) are rules Paddle cannot have; their peer is Shardy
# (test/test_shardy_differential.py).
NAMES = [(name, op) for op in verifiable_ops(SPECS) for name in [op, *SPECS[op].aliases] if "." not in name]


def answer(backend, case, ex):
    """((ins, outs), Verdict), or ('rejected', a false Verdict carrying the rule's message)."""
    try:
        ins, outs, verdict = check_call(backend, case, ex)
    except RuleRejected as e:
        return "rejected", Verdict(False, f"rejected: {e}")
    verdict.answer = (ins, outs)  # documented.py predicates may look at what Paddle inferred
    return (ins, outs), verdict


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("name,op", NAMES, ids=[name for name, _ in NAMES])
def test_same_answers_as_paddle(name, op, variant, paddle_backend, peer_backend, agreement):
    spec = SPECS[op]
    if not paddle_backend.has_rule(name):
        pytest.skip(f"Paddle has no rule {name}")
    n_cases, options = VARIANTS[variant]
    if name != op:
        n_cases = ALIAS_CASES[variant]
    failures = []
    for function in functions_of(spec):
        row = agreement.setdefault((name, function), {"cases": 0, "agree": 0, "documented": 0, "disagree": 0, "both_right": 0})
        for i in range(n_cases):
            rng = np.random.default_rng([SEED, i, len(function), len(variant)])
            try:
                case, ex = draw_case(spec, function, SPECS, rng, random_mesh(rng), options)
            except BadCase:
                continue
            case = replace(case, rule=name)
            theirs, paddle_verdict = answer(paddle_backend, case, ex)
            ours, our_verdict = answer(peer_backend, case, ex)
            row["cases"] += 1
            if theirs == ours:
                row["agree"] += 1
                continue
            paddle_wrong = not paddle_verdict
            reason = excuse(case, paddle_verdict) if paddle_wrong else None
            if reason and our_verdict and paddle_wrong:
                row["documented"] += 1
                reasons = row.setdefault("reasons", {})
                reasons[reason] = reasons.get(reason, 0) + 1
                continue
            row["disagree"] += 1
            both_right = bool(our_verdict) and not paddle_wrong
            row["both_right"] += both_right
            # Two right answers that differ (a tie broken another way) count against the agreement
            # rate below; a wrong or refused spmdkit answer fails at once.
            if not both_right and len(failures) < 3:
                failures.append(f"{case.describe(ex.spec)}\n  paddle:  {fmt(theirs, paddle_verdict)}"
                                f"\n  spmdkit: {fmt(ours, our_verdict)}")
    assert not failures, f"{name}: spmdkit differs from Paddle and is not proven right:\n" + "\n".join(failures)


AGREEMENT_TARGET = 0.995


def test_agreement_rate(agreement):
    """Per op and function, Paddle's answer or a documented, execution-proven difference in >= 99.5%."""
    if not agreement:
        pytest.skip("no differential cases ran")
    low = [f"{op}.{fn}: {(r['agree'] + r['documented']) / r['cases']:.2%} of {r['cases']}"
           for (op, fn), r in sorted(agreement.items())
           if r["cases"] and (r["agree"] + r["documented"]) / r["cases"] < AGREEMENT_TARGET]
    assert not low, "agreement below 99.5%: " + "; ".join(low)


def fmt(ans, verdict) -> str:
    if ans == "rejected":
        return verdict.reason
    from spmdkit.verify.outcome import fmt_result
    return fmt_result(*ans) + ("  [right]" if verdict else f"  [wrong: {verdict.reason}]")
