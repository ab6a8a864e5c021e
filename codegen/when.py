"""`when:` — attribute- or presence-dependent variants of an einsum spec, chosen per call.

    reduce: {x: axis, keep_dim: keepdims, partial: none}
    when:
      - if: "porder in [1, 0]"        # a condition, or a list of them (all must hold)
        reduce: {partial: sum}         # the keys this variant changes
      - if: asvector
        reduce: {x: all}

Every entry whose condition holds applies, in order, a later one overriding an earlier one key
by key; `reduce` merges sub-key by sub-key (x, keep_dim, partial), any other key is replaced
whole. A variant may also set `einsum` or `sources`: it then runs a static rule of its own.
Conditions (conditions.py): bool attributes, optional inputs (`NAME absent`), comparisons of
number and string attributes, `len(LIST)`, with not/and/or (! & |) and parentheses.
The generated C++ branches once per call on plain attribute values: no per-call allocation.
"""
from __future__ import annotations

from .conditions import compile_condition
from .errors import SpecError

# Keys a variant may change. `einsum` and `sources` belong to the rule: a variant setting one
# picks a rule of its own (the last such variant that holds wins); the others are edits of the
# call and merge key by key. The remaining options (merge, ones, ...) are one per op.
RULE_KEYS = ("einsum", "sources")
VARIANT_KEYS = RULE_KEYS + ("replicate", "reduce", "whole", "transpose", "permute", "insert_dim", "like")


def _err(spec, msg: str):
    return SpecError(f"{spec.where}: when: {msg}")


def condition(spec, cond) -> str:
    """A C++ boolean expression for one `if:` (conditions.py has the grammar)."""
    return compile_condition(spec, cond)


def variants(spec) -> list[tuple[str, dict]]:
    """(C++ condition, keys it sets) per `when` entry, checked."""
    out = []
    for k, entry in enumerate(spec.raw.get("when") or []):
        if not isinstance(entry, dict) or "if" not in entry:
            raise _err(spec, f"entry {k} needs an 'if'")
        keys = {key: v for key, v in entry.items() if key != "if"}
        bad = [key for key in keys if key not in VARIANT_KEYS]
        if bad:
            raise _err(spec, f"entry {k} sets '{bad[0]}'; a variant may set only {', '.join(VARIANT_KEYS)}")
        out.append((condition(spec, entry["if"]), keys))
    return out


def chain(base, overrides: list[tuple[str, object]]) -> list[tuple[str, object]]:
    """[(condition, value)] to test in order, the last being ("", base): later entries win."""
    return [(c, v) for c, v in reversed(overrides)] + [("", base)]


def branch(cases: list[tuple[str, list[str]]]) -> list[str]:
    """if / else if / else over (condition, statements); "" is the final else."""
    if len(cases) == 1:
        return cases[0][1]
    if not cases[-1][1]:  # nothing to do otherwise: no else
        cases = cases[:-1]
    lines = []
    for k, (cond, body) in enumerate(cases):
        head = "} else {" if not cond else ("if (" if k == 0 else "} else if (") + cond + ") {"
        lines.append(head)
        lines += ["  " + line for line in body]
    lines.append("}")
    return lines


def ternary(cases: list[tuple[str, str]]) -> str:
    expr = cases[-1][1]
    for cond, value in reversed(cases[:-1]):
        expr = f"({cond}) ? {value} : {expr}"
    return expr
