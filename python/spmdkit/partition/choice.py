"""Where an op runs: the propagated layouts, or moving the other operand instead.

Propagation resolves a conflict between operands by picking one of them, without prices. The
case (issue 18): causal attention on (dp, fsdp, mp) with the batch on (dp, fsdp) and q/k/v weights
split (fsdp, mp). Both sides name fsdp: the batch dim of the activations, the contracting dim of
the weights. Propagation kept the weights' fsdp, so each projection moved its activations (an
all-to-all in, a reduce-scatter of the partial result out: 4 KiB); XLA gathers the weight instead
(1 KiB), and the backward pass reuses the gathered copy for free.

So the partitioner asks the op's rule for a few candidate placements and prices each with the
reshard planner's cost model (as regions.py prices elementwise regions): every operand brought
from its cheapest available layout to what the candidate needs, and every result taken from what
the candidate gives to what its users will ask for (its propagated annotation). Candidates:
  - the propagated layouts (the rule's answer to propagation; kept on ties),
  - the layouts the operands are available in now,
  - per operand: the available layouts, that operand stripped of the axes another operand uses
    (gather it: "move the weights" when it is a weight, "move the activations" otherwise).
  - for a gather from a table split along the rows it looks up: the lookup run on the split
    table, its result partial (split_gather.py).
The cheapest wins; a candidate the rule refuses is skipped.
"""
from __future__ import annotations

from . import split_gather
from .errors import PartitionError
from .layouts import ProgramMesh, layout_of_value, without_axes
from .rules import op_layouts, signature_of


def candidates(op, desired: dict, versions: dict, pm: ProgramMesh):
    """Desired-layout maps (id(value) -> Layout) to ask the rule about, each once; the first is
    propagation's (made lazily: the caller stops at a first candidate that moves nothing)."""
    seen = set()

    def fresh(c) -> bool:
        key = tuple([c[id(v)] for v in op.operands])
        if key in seen:
            return False
        seen.add(key)
        return True

    if fresh(desired):
        yield desired
    available = {id(v): versions[id(v)][0] for v in op.operands}
    if fresh(available):
        yield available
    tensors = [v for v in op.operands if v.type.rank > 0]
    if len(tensors) > 1:
        for v in tensors:
            others = set()
            for w in tensors:
                if w is not v:
                    others |= available[id(w)].used_axes()
            mine = available[id(v)].used_axes() & others
            if mine:
                c = {**available, id(v): without_axes(available[id(v)], mine, pm)}
                if fresh(c):
                    yield c


def _cost(op, operands, results, versions, price, pm) -> float:
    """Operands from their cheapest available layout, results to their annotations."""
    cost = sum(min(price(v, h, need) for h in versions[id(v)]) for v, need in zip(op.operands, operands))
    for r, layout in zip(op.results, results):
        if r.sharding is not None:
            cost += price(r, layout, layout_of_value(r, pm))
    return cost


def choose_layouts(op, desired: dict, versions: dict, price, pm: ProgramMesh):
    """(operand layouts, result layouts) of the cheapest candidate; `price(value, source,
    target)` is the modeled cost (us) of one reshard, `versions[id(v)]` the layouts `v` is
    available in. Chosen once per op signature, desired and available layouts, and result
    annotations: the layers of a model ask the same question again (`price` is the partitioner's,
    fixed for a partition)."""
    sig = signature_of(op, pm)
    if sig is None:
        return _choose_layouts(op, desired, versions, price, pm)
    key = ("choose", sig, tuple([desired[id(v)] for v in op.operands]),
           tuple([tuple(versions[id(v)]) for v in op.operands]),
           tuple([None if r.sharding is None else layout_of_value(r, pm) for r in op.results]))
    hit = pm.answers.get(key)
    if hit is None:
        hit = pm.answers[key] = _choose_layouts(op, desired, versions, price, pm)
    return list(hit[0]), list(hit[1])


def _choose_layouts(op, desired: dict, versions: dict, price, pm: ProgramMesh):
    best = None
    for k, want in enumerate(candidates(op, desired, versions, pm)):
        try:
            operands, results = op_layouts(op, want, pm)
        except PartitionError:
            if k == 0:
                raise
            continue
        cost = _cost(op, operands, results, versions, price, pm)
        if best is None or cost < best[0]:
            best = (cost, operands, results)
        if k == 0 and cost == 0:
            return operands, results  # propagation's placement moves nothing
    split = split_gather.candidate(op, versions, pm, op_layouts)
    if split is not None:
        cost = _cost(op, *split, versions, price, pm)
        if cost < best[0]:
            best = (cost, *split)
    return best[1], best[2]
