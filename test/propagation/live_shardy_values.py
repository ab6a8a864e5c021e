"""Our propagation and the live Shardy (jaxlib's) on the same MLIR module, value by value: the
shared part of benchmarks/compare_shardy_files.py and the IR-level scenario tests.

The Shardy in jaxlib propagates a module from its @main (it aborts on a module without one).
Values are compared in walk order: arguments, op results, nested ops, an edge's or constraint's
own `sharding`, a manual_computation's in/out shardings, function results; `?` and priorities
are ignored and a fully replicated sharding equals none."""
from __future__ import annotations

import re

import spmdkit
from spmdkit import ir

import shardy_oracle


def pipeline(passes) -> str:
    """[(pass, options)] as a pass pipeline: module passes at the top, function passes nested."""
    from jaxlib.mlir import passmanager
    parts = []
    with shardy_oracle._context():
        for name, opts in passes:
            text = f"{name}{{{opts}}}" if opts else name
            try:
                passmanager.PassManager.parse(f"builtin.module({text})")
                parts.append(text)
            except Exception:  # noqa: BLE001 -- a pass that runs on functions
                parts.append(f"func.func({text})")
    return "builtin.module(" + ",".join(parts) + ")"


BASIC = pipeline([("sdy-basic-propagate", "")])
# the add/sink pair around it, as Shardy's manual_computation tests run it
BASIC_WITH_EDGES = pipeline([("sdy-add-data-flow-edges", ""), ("sdy-basic-propagate", ""),
                             ("sdy-sink-data-flow-edges", "")])
USER_PRIORITY = pipeline([("sdy-user-priority-propagate", "")])
BASIC_OPTIONS = dict(aggressive=False, op_priority=False, user_priority=False)


def live(text: str, passes: str) -> str:
    """The module as the live Shardy propagates it, printed."""
    from jaxlib.mlir import ir as mir, passmanager
    with shardy_oracle._context():
        module = mir.Module.parse(text)
        passmanager.PassManager.parse(passes).run(module.operation)
        return str(module)


def ours(text: str, **options):
    """The module as spmdkit.propagate gives it (printing it runs MLIR's verifier)."""
    program = ir.parse(text, strict_ops=False)
    spmdkit.propagate(program, **options)
    ir.print_program(program)
    return program


def norm(sharding) -> str:
    if sharding is None:
        return ""
    text = str(sharding)
    text = text[text.index("["):text.rindex("]") + 1] if "[" in text else "[]"
    text = re.sub(r"\}p\d+", "}", text)
    text = re.sub(r",? ?\?", "", text)
    return "" if re.sub(r"[\[\]{}, ]", "", text) == "" else text


def values_of(fn) -> list[tuple[str, str]]:
    """(label, normalized sharding) of every value of a function, in walk order."""
    out = [(f"arg{i}", norm(a.sharding)) for i, a in enumerate(fn.args)]

    def walk(block, where):
        for k, op in enumerate(block.ops):
            label = f"{where}{op.name}#{k}"
            if op.name in ("sdy.data_flow_edge", "sdy.sharding_constraint"):
                out.append((label, norm(op.attrs.get("sharding"))))
            else:
                out.extend((f"{label}.{i}", norm(r.sharding)) for i, r in enumerate(op.results))
            if op.name == "sdy.manual_computation":
                out.extend((f"{label}.in{i}", norm(s)) for i, s in enumerate(op.attrs.get("in_shardings", [])))
                out.extend((f"{label}.out{i}", norm(s)) for i, s in enumerate(op.attrs.get("out_shardings", [])))
            for r, region in enumerate(op.regions):
                for block2 in region.blocks:
                    walk(block2, f"{label}/r{r}/")

    walk(fn.body, "")
    out += [(f"result{i}", norm(s)) for i, s in enumerate(fn.result_shardings)]
    return out


def differences(text: str, passes: str, **options) -> tuple[int, list]:
    """(values compared, [(label, ours, Shardy's)] that differ) for the module's @main."""
    mine = values_of(ours(text, **options).functions["main"])
    theirs = values_of(ir.parse(live(text, passes), strict_ops=False).functions["main"])
    assert [a for a, _ in mine] == [b for b, _ in theirs], "the walks differ"
    return len(mine), [(a, x, y) for (a, x), (_, y) in zip(mine, theirs) if x != y]
