"""From a program whose values carry shardings to one per-device program (issue 10).

Every op runs where its rule says: the rule's infer_forward on the operands' desired shardings
(the propagated ones) gives the layouts the op needs its operands in and the layouts (partial
ones included) its results then have. A reshard (spmdkit.reshard.plan_reshard) is inserted where
what a producer produced differs from what a consumer needs; partial results stay partial until
a consumer needs them whole, so e.g. a row-parallel matmul's sum is reduced once, where it is
used. The function's results are resharded to their declared shardings (replicated if none).
Any source of the shardings works (complete_forward, or the propagation engine).
"""
from __future__ import annotations

import re

from ..reshard import DEFAULT_COST_MODEL, CostModel, Layout, ReshardError, plan_reshard
from .choice import choose_layouts
from .errors import PartitionError, value_name
from .layouts import ProgramMesh, layout_of_sharding, layout_of_value, replicated
from .localize import localize
from .plan import LocalOp, PartitionedProgram, Reshard
from .regions import Regions
from .rules import IDENTITY_OPS, SOURCE_OPS, op_layouts

CALL_OPS = frozenset({"func.call", "call"})
# ops linear in every operand together: a sum of partial sums is a partial sum
SUM_OPS = frozenset({"jax.add", "jax.add_any", "jax.sub"})


def itemsize(value) -> int:
    """Bytes per element of an IR value (i1/pred counts one byte, as XLA stores it)."""
    m = re.search(r"(\d+)$", value.type.dtype)
    return max(1, int(m.group(1)) // 8) if m else 4


def check_function(fn) -> None:
    """The partitioner handles one flat block (import with inline_calls=True)."""
    for op in fn.body.ops:
        if op.regions or op.name in CALL_OPS:
            raise PartitionError("ops with regions or calls are not partitioned yet; inline calls with "
                                 "spmdkit.ir.inline_calls(program) (or import_jax(..., inline_calls=True))",
                                 op=op.name)


class _Partitioner:
    def __init__(self, program, fn, cost: CostModel):
        self.pm = ProgramMesh.of(program)
        self.fn, self.cost = fn, cost
        self.out = None
        self.versions: dict[int, list[Layout]] = {}  # layouts each value is available in (first: produced)

    def run(self) -> PartitionedProgram:
        fn, pm = self.fn, self.pm
        check_function(fn)
        self.regions = Regions(fn, pm)
        arg_layouts = []
        for v in fn.args:
            layout = layout_of_value(v, pm)
            if layout.partial:
                raise PartitionError("a function argument cannot be partial (pass it reduced)", value=value_name(v))
            self.check_shape(v, layout, "argument")
            arg_layouts.append(layout)
            self.versions[id(v)] = [layout]
        self.out = PartitionedProgram(pm, fn, arg_layouts, [])
        for op in fn.body.ops:
            if op.is_terminator:
                self.finish(op)
                break
            self.partition_op(op)
        else:
            raise PartitionError(f"@{fn.name} has no return")
        return self.out

    def partition_op(self, op) -> None:
        if op.name == "jax.iota":  # computed directly in its annotated layout (offset by the shard's place)
            layout = layout_of_value(op.result, self.pm)
            operands, results = [], [Layout.make(self.pm.spec, layout.dims)]
        elif op.name in SOURCE_OPS:
            operands, results = [], [replicated(v.type.rank) for v in op.results]
        elif op.name in IDENTITY_OPS:
            v = op.operands[0]
            steer = op.attrs.get("sharding", op.result.sharding)  # a constraint's (reshard's) sharding: its attribute
            target = (layout_of_sharding(steer, v.type.rank, self.pm, value_name(v)) if steer is not None
                      else self.versions[id(v)][0])
            operands, results = [target], [target]
        else:
            desired = {id(v): layout_of_value(v, self.pm) if v.sharding is not None else self.versions[id(v)][0]
                       for v in op.operands}
            if self.regions.whole(op, self.versions, self.price):  # see regions.py
                desired.update({id(v): replicated(v.type.rank) for v in op.operands})
                operands, results = op_layouts(op, desired, self.pm)
            else:  # propagation's placement, or a cheaper one (see choice.py)
                operands, results = choose_layouts(op, desired, self.versions, self.price, self.pm)
            operands, results = self.keep_sums_partial(op, operands, results)
        for v, layout in zip(op.operands, operands):
            self.need(v, layout, f"op '{op.name}'")
        for v, layout in zip(op.results, results):
            self.check_shape(v, layout, f"result of '{op.name}'")
            self.versions[id(v)] = [layout]
        self.out.steps.append(LocalOp(op, localize(op, operands, results, self.pm), operands, results))

    def keep_sums_partial(self, op, operands, results):
        """A sum of values that are all sum-partial over the same axes is itself partial: add them
        as they are and reduce once, where a consumer needs the sum whole (the rules ask for whole
        operands; e.g. a tied embedding's two gradient contributions are reduced once, not twice)."""
        if op.name not in SUM_OPS:
            return operands, results
        produced = [self.versions[id(v)][0] for v in op.operands]
        axes = {(l.partial, l.reduce) for l in produced}
        if len(axes) != 1 or not produced[0].partial or produced[0].reduce != "sum":
            return operands, results
        if any(req.partial or req.dims != have.dims for req, have in zip(operands, produced)):
            return operands, results
        partial = produced[0].partial
        if any(set(partial) & r.used_axes() for r in results):
            return operands, results
        return produced, [Layout.make(self.pm.spec, r.dims, partial, "sum") for r in results]

    def finish(self, ret) -> None:
        shardings = list(self.fn.result_shardings) + [None] * len(ret.operands)
        for i, v in enumerate(ret.operands):
            s = shardings[i]
            target = (replicated(v.type.rank) if s is None else
                      layout_of_sharding(s, v.type.rank, self.pm, value_name(v), v.type.shape))
            if target.partial:
                raise PartitionError(f"result {i} is declared partial; results must be whole", value=value_name(v))
            self.need(v, target, f"result {i}")
            self.out.result_layouts.append(target)
            self.out.results.append((v, target))

    def need(self, value, target: Layout, reason: str) -> None:
        """Make `value` available in `target`, resharding from its cheapest available layout."""
        have = self.versions[id(value)]
        if target in have:
            return
        best = None
        for source in have:
            try:
                plan = plan_reshard(self.pm.spec, value.type.shape, source, target, itemsize(value), self.cost,
                                    sub_axes=False)
            except ReshardError as e:
                raise PartitionError(f"cannot reshard {source} -> {target} for {reason}: {e}",
                                     value=value_name(value)) from None
            if best is None or (plan.cost_us, len(plan.steps)) < (best[1].cost_us, len(best[1].steps)):
                best = (source, plan)
        self.out.steps.append(Reshard(value, best[0], target, best[1], reason))
        have.append(target)

    def price(self, value, source: Layout, target: Layout) -> float:
        """The modeled cost (us) of resharding `value` from `source` to `target`."""
        if source == target:
            return 0.0
        try:
            return plan_reshard(self.pm.spec, value.type.shape, source, target, itemsize(value), self.cost,
                                sub_axes=False).cost_us
        except ReshardError:
            return float("inf")

    def check_shape(self, value, layout: Layout, what: str) -> None:
        for d, axes in enumerate(layout.dims):
            parts = 1
            for a in axes:
                parts *= self.pm.spec.size(a)
            if value.type.shape[d] % parts:
                raise PartitionError(f"{what}: dim {d} of size {value.type.shape[d]} does not divide over axes "
                                     f"{list(axes)} ({parts} parts)", value=value_name(value))


def partition(program, function: str | None = None, cost: CostModel = DEFAULT_COST_MODEL) -> PartitionedProgram:
    """Partition `function` (default: main) of a program whose values carry shardings."""
    fn = program.main if function is None else program.functions.get(function)
    if fn is None:
        raise PartitionError(f"program has no function @{function}")
    if not isinstance(cost, CostModel):
        raise TypeError(f"cost must be a CostModel, not {type(cost).__name__}")
    return _Partitioner(program, fn, cost).run()
