"""Factor tables written as text, for tests and hand-built graphs.

Two spellings are accepted:
  - an einsum-like shorthand: "ij,jk->ik" (factors numbered in alphabetical order), a compound dim in parentheses "(ij)k->ijk", `_` for a
    size-1 dim that has no factor; factor sizes come from the tensor shapes (a compound dim's
    factors need `sizes=`);
  - Shardy's printed OpShardingRule, which is what `spmd::FactorTable::to_string()` prints:
    "([i, k], [k, j])->([i, j]) {i=8, j=16, k=32} reduction={k}".
Returns (operands, results, sizes, kinds, blocked) as the engine takes them.
"""
from __future__ import annotations

import re

KINDS = ("reduction", "need_replication", "permutation")


class FactorTableError(ValueError):
    """A factor table text that does not parse or does not fit the tensors' shapes."""


def _split_top(s: str, sep: str):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def _shorthand_tensor(spec: str):
    dims, k = [], 0
    spec = spec.strip()
    while k < len(spec):
        ch = spec[k]
        if ch == "(":
            end = spec.index(")", k)
            dims.append(list(spec[k + 1:end]))
            k = end + 1
        elif ch == "_":
            dims.append([])
            k += 1
        elif ch.isalpha():
            dims.append([ch])
            k += 1
        elif ch.isspace():
            k += 1
        else:
            raise FactorTableError(f"factor table: unexpected {ch!r} in {spec!r}")
    return dims


def _printed_tensor(spec: str):
    spec = spec.strip()
    if not (spec.startswith("[") and spec.endswith("]")):
        raise FactorTableError(f"factor table: expected [..] for a tensor, got {spec!r}")
    body = spec[1:-1].strip()
    if not body:
        return []
    return [re.findall(r"[a-z](?:_\d+)?", d) for d in body.split(",")]


def parse_factor_table(text: str, shapes_in, shapes_out, sizes=None, kinds=None, blocked=()):
    """`kinds` maps a factor name to one of KINDS (pass-through otherwise)."""
    sizes = dict(sizes or {})
    kinds = dict(kinds or {})
    printed = "[" in text  # Shardy's printed form writes each tensor in brackets
    printed_order = []
    if printed:
        m = re.match(r"\s*\((.*)\)\s*->\s*\((.*?)\)\s*(\{.*?\})?(.*)$", text)
        if not m:
            raise FactorTableError(f"factor table {text!r}: not Shardy's printed form")
        ins = [_printed_tensor(t) for t in _split_top(m.group(1), ",")] if m.group(1).strip() else []
        outs = [_printed_tensor(t) for t in _split_top(m.group(2), ",")] if m.group(2).strip() else []
        for name, size in re.findall(r"(\w+)=(\d+)", m.group(3) or ""):
            sizes.setdefault(name, int(size))
            printed_order.append(name)
        for label, names in re.findall(r"(\w+)=\{([^}]*)\}", m.group(4) or ""):
            for name in re.findall(r"[a-z](?:_\d+)?", names):
                if label == "blocked_propagation":
                    blocked = tuple(blocked) + (name,)
                elif label in KINDS:
                    kinds.setdefault(name, label)
    else:
        if "->" not in text:
            raise FactorTableError(f"factor table {text!r}: missing '->'")
        lhs, rhs = text.split("->")
        # an empty side is no tensor, or one scalar when one shape is given
        ins = [_shorthand_tensor(t) for t in lhs.split(",")] if lhs.strip() or len(shapes_in) == 1 else []
        outs = [_shorthand_tensor(t) for t in rhs.split(",")] if rhs.strip() or len(shapes_out) == 1 else []
    tensors = ins + outs
    shapes = [list(s) for s in list(shapes_in) + list(shapes_out)]
    if len(tensors) != len(shapes):
        raise FactorTableError(f"factor table {text!r}: {len(tensors)} tensors, but {len(shapes)} shapes given")
    order = list(printed_order)
    for t, shape in zip(tensors, shapes):
        if len(t) != len(shape):
            raise FactorTableError(f"factor table {text!r}: a tensor has {len(t)} dims, its shape {shape} has {len(shape)}")
        for dim, extent in zip(t, shape):
            for f in dim:
                if f not in order:
                    order.append(f)
            if len(dim) == 1 and kinds.get(dim[0]) != "permutation":  # a permutation factor may change size
                if sizes.setdefault(dim[0], extent) != extent:
                    raise FactorTableError(f"factor table {text!r}: factor {dim[0]!r} has sizes {sizes[dim[0]]} and {extent}")
    if not printed:  # shorthand factors are numbered alphabetically (Shardy's order for dot_general: "bik,bkj->bij")
        order.sort()
    for t, shape in zip(tensors, shapes):
        for dim, extent in zip(t, shape):
            if len(dim) == 1:
                sizes.setdefault(dim[0], extent)
    for f in order:
        if f not in sizes:
            raise FactorTableError(f"factor table {text!r}: the size of compound factor {f!r} must be given in sizes=")
    for name, kind in kinds.items():
        if kind not in KINDS:
            raise FactorTableError(f"factor table {text!r}: kind {kind!r} of factor {name!r} is not one of {KINDS}")
    ids = {f: n for n, f in enumerate(order)}
    to_ids = lambda t: [[ids[f] for f in dim] for dim in t]
    return ([to_ids(t) for t in ins], [to_ids(t) for t in outs], [sizes[f] for f in order],
            [kinds.get(f, "pass_through") for f in order], [f in set(blocked) for f in order])
