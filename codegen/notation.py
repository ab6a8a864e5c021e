"""Check an einsum-style spec: the notation and the attribute edits that refer to it.

The C++ engine parses the same notation at run time (spmd_rules/notation.cc); this module only
rejects what the engine could not run, at build time, with the YAML file and entry named.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import SpecError

_ITEM = re.compile(r"\s*(\.\.\.|[a-z]\??|[A-Z]|\([A-Z]\)|1|_|\*|@)")


@dataclass
class Notation:
    text: str
    inputs: list[list[str]]
    outputs: list[list[str]]

    def letters(self, patterns: list[list[str]]) -> set[str]:
        return {it[0] for p in patterns for it in p if it[0].isalpha()}


def _pattern(text: str, where: str) -> list[str]:
    """Items of one tensor's pattern: '...', 'a', 'a?', 'A', '(A)', '1', '_' (the rest of the
    tensor's dims, whole), or a whole-pattern '*' / '@' (an equation's operands / result)."""
    items, pos, text = [], 0, text.strip()
    while pos < len(text):
        m = _ITEM.match(text, pos)
        if not m:
            raise _err(where, f"cannot read '{text[pos:]}' in pattern '{text}'")
        items.append(m.group(1))
        pos = m.end()
    return items


def _err(where: str, msg: str):
    return SpecError(f"{where}: einsum: {msg}")


def check(spec) -> Notation:
    where = spec.where
    text = spec.raw["einsum"]
    if text.count("->") != 1:
        raise _err(where, f"'{text}' needs exactly one '->'")
    lhs, rhs = text.split("->")
    ins = [_pattern(p, where) for p in lhs.split(",")] if lhs.strip() or spec.inputs else []  # "-> @": no inputs
    outs = [_pattern(p, where) for p in rhs.split(",")]
    if len(ins) != len(spec.inputs):
        raise _err(where, f"{len(ins)} input patterns for {len(spec.inputs)} inputs")
    if len(outs) != len(spec.outputs):
        raise _err(where, f"{len(outs)} output patterns for {len(spec.outputs)} outputs")
    n = Notation(text, ins, outs)
    _check_placeholders(spec, ins, outs)
    sized = set((spec.raw.get("groups") or {}).keys())
    known = set(sized)
    for k, p in enumerate(ins + outs):
        # a group takes its length from the first input that has it; outputs take theirs from inputs
        variable = [it for it in p if it in ("...", "_") or (it.isupper() and it not in known)]
        if k < len(ins):
            known |= {it for it in p if it.isupper()}
        if len(variable) > 1:
            raise _err(where, f"a pattern may have one dim group of unknown length, got {variable}")
    if any("_" in p for p in outs) and not spec.raw.get("forward_outputs"):
        raise _err(where, "an output pattern with '_' needs 'forward_outputs: true' (its rank comes from the given output)")
    in_letters = n.letters(ins)
    new = set(spec.raw.get("new_dims") or [])
    for p in outs:
        for it in p:
            if it[0].islower() and not it.endswith("?") and it[0] not in in_letters and it[0] not in new:
                raise _err(where, f"output letter '{it[0]}' is in no input (list it in new_dims if the op creates it)")
            if it[0] in "(" and it[1] not in in_letters:
                raise _err(where, f"output group '{it}' is in no input")
    _check_edits(spec, n)
    return n


def _check_placeholders(spec, ins, outs) -> None:
    """'*' (the equation's operands) and '@' (its result) stand alone, and need `equation`."""
    for p in ins + outs:
        if any(it in ("*", "@") for it in p):
            if len(p) != 1:
                raise _err(spec.where, f"'*' and '@' must be a whole pattern, got {' '.join(p)!r}")
            if not spec.raw.get("equation") and not spec.raw.get("patterns"):
                raise _err(spec.where, f"pattern {p[0]!r} needs 'equation' (the attribute holding the einsum equation) "
                                       "or 'patterns' (a pattern builder)")


def _attr(spec, name: str, types: tuple, key: str):
    a = spec.attr(name)
    if a is None:
        raise _err(spec.where, f"'{key}' names '{name}', which is not an attribute")
    if a.type not in types:
        raise _err(spec.where, f"'{key}' needs '{name}' of type {' or '.join(types)}, it is {a.type}")
    return a


def _input(spec, name: str, key: str) -> int:
    i = spec.input_index(name)
    if i is None:
        raise _err(spec.where, f"'{key}' names '{name}', which is not an input")
    return i


def _check_edits(spec, n: Notation) -> None:
    raw = spec.raw
    for t, a in (raw.get("transpose") or {}).items():
        _input(spec, t, "transpose")
        _attr(spec, a, ("bool",), "transpose")
    rep = raw.get("replicate")
    if isinstance(rep, dict):
        for t, a in rep.items():
            _input(spec, t, "replicate")
            if isinstance(a, str):
                _attr(spec, a, ("int", "int64", "int[]", "int64[]"), "replicate")
    elif isinstance(rep, list):
        known = n.letters(n.inputs) | {it[1] for p in n.inputs for it in p if it.startswith("(")}
        for letter in rep:
            if letter not in known:
                raise _err(spec.where, f"'replicate' names '{letter}', which is in no input pattern")
    red = raw.get("reduce")
    if red:
        tensors = [k for k in red if k not in ("keep_dim", "partial", "empty", "squeeze")]
        if len(tensors) != 1:
            raise _err(spec.where, "'reduce' names exactly one input and its axis attribute")
        _input(spec, tensors[0], "reduce")
        if red[tensors[0]] != "all":  # `all`: every dim
            _attr(spec, red[tensors[0]], ("int", "int64", "int[]", "int64[]"), "reduce")
        if "keep_dim" in red:
            _attr(spec, red["keep_dim"], ("bool",), "reduce")
        p = red.get("partial", "sum")
        if p not in ("sum", "avg", "max", "min", "prod", "any", "all", "none"):
            _attr(spec, p, ("int",), "reduce.partial")
        if len(spec.outputs) != 1:
            raise _err(spec.where, "'reduce' needs a single output")
    whole = raw.get("whole")
    if whole:
        tensors = [k for k in whole if k not in ("empty", "keep", "per_dim", "align", "lead", "keep_size")]
        if len(tensors) != 1:
            raise _err(spec.where, "'whole' names exactly one input and its attribute")
        _input(spec, tensors[0], "whole")
        if "keep" in whole:
            _attr(spec, whole[tensors[0]], ("int[]", "int64[]"), "whole")
            if "empty" in whole:
                raise _err(spec.where, "'whole' with 'keep' reads a value per dim; 'empty' is for axis lists")
        else:
            _attr(spec, whole[tensors[0]], ("int", "int64", "int[]", "int64[]"), "whole")
            extra = [k for k in ("per_dim", "align", "lead", "keep_size") if k in whole]
            if extra:
                raise _err(spec.where, f"'whole' option '{extra[0]}' needs 'keep' (a value per dim)")
        if whole.get("lead") and whole.get("align") != "end":
            raise _err(spec.where, "'whole' option 'lead' needs 'align: end'")
        if whole.get("lead") and len(spec.outputs) != 1:
            raise _err(spec.where, "'whole' option 'lead' needs a single output")
    for out, t in (raw.get("unbroadcast") or {}).items():
        if not any(o.name == out and not o.is_list for o in spec.outputs):
            raise _err(spec.where, f"'unbroadcast' names '{out}', which is not a (single) output")
        _input(spec, t, "unbroadcast")
    if raw.get("flat_outputs") and not any(o.is_list for o in spec.outputs):
        raise _err(spec.where, "'flat_outputs' needs a list output")
    for t, a in (raw.get("insert_dim") or {}).items():
        _input(spec, t, "insert_dim")
        _attr(spec, a, ("int", "int64"), "insert_dim")
    for t, a in (raw.get("count") or {}).items():
        if not any(o.name == t and o.is_list for o in spec.outputs):
            raise _err(spec.where, f"'count' names '{t}', which is not a list output")
        m = re.fullmatch(r"([a-z_][a-z0-9_]*)\[([a-z_][a-z0-9_]*)\]", a)
        if m:  # "x[axis]": as many outputs as x's dim named by the axis attribute has elements
            _input(spec, m.group(1), "count")
            _attr(spec, m.group(2), ("int", "int64"), "count")
            continue
        m = re.fullmatch(r"len\(([a-z_][a-z0-9_]*)\)", a)
        if m:  # "len(xs)": one output per tensor of list input xs (variadic reduce, sort)
            if not spec.inputs[_input(spec, m.group(1), "count")].is_list:
                raise _err(spec.where, f"'count' len() names '{m.group(1)}', which is not a list input")
            continue
        _attr(spec, a, ("int", "int64", "int[]", "int64[]"), "count")
    for t in raw.get("sources") or []:
        _input(spec, t, "sources")
    for o, ts in (raw.get("depends") or {}).items():
        if not any(x.name == o for x in spec.outputs):
            raise _err(spec.where, f"'depends' names '{o}', which is not an output")
        for t in ts:
            _input(spec, t, "depends")
    if raw.get("conflict") and raw.get("merge", "coshard") != "coshard":
        raise _err(spec.where, "'conflict' applies to the co-shard merge only")
    known_letters = n.letters(n.inputs)
    pairs = list((raw.get("unsplit_if_split") or {}).items()) + [(x, x) for x in raw.get("replicate_after_merge") or []]
    for letter, trigger in pairs:
        for x in (letter, trigger):
            if x not in known_letters:
                raise _err(spec.where, f"'unsplit_if_split' / 'replicate_after_merge' names '{x}', which is in no input pattern")
    for t in raw.get("reverse_sources") or []:
        if not any(o.name == t for o in spec.outputs):
            raise _err(spec.where, f"'reverse_sources' names '{t}', which is not an output")
    if len(raw.get("reverse_sources") or []) > 8:
        raise _err(spec.where, "'reverse_sources' names at most 8 outputs")
    for t in raw.get("unreturned") or []:
        _input(spec, t, "unreturned")
    for attr, where in (raw.get("sizes") or {}).items():
        _attr(spec, attr, ("int[]",), "sizes")
        tensor, axis = where[:-1].split("[")
        _input(spec, tensor, "sizes")
        _attr(spec, axis, ("int", "int64"), "sizes")
    for t in raw.get("flattened") or []:
        if not any(x.name == t for x in list(spec.inputs) + list(spec.outputs)):
            raise _err(spec.where, f"'flattened' names '{t}', which is neither an input nor an output")
    if raw.get("equation"):
        _attr(spec, raw["equation"], ("str",), "equation")
    for a in raw.get("choices") or {}:
        _attr(spec, a, ("str",), "choices")
    if raw.get("patterns"):  # a pattern builder's arguments: tensor inputs and attributes
        for a in re.fullmatch(r"[a-z_]+\((.*)\)", raw["patterns"].replace(" ", "")).group(1).split(","):
            given_output = raw.get("forward_outputs") and any(o.name == a for o in spec.outputs)
            if a and spec.input_index(a) is None and spec.attr(a) is None and not given_output:
                raise _err(spec.where, f"'patterns' passes '{a}', which is neither an input nor an attribute"
                                       " (nor an output given to forward)")
    for key in ("like", "accumulate"):
        for a, b in (raw.get(key) or {}).items():
            out_name, in_name = (a, b) if key == "like" else (b, a)
            if not any(o.name == out_name for o in spec.outputs):
                raise _err(spec.where, f"'{key}' names '{out_name}', which is not an output")
            _input(spec, in_name, key)
            o = next(o for o in spec.outputs if o.name == out_name)
            i = spec.inputs[spec.input_index(in_name)]
            if key == "like" and o.is_list != i.is_list:
                raise _err(spec.where, f"'like' pairs '{out_name}' and '{in_name}': both or neither must be lists")
            if key == "accumulate" and (o.is_list or i.is_list):
                raise _err(spec.where, "'accumulate' takes single tensors, not lists")
    for out in raw.get("workspace") or []:
        if not any(o.name == out and not o.is_list for o in spec.outputs):
            raise _err(spec.where, f"'workspace' names '{out}', which is not a single output")
    for letter in raw.get("no_partial") or []:
        if letter not in n.letters(n.inputs):
            raise _err(spec.where, f"'no_partial' names '{letter}', which is in no input pattern")
    for t, a in (raw.get("permute") or {}).items():
        _input(spec, t, "permute")
        _attr(spec, a, ("int[]", "int64[]"), "permute")
    for g, a in (raw.get("groups") or {}).items():
        if not (len(g) == 1 and g.isupper()):
            raise _err(spec.where, f"'groups' key '{g}' must be one upper-case letter")
        dim = re.fullmatch(r"([a-z_][a-z0-9_]*)\.shape\[(-?\d+)\]", a)
        if dim:  # the length of one dim of a tensor input
            t = spec.input_index(dim.group(1))
            if t is None or spec.inputs[t].is_list:
                raise _err(spec.where, f"'groups' takes {g}'s length from '{dim.group(1)}', which is not a tensor input")
        else:
            _attr(spec, a, ("int", "int64"), "groups")
        if not any(g in p for p in n.inputs):
            raise _err(spec.where, f"group '{g}' is in no input pattern")
