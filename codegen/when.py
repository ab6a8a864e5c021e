"""`when:` — attribute- or presence-dependent variants of an einsum spec, chosen per call.

    reduce: {x: axis, keep_dim: keepdims, partial: none}
    when:
      - if: "porder in [1, 0]"        # a condition, or a list of them (all must hold)
        reduce: {partial: sum}         # the keys this variant changes
      - if: asvector
        reduce: {x: all}

Every entry whose condition holds applies, in order, a later one overriding an earlier one key
by key; `reduce` merges sub-key by sub-key (x, keep_dim, partial), any other key is replaced
whole. `einsum` may be overridden too (the generator then builds one static rule per notation).
Conditions: `NAME` / `not NAME` (a bool attribute), `NAME absent` / `NAME present` (an optional
input), `NAME == V`, `NAME != V`, `NAME in [V, ...]` (V a number, `inf` or `-inf`; for a string
attribute, a word such as `NHWC`).
The generated C++ branches once per call on plain attribute values: no per-call allocation.
"""
from __future__ import annotations

import re

# Keys a variant may change; the rest (merge, ones, sources, ...) are one per op.
VARIANT_KEYS = ("einsum", "replicate", "reduce", "whole", "transpose", "permute", "insert_dim")

_COND = re.compile(r"^\s*(not\s+)?([a-z_][a-z0-9_]*)\s*(?:(absent|present)|(==|!=|in)\s*(.+))?\s*$")


def _err(spec, msg: str):
    from .spec import SpecError
    return SpecError(f"{spec.where}: when: {msg}")


def _literal(text: str, type_: str, spec) -> str:
    t = text.strip()
    if type_ in ("str", "dtype"):  # a bare word or a quoted string: data_format == NHWC
        if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
            t = t[1:-1]
        if not re.fullmatch(r"[A-Za-z0-9_.\-]+", t):
            raise _err(spec, f"'{t}' is not a word to compare a {type_} attribute with")
        return f'"{t}"'
    if t in ("inf", "-inf"):
        if type_ != "float":
            raise _err(spec, f"'{t}' compares with a {type_} attribute")
        return ("-" if t.startswith("-") else "") + "kInf"
    try:
        v = float(t)
    except ValueError:
        raise _err(spec, f"'{t}' is not a number") from None
    return f"{v!r}f" if type_ == "float" else str(int(v))


def condition(spec, cond) -> str:
    """A C++ boolean expression for one `if:` (a string or a list of strings, all must hold)."""
    if isinstance(cond, list):
        return " && ".join(f"({condition(spec, c)})" for c in cond) or "true"
    m = _COND.match(str(cond))
    if not m:
        raise _err(spec, f"cannot read condition '{cond}'")
    neg, name, presence, op, rhs = m.groups()
    if presence:
        i = spec.input_index(name)
        if i is None or not spec.inputs[i].optional:
            raise _err(spec, f"'{cond}': '{name}' is not an optional input")
        return f"{'!' if presence == 'present' else ''}is_absent({name})"
    a = spec.attr(name)
    if a is None:
        raise _err(spec, f"'{cond}': '{name}' is not an attribute")
    if op is None:
        if a.type != "bool":
            raise _err(spec, f"'{cond}': '{name}' is not a bool attribute")
        return f"{'!' if neg else ''}{name}"
    if neg:
        raise _err(spec, f"'{cond}': 'not' goes with a bool attribute only")
    if a.type not in ("int", "int64", "float", "str", "dtype"):
        raise _err(spec, f"'{cond}': '{name}' is a {a.type}, not a number or a string")
    if op == "in":
        items = rhs.strip()
        if not (items.startswith("[") and items.endswith("]")):
            raise _err(spec, f"'{cond}': 'in' takes a list [V, ...]")
        values = [_literal(v, a.type, spec) for v in items[1:-1].split(",") if v.strip()]
        return " || ".join(f"{name} == {v}" for v in values) or "false"
    return f"{name} {op} {_literal(rhs, a.type, spec)}"


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
