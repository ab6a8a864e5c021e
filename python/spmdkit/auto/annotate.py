"""Writing the chosen strategies onto the program, so that the partitioner runs exactly them.

Every free argument gets its layout; every op result the layout its op's strategy gives it
(partial axes as Shardy's unreduced axes); where a consumer's strategy reads a value in another
layout than its producer gave it, an `sdy.sharding_constraint` to that layout is inserted
before the consumer, in the consumer's block (one per value, layout and block), so the
partitioner's reshard is the edge the search priced; every free or tied result gets its layout
as the function's result sharding. A while's carried values (a case's results) get their carry
node's layout on the loop's results and its regions' arguments; an initial value or a region's
returned value in another layout gets a constraint before the loop or before the region's return.
"""
from __future__ import annotations

from ..ir import Op
from ..partition.control_flow import CONTROL_FLOW_OPS
from ..partition.layouts import to_sharding
from ..partition.rules import SOURCE_OPS
from .strategies import SearchSpace


def annotate(program, space: SearchSpace, choice: list[int]) -> int:
    """Annotates `program`'s main function in place; returns the number of constraints added."""
    pm, fn = space.pm, program.main
    produced = {}
    constraints: dict = {}
    result_layouts = {}
    chosen = {}      # id(op) -> its strategy
    carries = {}     # id(while/case op) -> {result index: layout}
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
        elif n.kind == "op":
            chosen[id(n.op)] = s
        else:
            carries.setdefault(id(n.op), {})[n.carry] = s.results[0]

    def in_layout(v, need, block, out: list):
        """`v` as read in layout `need` inside `block`: itself, or a constraint placed in `out`."""
        if produced[id(v)] == need:
            return v
        key = (id(v), need, id(block))
        c = constraints.get(key)
        if c is None:
            sharding = to_sharding(need, pm)
            c = Op.create("sdy.sharding_constraint", [v], [v.type], {"sharding": sharding})
            c.results[0].sharding = sharding   # the partitioner reads the target off the result
            c.parent = block
            out.append(c)
            constraints[key] = c
        return c.results[0]

    def define(v, layout, write: bool = True) -> None:
        produced[id(v)] = layout
        if write:
            v.sharding = to_sharding(layout, pm)

    def walk(block, returns=None) -> None:
        """Annotate `block`'s ops (and their regions); `returns`: the layouts its terminator's
        operands must have (a region's), else None."""
        out = []
        for op in block.ops:
            if op.is_terminator:
                if returns is not None:
                    op.operands[:] = [in_layout(v, need, block, out) for v, need in zip(op.operands, returns)]
                out.append(op)
                continue
            if op.regions and op.name in CONTROL_FLOW_OPS:
                layouts = carries[id(op)]
                wanted = [layouts[j] for j in range(len(op.results))]
                if op.name == "stablehlo.while":
                    op.operands[:] = [in_layout(v, need, block, out) for v, need in zip(op.operands, wanted)]
                    cond, body = (r.block for r in op.regions)
                    for region_block in (cond, body):
                        for a, layout in zip(region_block.args, wanted):
                            define(a, layout)
                    walk(cond)
                    walk(body, wanted)
                else:
                    for region in op.regions:
                        walk(region.block, wanted)
                for y, layout in zip(op.results, wanted):
                    define(y, layout)
                out.append(op)
                continue
            s = chosen[id(op)]
            op.operands[:] = [in_layout(v, need, block, out) for v, need in zip(op.operands, s.operands)]
            for v, layout in zip(op.results, s.results):
                define(v, layout, op.name not in SOURCE_OPS and bool(op.operands))
            out.append(op)
        block.ops[:] = out

    walk(fn.body)
    while len(fn.result_shardings) < len(fn.result_types):
        fn.result_shardings.append(None)
    for i, layout in result_layouts.items():
        fn.result_shardings[i] = to_sharding(layout, pm)
    return len(constraints)
