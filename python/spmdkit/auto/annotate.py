"""Writing the chosen strategies onto the program, so that the partitioner runs exactly them.

Every free argument gets its layout; every op result the layout its op's strategy gives it
(partial axes as Shardy's unreduced axes); where a consumer's strategy reads a value in another
layout than its producer gave it, an `sdy.sharding_constraint` to that layout is inserted
before the consumer (one per value and layout), so the partitioner's reshard is the edge the
search priced; every free or tied result gets its layout as the function's result sharding.
"""
from __future__ import annotations

from ..ir import Op
from ..partition.layouts import to_sharding
from ..partition.rules import SOURCE_OPS
from .strategies import SearchSpace


def annotate(program, space: SearchSpace, choice: list[int]) -> int:
    """Annotates `program`'s main function in place; returns the number of constraints added."""
    pm, fn = space.pm, program.main
    produced = {}
    constraints: dict = {}
    added = 0
    result_layouts = {}
    for n, k in zip(space.nodes, choice):
        s = n.strategies[k]
        if n.kind == "arg":
            if not n.pinned:
                n.value.sharding = to_sharding(s.results[0], pm)
            produced[id(n.value)] = s.results[0]
            for r in n.tied_results:
                result_layouts[r] = s.results[0]
        elif n.kind == "result":
            result_layouts[n.index] = s.operands[0]
    body = fn.body
    ops_out = []
    for n, k in zip(space.nodes, choice):
        if n.kind != "op":
            continue
        op, s = n.op, n.strategies[k]
        for i, v in enumerate(op.operands):
            need = s.operands[i]
            if produced[id(v)] == need:
                continue
            key = (id(v), need)
            c = constraints.get(key)
            if c is None:
                sharding = to_sharding(need, pm)
                c = Op.create("sdy.sharding_constraint", [v], [v.type], {"sharding": sharding})
                c.results[0].sharding = sharding   # the partitioner reads the target off the result
                c.parent = body
                ops_out.append(c)
                constraints[key] = c
                added += 1
            op.operands[i] = c.results[0]
        for j, v in enumerate(op.results):
            produced[id(v)] = s.results[j]
            if op.name not in SOURCE_OPS:
                v.sharding = to_sharding(s.results[j], pm)
        ops_out.append(op)
    ops_out.extend(o for o in body.ops if o.is_terminator)
    body.ops[:] = ops_out
    while len(fn.result_shardings) < len(fn.result_types):
        fn.result_shardings.append(None)
    for i, layout in result_layouts.items():
        fn.result_shardings[i] = to_sharding(layout, pm)
    return added
