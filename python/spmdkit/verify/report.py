"""The per-op table and the counterexamples."""
from __future__ import annotations

from .outcome import Tally


def table(tallies: list[Tally]) -> str:
    head = f"{'op':<20} {'function':<11} {'cases':>6} {'correct':>8} {'wrong':>6} {'rejected':>9} {'missing':>8}"
    lines = [head, "-" * len(head)]
    for t in tallies:
        missing = f"{100.0 * t.missing / t.cases:.0f}%" if t.function == "exhaustive" and t.cases else "-"
        lines.append(f"{t.op:<20} {t.function:<11} {t.cases:>6} {t.correct:>8} {t.wrong:>6} {t.rejected:>9} {missing:>8}")
    return "\n".join(lines)


def counterexamples(tallies: list[Tally], who: str) -> str:
    wrong = [t for t in tallies if t.wrong]
    if not wrong:
        return f"no wrong {who} rule found"
    out = [f"where {who} is wrong ({len(wrong)} op functions):"]
    for t in wrong:
        tags = ", ".join(f"{k} {v}" for k, v in sorted(t.wrong_tags.items()))
        out.append(f"- {t.op} {t.function}: {t.wrong}/{t.cases} wrong ({tags}), e.g.\n    {t.counterexample}")
    return "\n".join(out)


def missing_examples(tallies: list[Tally]) -> str:
    out = [f"- {t.op}: {t.missing}/{t.cases}, e.g.\n    {t.missing_example}" for t in tallies if t.missing_example]
    return ("missing shardings (right, but replicated a split that needed no communication):\n" + "\n".join(out)) if out else ""


def notes(tallies: list[Tally]) -> str:
    out = [f"- {t.op} {t.function}: {len(t.notes)} unusable samples, e.g. {t.notes[0]}" for t in tallies if t.notes]
    return ("sampler notes:\n" + "\n".join(out)) if out else ""


def rejections(tallies: list[Tally]) -> str:
    out = [f"- {t.op} {t.function}: {t.rejected}, e.g. {t.rejected_example}" for t in tallies if t.rejected_example]
    return ("rejected calls:\n" + "\n".join(out)) if out else ""
