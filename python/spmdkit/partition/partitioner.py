"""From a program whose values carry shardings to one per-device program (issue 10).

Every op runs where its rule says: the rule's infer_forward on the operands' desired shardings
(the propagated ones) gives the layouts the op needs its operands in and the layouts (partial
ones included) its results then have. A reshard (spmdkit.reshard.plan_reshard) is inserted where
what a producer produced differs from what a consumer needs; partial results stay partial until
a consumer needs them whole, so e.g. a row-parallel matmul's sum is reduced once, where it is
used. The function's results are resharded to their declared shardings (replicated if none).
Any source of the shardings works (complete_forward, or the propagation engine). Control flow
(stablehlo.while / stablehlo.case) is partitioned by control_flow.py: each region is a nested
block partitioned by a nested _Partitioner that shares this one's table of available layouts.
"""
from __future__ import annotations

import math
from contextlib import contextmanager

from .. import _core
from ..ir.core import TERMINATORS, paused_gc
from ..ir.signatures import OpSignatures
from ..ir.types import OpaqueType, is_opaque
from ..reshard import DEFAULT_COST_MODEL, CostModel, Layout, ReshardError, plan_reshard
from .choice import choose_layouts
from .control_flow import CONTROL_FLOW_OPS, partition_control_flow
from .errors import PartitionError, value_name
from .fine_mesh import SubAxisFound
from .layouts import ProgramMesh, itemsize, layout_of_sharding, layout_of_value, replicated, to_sharding
from .localize import LOCALIZERS, localize
from .manual import MANUAL_OPS, partition_manual
from .plan import LocalBlock, LocalOp, PartitionedProgram, Reshard
from .regions import Regions
from .rules import CALL_OPS, IDENTITY_OPS, SOURCE_OPS, op_layouts, signature_of

# ops linear in every operand together: a sum of partial sums is a partial sum
SUM_OPS = frozenset({"jax.add", "jax.add_any", "jax.sub"})
# ops of one operand, linear in it: the op of a partial sum is the partial sum of the op's results
LINEAR_OPS = frozenset({"jax.transpose", "jax.reshape", "jax.squeeze", "jax.expand_dims", "jax.neg",
                        "jax.reduce_sum", "jax.copy", "jax.broadcast_in_dim"})
# ops linear in their first two operands together, the rest whole scalars (indices): writing a
# partial update into a partial array gives the partial array (a scan's stacked gradients)
UPDATE_OPS = frozenset({"jax.dynamic_update_slice"})
PARTIAL_KEEPING_OPS = SUM_OPS | LINEAR_OPS | UPDATE_OPS  # the ops keep_sums_partial looks at
# ops partition_op places by a path of their own, not by their rule (never looked up in pm.outcomes)
_OWN_PATH_OPS = SOURCE_OPS | IDENTITY_OPS


def check_function(fn, control_flow: bool = False, other_regions: bool = False, tops=None) -> None:
    """Calls must be inlined (import with inline_calls=True); ops with regions are refused unless
    `control_flow` (the partitioner takes while/case, see control_flow.py; completion does not);
    `other_regions`: other ops with regions pass too (a reduce's or a scatter's scalar body: the
    search reads their rules' factor tables). Tokens and dynamically shaped tensors (propagation
    leaves them unsharded) are refused. `tops`: the ops of the body to look at, where a scan has
    listed those that can fail (Regions' scan: ops with regions, calls, opaque results); all by default."""
    for i, a in enumerate(fn.args):
        if is_opaque(a.type):
            raise PartitionError(f"type {a.type} is not partitioned (static ranked tensors only)",
                                 op="func.func", value=f"%arg{i}")
    for top in fn.body.ops if tops is None else tops:
        for op in (top.walk() if top.regions else (top,)):  # each op, then those nested in it
            for r in op.results:
                if isinstance(r.type, OpaqueType):  # is_opaque, inline: one check per value
                    raise PartitionError(f"type {r.type} is not partitioned (static ranked tensors only)",
                                         op=op.name, value=value_name(r))
            if op.name in CALL_OPS:
                raise PartitionError("calls are not partitioned; inline them with spmdkit.ir.inline_calls(program) "
                                     "(or import_jax(..., inline_calls=True))", op=op.name)
            if op.regions and not control_flow:
                raise PartitionError("control flow is partitioned from propagated or searched shardings "
                                     "(spmdkit.propagate, strategy='propagate' or 'auto'); completion handles flat "
                                     "functions only", op=op.name)
            if op.regions and op.name not in CONTROL_FLOW_OPS and op.name not in MANUAL_OPS and not other_regions:
                raise PartitionError(f"ops with regions other than {', '.join(sorted(CONTROL_FLOW_OPS | MANUAL_OPS))} are not "
                                     f"partitioned", op=op.name)


class _BlockView:
    """A nested block seen as Regions reads a function: its ops, and what its results must be."""

    def __init__(self, block, result_shardings):
        self.body, self.result_shardings = block, result_shardings


class _Partitioner:
    """Partitions one block; a nested one (a while/case region) shares its parent's `versions`, and
    reshards of values defined further out are hoisted to the block that defines them."""

    def __init__(self, pm: ProgramMesh, cost: CostModel, versions=None, outer=None):
        self.pm, self.cost = pm, cost
        self.outer = outer
        self.versions: dict[int, list[Layout]] = {} if versions is None else versions  # first: produced
        self.local: set[int] = set()   # ids of the values this block defines
        self.steps: list = []

    def run(self, fn) -> PartitionedProgram:
        pm = self.pm
        # the scan of the regions lists the ops that can fail the check: it runs on those alone
        self.regions = Regions(fn, pm, check=lambda tops: check_function(fn, control_flow=True, tops=tops))
        arg_layouts = []
        for v in fn.args:
            layout = layout_of_value(v, pm)
            if layout.partial:
                raise PartitionError("a function argument cannot be partial (pass it reduced)", value=value_name(v))
            self.check_shape(v, layout, "argument")
            arg_layouts.append(layout)
            self.define(v, layout)
        out = PartitionedProgram(pm, fn, arg_layouts, [])
        self.steps = out.steps
        ret = self.walk(fn.body, f"@{fn.name}")
        shardings = list(fn.result_shardings) + [None] * len(ret.operands)
        for i, v in enumerate(ret.operands):
            s = shardings[i]
            target = (replicated(v.type.rank) if s is None else
                      layout_of_sharding(s, v.type.rank, pm, value_name(v), v.type.shape))
            if target.partial:
                raise PartitionError(f"result {i} is declared partial; results must be whole", value=value_name(v))
            self.need(v, target, f"result {i}")
            out.result_layouts.append(target)
            out.results.append((v, target))
        return out

    def nested(self, block, arg_layouts: list[Layout], targets: list[Layout], what: str) -> LocalBlock:
        """Partition a region's block: its arguments arrive in `arg_layouts`, its results leave in
        `targets` (resharded at its end when the block produces another layout)."""
        inner = _Partitioner(self.pm, self.cost, self.versions, outer=self)
        for v, layout in zip(block.args, arg_layouts):
            inner.check_shape(v, layout, f"{what} argument")
            inner.define(v, layout)
        inner.regions = Regions(_BlockView(block, [to_sharding(t, self.pm) for t in targets]), self.pm)
        ret = inner.walk(block, what)
        if len(ret.operands) != len(targets):
            raise PartitionError(f"{what} returns {len(ret.operands)} values, expected {len(targets)}", op=ret.name)
        for i, (v, target) in enumerate(zip(ret.operands, targets)):
            inner.need(v, target, f"{what} result {i}")
        return LocalBlock(list(block.args), list(arg_layouts), inner.steps, list(zip(ret.operands, targets)))

    @contextmanager
    def trial(self):
        """Partition tentatively: what is planned inside (steps here and in enclosing blocks, layouts
        made available) is undone on exit; read what you need from `versions` before it."""
        versions = {k: list(v) for k, v in self.versions.items()}
        chain, p = [], self
        while p is not None:
            chain.append((p, len(p.steps)))
            p = p.outer
        try:
            yield
        finally:
            self.versions.clear()
            self.versions.update(versions)
            for p, n in chain:
                del p.steps[n:]

    def define(self, value, layout: Layout) -> None:
        self.local.add(id(value))
        self.versions[id(value)] = [self.pm.canonical(layout)]

    # Ops of the outermost block in a situation met before are partitioned in C++
    # (_core.partition_hits, spmd_rules/partition/bind_partition_hits.cc) while they come in a row;
    # partition_op stays the definition and takes every other op. False: every op through it.
    fast = True

    def walk(self, block, what: str):
        """Partition every op of `block`; returns its terminator."""
        self.uses = self.regions.uses  # id(value) -> operands reading it in this block and its regions
        ops, i, count = block.ops, 0, len(block.ops)
        state = self._hit_state() if self.fast and self.outer is None else None
        while i < count:
            if state is not None:
                i = _core.partition_hits(ops, i, state)
                if i == count:
                    break
            op = ops[i]
            if op.name in TERMINATORS:
                return op
            if op.name in MANUAL_OPS:
                self.steps.append(partition_manual(self, op))
            elif op.regions:
                self.steps.append(partition_control_flow(self, op))
            else:
                self.partition_op(op)
            i += 1
        raise PartitionError(f"{what} has no terminator")

    def _hit_state(self) -> tuple:
        """What partition_hits reads and fills: the tables situation() and place() use, and the
        steps it calls back for."""
        pm, regions = self.pm, self.regions
        return (pm.signatures, self.versions, pm.annotations, pm.outcomes, regions.region_of, self.uses, self.steps,
                _OWN_PATH_OPS, SOURCE_OPS, TERMINATORS, LINEAR_OPS, LOCALIZERS, localize, LocalOp, pm, pm.wholes,
                self.annotation, lambda op: regions.whole(op, self.versions, self.price), self.need, regions.decided)

    def desired(self, value) -> Layout:
        """The layout `value` is wanted in: its annotation, else the one its producer produced."""
        if value.sharding is not None:
            return layout_of_value(value, self.pm)
        if id(value) not in self.versions:
            raise PartitionError("used before it is defined", value=value_name(value))
        return self.versions[id(value)][0]

    def partition_op(self, op) -> None:
        name, pm = op.name, self.pm
        situation = self.situation(op) if op.operands and name not in _OWN_PATH_OPS else None
        if situation is not None:
            hit = pm.outcomes.get(situation)
            if hit is not None:  # an op like one before, in the same situation: that answer
                operands, results, attrs = hit
                versions = self.versions
                for v, layout in zip(op.operands, operands):
                    if layout not in versions[id(v)]:
                        self.need(v, layout, f"op '{name}'")
                self.place(op, operands, results, attrs)  # their shapes were checked then
                return
        if name == "jax.iota":  # computed directly in its annotated layout (offset by the shard's place)
            layout = layout_of_value(op.result, pm)
            operands, results = [], [Layout.make(pm.spec, layout.dims)]
        elif name in SOURCE_OPS or not op.operands:
            # no inputs (a constant, cond's `empty2` placeholders): every device computes it whole
            # (a whole layout divides any shape: nothing to check)
            self.place(op, (), [pm.whole(v.type.rank) for v in op.results])
            return
        elif name in IDENTITY_OPS:
            v = op.operands[0]
            steer = op.attrs.get("sharding", op.result.sharding)  # a constraint's (reshard's) sharding: its attribute
            target = (layout_of_sharding(steer, v.type.rank, pm, value_name(v)) if steer is not None
                      else self.desired(v))
            operands, results = [target], [target]
        else:
            desired = {id(v): self.desired(v) for v in op.operands}
            if self.regions.whole(op, self.versions, self.price):  # see regions.py
                desired.update({id(v): replicated(v.type.rank) for v in op.operands})
                operands, results = op_layouts(op, desired, pm)
            else:  # propagation's placement, or a cheaper one (see choice.py)
                operands, results = choose_layouts(op, desired, self.versions, self.price, pm)
            if name in PARTIAL_KEEPING_OPS:
                operands, results = self.keep_sums_partial(op, operands, results)
        canonical = pm.canonical
        operands, results = tuple([canonical(l) for l in operands]), tuple([canonical(l) for l in results])
        versions = self.versions
        for v, layout in zip(op.operands, operands):
            have = versions.get(id(v))
            if have is None or layout not in have:  # else need() has nothing to do
                self.need(v, layout, f"op '{name}'")
        checked = pm.shapes_checked
        for v, layout in zip(op.results, results):
            key = (v.type.shape, id(layout))  # canonical layouts: alive in pm.canonicals
            if key not in checked:
                self.check_shape(v, layout, f"result of '{name}'")
                checked.add(key)
        attrs = localize(op, operands, results, self.pm)
        if situation is not None:  # the localized attributes too: a function of the signature and layouts
            pm.outcomes[situation] = (operands, results, attrs)
        self.place(op, operands, results, attrs)

    def place(self, op, operands, results, attrs=None) -> None:
        """Define the op's results in `results` (canonical layouts) and add its local step; `attrs`:
        the op's localized attributes, known already (the outcome's dict, shared by its steps)."""
        versions = self.versions
        if self.outer is None:  # the outermost block: need() never asks whether it defines a value
            for v, layout in zip(op.results, results):
                versions[id(v)] = [layout]
        else:
            for v, layout in zip(op.results, results):
                self.local.add(id(v))
                versions[id(v)] = [layout]
        operands, results = list(operands), list(results)
        if attrs is None:
            attrs = localize(op, operands, results, self.pm)
        self.steps.append(LocalOp(op, attrs, operands, results))

    def situation(self, op):
        """What a rule op's layouts depend on, as a key of small ints (None: not keyed): its
        signature, each operand's annotation and available layouts (canonical objects, by id), the
        results' annotations, whether its region runs whole, and, for a linear op, whether its
        operand has other readers (keep_sums_partial). The layers of a model repeat situations:
        an op in a situation met before takes that answer (ops of one signature in the same
        layouts get the same answer from every step partition_op takes)."""
        pm, versions, name = self.pm, self.versions, op.name
        sig = pm.signatures.get(id(op))  # signature_of's memo, read inline (its number, -1: none)
        if sig is None:
            sig = signature_of(op, pm)
        if sig is None or sig < 0:
            return None
        annotations = pm.annotations
        key = [sig]
        append = key.append
        for v in op.operands:
            have = versions.get(id(v))
            if have is None:  # not defined yet: partition_op's own path says so
                return None
            s = v.sharding
            if s is None:
                append(0)
            else:
                a = annotations.get((id(s), id(v.type)))
                append(a[2] if a is not None else self.annotation(v))
            append(id(have[0]) if len(have) == 1 else tuple(map(id, have)))
        for v in op.results:
            s = v.sharding
            if s is None:
                append(0)
            else:
                a = annotations.get((id(s), id(v.type)))
                append(a[2] if a is not None else self.annotation(v))
        regions = self.regions
        append(id(op) in regions.region_of and regions.whole(op, versions, self.price))
        append(name in LINEAR_OPS and self.uses.get(id(op.operands[0]), 0) != 1)
        return tuple(key)

    def annotation(self, value) -> int:
        """id of the value's annotated layout (canonical), memoized by sharding and type objects
        (kept in the memo, so that their ids stay theirs)."""
        layout = layout_of_value(value, self.pm)
        self.pm.annotations[(id(value.sharding), id(value.type))] = (value.sharding, value.type, id(layout))
        return id(layout)

    def keep_sums_partial(self, op, operands, results):
        """A sum of values that are all sum-partial over the same axes is itself partial: add them
        as they are and reduce once, where a consumer needs the sum whole (the rules ask for whole
        operands; e.g. a tied embedding's two gradient contributions are reduced once, not twice).
        Likewise a linear op of one operand (transpose, reshape, reduce_sum, ...) of a partial sum
        that nothing else reads, run in the split the operand has: a weight gradient's transpose
        stays partial, so that a loop can accumulate it partial and reduce once after the loop
        (control_flow.py); and dynamic_update_slice of a partial update into a partial array."""
        if op.name not in SUM_OPS and op.name not in LINEAR_OPS and op.name not in UPDATE_OPS:
            return operands, results
        if op.name in LINEAR_OPS and self.uses.get(id(op.operands[0]), 0) != 1:
            return operands, results  # another consumer reduces it anyway: reduce once, for both
        if op.name == "jax.broadcast_in_dim" and math.prod(op.result.type.shape) != math.prod(op.operands[0].type.shape):
            return operands, results  # reducing the broadcast would move more than reducing its operand
        n = 2 if op.name in UPDATE_OPS else len(op.operands)
        if any(v.type.rank or req.partial or req.dims for v, req in zip(op.operands[n:], operands[n:])):
            return operands, results
        produced = [self.versions[id(v)][0] for v in op.operands[:n]]
        axes = {(l.partial, l.reduce) for l in produced}
        if len(axes) != 1 or not produced[0].partial or produced[0].reduce != "sum":
            return operands, results
        if op.name in SUM_OPS and len(set(produced)) == 1:
            # the same partial layout everywhere: add the local parts as they are (a loop's partial
            # accumulator meets its contribution in the contribution's layout, whatever the rule asks)
            return produced, [produced[0]] * len(results)
        if op.name in LINEAR_OPS and (operands[0].partial or operands[0].dims != produced[0].dims):
            # the rule wants another split: ask it about the split the partial operand has
            whole = Layout.make(self.pm.spec, produced[0].dims)
            alt_operands, alt_results = op_layouts(op, {id(op.operands[0]): whole}, self.pm)
            if alt_operands[0].partial or alt_operands[0].dims != produced[0].dims:
                return operands, results
            operands, results = alt_operands, alt_results
        if any(req.partial or req.dims != have.dims for req, have in zip(operands, produced)):
            return operands, results
        produced = produced + list(operands[n:])
        partial = produced[0].partial
        if any(set(partial) & r.used_axes() for r in results) or any(r.partial and r.reduce != "sum" for r in results):
            return operands, results
        return produced, [Layout.make(self.pm.spec, r.dims, tuple(dict.fromkeys(partial + tuple(r.partial))), "sum")
                          for r in results]

    def need(self, value, target: Layout, reason: str) -> None:
        """Make `value` available in `target`, resharding from its cheapest available layout, in the
        block that defines it (a loop body's reshard of a loop-invariant value runs once, before it)."""
        owner = self
        while id(value) not in owner.local and owner.outer is not None:
            owner = owner.outer
        have = self.versions.get(id(value))
        if have is None:
            raise PartitionError(f"used by {reason} before it is defined", value=value_name(value))
        if target in have:
            return
        best = None
        for source in have:
            try:
                plan = self.plan(value, source, target)
            except ReshardError as e:
                raise PartitionError(f"cannot reshard {source} -> {target} for {reason}: {e}",
                                     value=value_name(value)) from None
            if best is None or (plan.cost_us, len(plan.steps)) < (best[1].cost_us, len(best[1].steps)):
                best = (source, plan)
        owner.steps.append(Reshard(value, best[0], target, best[1], reason))
        have.append(self.pm.canonical(target))

    def price(self, value, source: Layout, target: Layout) -> float:
        """The modeled cost (us) of resharding `value` from `source` to `target`."""
        if source is target:
            return 0.0
        key = (value.type.shape, value.type.dtype, id(source), id(target))  # as plan's memo
        hit = self.pm.prices.get(key)
        if hit is not None:
            return hit[2]
        try:
            cost = 0.0 if source == target else self.plan(value, source, target).cost_us
        except ReshardError:
            cost = float("inf")
        self.pm.prices[key] = (source, target, cost)
        return cost

    def plan(self, value, source: Layout, target: Layout):
        """The reshard planner's plan for `value` from `source` to `target` (ReshardError if none),
        asked once per shape, dtype and the two layout objects (kept in the memo, so that their
        ids stay theirs)."""
        key = (value.type.shape, value.type.dtype, id(source), id(target))
        hit = self.pm.plans.get(key)
        if hit is not None:
            return hit[2]
        plan = plan_reshard(self.pm.spec, value.type.shape, source, target, itemsize(value), self.cost, sub_axes=False)
        self.pm.plans[key] = (source, target, plan)
        return plan

    def check_shape(self, value, layout: Layout, what: str) -> None:
        for d, axes in enumerate(layout.dims):
            parts = 1
            for a in axes:
                parts *= self.pm.spec.size(a)
            if value.type.shape[d] % parts:
                raise PartitionError(f"{what}: dim {d} of size {value.type.shape[d]} does not divide over axes "
                                     f"{list(axes)} ({parts} parts)", value=value_name(value))


def partition(program, function: str | None = None, cost: CostModel = DEFAULT_COST_MODEL,
              signatures: OpSignatures | None = None) -> PartitionedProgram:
    """Partition `function` (default: main) of a program whose values carry shardings.
    `signatures`: the ops' signature numbers from this program's propagation
    (spmdkit.propagation.propagate_program(...).signatures), when nothing changed the ops since;
    saves numbering every op again."""
    fn = program.main if function is None else program.functions.get(function)
    if fn is None:
        raise PartitionError(f"program has no function @{function}")
    if not isinstance(cost, CostModel):
        raise TypeError(f"cost must be a CostModel, not {type(cost).__name__}")
    if signatures is not None and not isinstance(signatures, OpSignatures):
        raise TypeError(f"signatures must be an OpSignatures (a propagation's), not {type(signatures).__name__}")
    with paused_gc():  # a partition's objects are all kept: collections would only rescan the program
        try:
            return _Partitioner(ProgramMesh.of(program, signatures=signatures), cost).run(fn)
        except SubAxisFound:  # a sharding over a sub-axis: on the mesh cut at every sub-axis (fine_mesh.py)
            return _Partitioner(ProgramMesh.of(program, refine=True, signatures=signatures), cost).run(fn)

