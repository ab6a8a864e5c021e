"""Elementwise regions that are cheaper run whole.

Propagation may split a chain of elementwise ops because its input arrives split or partial, while
the chain's outputs are declared replicated. An optimizer's update of a replicated param is the
case: the gradient comes partial over the batch axes, propagation splits the update like the
gradient, and run that way the gradient is reduce-scattered and each of p, m and v is gathered
back, where running the chain whole costs one all-reduce of the gradient. (XLA ends up whole by
simplifying all_gather(dynamic_slice(x)) to x after the fact.)

A region is a connected set of elementwise ops over values of one shape that propagation split the
same way. When the partitioner meets a region's first op and every input of the region is already
produced, it prices the region's boundary both ways with the reshard planner: the inputs brought to
the split layout and the outputs to what their users need, against the same with the region whole.
It runs the region whole only if that is strictly cheaper.
"""
from __future__ import annotations

from .. import _core
from ..ir.types import OpaqueType
from .layouts import layout_of_sharding, layout_of_value, replicated, to_spec
from .rules import CALL_OPS, factor_table, signature_of


def _is_elementwise(op, pm) -> bool:
    """Whether the op's rule maps every non-scalar tensor to the same pass-through factors (read
    from the registry's factor table, so a new elementwise rule needs no entry here). A function of
    the op's signature (its name, types and attributes): known once per signature."""
    sig = signature_of(op, pm)
    known = pm.elementwise
    if sig is not None:
        answer = known.get(sig)
        if answer is not None:
            return answer
    answer = _elementwise(op, pm)
    if sig is not None:
        known[sig] = answer
    return answer


def _elementwise(op, pm) -> bool:
    results = op.results
    if not results or op.regions:
        return False
    shape = results[0].type.shape
    if not shape:  # rank 0
        return False
    for v in results:
        if v.type.shape != shape:
            return False
    for v in op.operands:
        other = v.type.shape
        if other and other != shape:
            return False
    try:
        table = factor_table(op, lambda v: to_spec(replicated(v.type.rank), v.type.shape, pm), pm)
    except Exception:  # no rule, or one without a factor table: not a region op
        return False
    tensors = [list(map(list, t)) for t in list(table.operands) + list(table.results) if len(t)]
    return all(k == "pass_through" for k in table.kinds) and all(t == tensors[0] for t in tensors)


def _nested_uses(op, uses: dict) -> None:
    """Count the reads of the ops nested in `op`'s regions (the scan's uses include them)."""
    for nested in op.walk():
        if nested is not op:
            for v in nested.operands:
                uses[id(v)] = uses.get(id(v), 0) + 1


class Regions:
    """The elementwise regions of one flat function, found up front; `whole(op, ...)` decides a
    region when the partitioner first reaches one of its ops."""

    def __init__(self, fn, pm, check=None):
        """`check(ops)`: called with the ops the scan lists as able to fail partitioner.check_function
        (those with regions, calls, opaque results), before any region is made."""
        ret = fn.body.terminator
        # One scan of the block in order (a value's producer comes before its readers) finds
        # - the elementwise ops, each joined to the region of every elementwise producer it reads;
        # - users: id(value) -> [(op, operand index)], the readers of the values the elementwise
        #   ops produce and of the function's results (all a region looks up);
        # - uses: id(value) -> how many operands read it, nested regions included (the
        #   partitioner's keep_sums_partial asks).
        users: dict[int, list] = {}
        if ret is not None:
            for v in ret.operands:
                users.setdefault(id(v), [])
        pm.signed.sign(fn.body.ops)  # every op's signature in one call: the scan and the partitioner read them
        self.uses, groups, suspects = _core.scan_regions(
            fn.body.ops, pm.signatures, pm.elementwise, lambda op: _is_elementwise(op, pm), _nested_uses, users,
            *((CALL_OPS, OpaqueType) if check is not None else ()))
        if check is not None:
            check(suspects)
        self.region_of = {}
        self.regions = []
        declared = list(fn.result_shardings) + [None] * (len(ret.operands) if ret else 0)
        returned: dict[int, list[int]] = {}  # id(value) -> the function results it is, in order
        for i, v in enumerate(ret.operands if ret is not None else ()):
            returned.setdefault(id(v), []).append(i)
        touching = _touching_results(ret, users)
        for group in groups:
            if not any(id(op) in touching for op in group):  # see _touching_results
                continue
            region = _Region(group, ret, declared, pm, users, returned)
            if region.split is not None:
                self.region_of.update({id(op): len(self.regions) for op in group})
                self.regions.append(region)
        self.decided: dict[int, bool] = {}

    def whole(self, op, versions, price) -> bool:
        """Whether `op` runs whole: decided once per region, at its first op."""
        k = self.region_of.get(id(op))
        if k is None:
            return False
        if k not in self.decided:
            region = self.regions[k]
            self.decided[k] = region.cheaper_whole(versions, price)
        return self.decided[k]


def _touching_results(ret, users) -> set:
    """The ids of the ops whose region may be strictly cheaper run whole: those that produce a
    function result or read one. Another region's outputs go to ops that ask for the split layout
    (reached from whole by a free local slice), and bringing an input to the split layout never
    costs more than gathering it whole (gathering, then slicing, is one way there), so the split
    run always wins. Most regions of a model are such (every one of a transformer step's layers):
    they are not built at all."""
    touching = set()
    if ret is None:
        return touching
    for v in ret.operands:
        if not v.is_block_arg:
            touching.add(id(v.owner))
        for user, _ in users.get(id(v), ()):
            if user is not ret:
                touching.add(id(user))
    return touching


_MIXED = object()  # a region whose values have more than one layout


class _Region:
    def __init__(self, ops, ret, declared, pm, users, returned):
        results = [r for op in ops for r in op.results]
        # one layout over every value (layout_of_value's are canonical: equal ones are one object)
        layouts = [layout_of_value(r, pm) if r.sharding is not None else None for r in results]
        split = layouts[0]
        for layout in layouts:
            if layout is not split:
                split = _MIXED
                break
        # a split region only: one layout over every value, not the replicated one
        self.split = split if split is not None and split is not _MIXED and any(split.dims) and not split.partial \
            else None

        def result_layout(v, i):
            s = declared[i]
            return replicated(v.type.rank) if s is None else layout_of_sharding(s, v.type.rank, pm, "result",
                                                                                v.type.shape)
        if self.split is None:  # dropped: only a declared result's layout is read (its errors)
            for v in results:
                for op, i in users.get(id(v), ()):
                    if op is ret:
                        result_layout(v, i)
            return
        inside = set(map(id, results))
        self.inputs, seen = [], set()
        for op in ops:
            for v in op.operands:
                if id(v) not in seen:
                    seen.add(id(v))
                    if id(v) not in inside and v.type.shape:  # rank > 0
                        self.inputs.append(v)
        rank = ops[0].results[0].type.rank
        self.whole_layout = pm.whole(rank)
        # what the region's outputs must become: a function result's declared layout, or the split
        # layout for an op outside the region (it will ask for what propagation gave it)
        self.outputs = []
        members = set(map(id, ops))
        for v in results:
            for op, i in users.get(id(v), ()):
                if op is ret:
                    self.outputs.append((v, result_layout(v, i)))
                elif id(op) not in members:
                    self.outputs.append((v, self.split))
        # inputs that are also function results (a step returns the gradients it applies): the
        # layout the region brings them to serves the result too
        self.input_results = [(v, result_layout(v, i)) for v in self.inputs for i in returned.get(id(v), ())]

    def cheaper_whole(self, versions, price) -> bool:
        if any(id(v) not in versions for v in self.inputs):
            return False  # an input comes later in the program: keep propagation's plan
        split = whole = 0.0
        for v in self.inputs:
            have = versions[id(v)]
            split += min(price(v, h, self.split) for h in have)
            whole += min(price(v, h, self.whole_layout) for h in have)
        for v, target in self.outputs:
            split += price(v, self.split, target)
            whole += price(v, self.whole_layout, target)
        for v, target in self.input_results:
            have = versions[id(v)]
            split += min(price(v, h, target) for h in [*have, self.split])
            whole += min(price(v, h, target) for h in [*have, self.whole_layout])
        return whole < split
