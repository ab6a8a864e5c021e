"""`spmdkit propagate FILE` and `spmdkit explain FILE [VALUE ...]`: whole-program propagation of
a StableHLO+sdy MLIR program (or spmdkit's own printed text, which is the same MLIR).

`explain` addresses values by the file's own SSA names: `@main.%6`, `@main.%arg0`, `@main.%cst`
(or `%6` for a value of @main, or of the only function that has that name), and its reasons name
other values the same way. A name MLIR reuses in sibling regions (a case's branches) takes the
line of its op: `@main.%21@L28`. A label the file does not have is an error naming the nearest.
"""
from __future__ import annotations

import difflib
import re
import sys

from ..cli_support import ArgumentParser


def _load(path, ssa_names: bool):
    from .. import ir
    return ir.load(path, ssa_names=ssa_names)


_LINE = re.compile(r"^line (\d+)")


def _line_of(op):
    m = _LINE.match(op.location or "") if op is not None else None
    return int(m.group(1)) if m else None


def _block_values(block, owner=None):
    """(value, the line of the op that defines it) for every value of a block, nested ones too."""
    for a in block.args:
        yield a, _line_of(owner)
    for op in block.ops:
        for r in op.results:
            yield r, _line_of(op)
        for region in op.regions:
            for inner in region.blocks:
                yield from _block_values(inner, op)


def _labels(program) -> dict[str, object]:
    """label -> IR value, for every argument and result of every function (nested blocks too)
    that the file names: `@fn.%name`. MLIR reuses a name in sibling regions (the branches of a
    case, a while's body and another region): such a name is `@fn.%name@LLINE` for each of its
    values (values the text does not show have no label)."""
    out = {}
    for fn in program.functions.values():
        seen: dict[str, list] = {}
        for value, line in _block_values(fn.body):
            if value.name:
                seen.setdefault(f"@{fn.name}.%{value.name}", []).append((value, line))
        for label, values in seen.items():
            # a while's cond and body take the same names on one line: the first stands for them
            lines = list(dict.fromkeys(line for _, line in values))
            if len(lines) == 1:
                out[label] = values[0][0]
                continue
            for k, (value, line) in enumerate(values):
                out.setdefault(f"{label}@L{line}" if line is not None else f"{label}@{k + 1}", value)
    return out


def _resolve(wanted: str, labels: dict, program) -> str:
    """The label a user wrote, completed: `%6` -> `@main.%6` (or the one function with a %6)."""
    text = wanted.strip()
    if text in labels:
        return text
    if "." in text and not text.startswith("%"):
        fn, _, name = text.partition(".")
        fn = "@" + fn.lstrip("@")
        candidates = [f"{fn}.%{name.lstrip('%')}"]
    else:
        name = "%" + text.lstrip("%")
        candidates = [f"@{program.main.name}.{name}"] + [f"@{f}.{name}" for f in program.functions]
    for c in candidates:
        if c in labels:
            return c
    for c in candidates:
        several = [label for label in labels if label.startswith(c + "@")]
        if several:
            raise KeyError(f"{wanted!r} names {len(several)} values in the file (MLIR reuses names in sibling "
                           f"regions); name one: {', '.join(several)}")
    near = difflib.get_close_matches(candidates[0], list(labels), n=4, cutoff=0.5)
    raise KeyError(f"no value {wanted!r} in the file" +
                   (f"; nearest: {', '.join(near)}" if near else f"; values look like {next(iter(labels), '@main.%arg0')}"))


def _name_graph_values(result, labels: dict) -> None:
    """Give the graph's values the file's labels, so explanations name values as the file does."""
    label_of = {id(v): label for label, v in labels.items()}
    graph = result.graph
    for vid, v in enumerate(result.values):
        if v is not None and id(v) in label_of:
            graph.rename_value(vid, label_of[id(v)])
    for key, vid in result.value_ids.items():
        if isinstance(key, tuple) and key[0] == "result":
            graph.rename_value(vid, f"result {key[2]} of @{key[1]}")


_OP_NUMBER = re.compile(r"op #(\d+) '([^']*)'")


def _op_by_result(graph, text: str) -> str:
    """`op #6 'stablehlo.reduce'` (the graph's op number) -> `op 'stablehlo.reduce' of @main.%4`."""
    def named(m):
        results = graph.ops[int(m.group(1))]["results"]
        return f"op '{m.group(2)}'" + (f" of {graph.value_name(results[0])}" if results else "")
    return _OP_NUMBER.sub(named, text)


def main(argv: list[str]) -> int:
    ap = ArgumentParser(prog=f"spmdkit {argv[0]}", description=__doc__)
    ap.add_argument("file")
    if argv[0] == "explain":
        ap.add_argument("values", nargs="*", help="labels like @main.%%3, @main.%%arg0 or %%cst (default: all)")
    ap.add_argument("--basic", action="store_true", help="basic propagation only (no conflict resolution)")
    ap.add_argument("--no-op-priority", action="store_true")
    ap.add_argument("--no-user-priority", action="store_true")
    args = ap.parse_args(argv[1:])
    from .from_ir import propagate_program
    program = _load(args.file, ssa_names=argv[0] == "explain")
    labels = _labels(program) if argv[0] == "explain" else {}
    chosen = [_resolve(w, labels, program) for w in args.values] if argv[0] == "explain" else []
    result = propagate_program(program, aggressive=not args.basic, op_priority=not args.no_op_priority,
                               user_priority=not args.no_user_priority)
    if argv[0] == "propagate":
        from ..ir import print_program
        print(print_program(program))
        for name, why in result.opaque:
            print(f"// note: {name} has no factor table here, nothing propagated through it ({why})", file=sys.stderr)
        return 0
    _name_graph_values(result, labels)
    for label in chosen or labels:
        value = labels[label]
        if id(value) in result.value_ids:
            print(_op_by_result(result.graph, result.explain(value)))
        elif chosen:  # asked for by name: say why there is nothing to explain
            owner = getattr(value.owner, "name", "a block")
            print(f"{label}: {value.sharding if value.sharding is not None else 'no sharding'}\n"
                  f"  not propagated: its op '{owner}' has no factor table here")
    return 0
