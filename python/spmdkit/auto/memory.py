"""Activation memory for the search's memory row: the values a training step keeps from its forward
pass for its backward pass.

The forward pass is every op the loss depends on (the loss: the rank-0 float result that
depends on the most ops, or the result given); the backward pass is every other op. An activation is a forward
op's result that a backward op reads: it is live from its forward op until its last backward
reader, so at the start of the backward pass every activation is live at once. The search adds
each activation's local bytes (in the layout the producing op's strategy gives it) to the op's
memory, so the memory row counts parameters, optimizer state, gradients and results (the
arguments' and results' nodes) plus activations.

What it leaves out: temporaries (values read only near where they are made) and buffers a
compiler keeps for its own reasons; a compiled program's peak can be above the model by those.
On a function without a rank-0 float result nothing is counted as an activation.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .cost import Costs, local_bytes
from .strategies import SearchSpace, value_bytes


def _reads(op) -> list:
    """The values an op reads: its operands and, for control flow, what its regions read from
    outside them (a backward scan reads the forward pass's values that way)."""
    if not op.regions:
        return op.operands
    return list(op.operands) + [v for nested in op.walk() if nested is not op for v in nested.operands]


def _ancestors(reads, producer, value) -> set[int]:
    """Positions of the ops `value` depends on (`reads[k]`: what op k reads)."""
    seen, stack = set(), [producer.get(id(value))]
    while stack:
        k = stack.pop()
        if k is None or k in seen:
            continue
        seen.add(k)
        stack.extend(producer.get(id(v)) for v in reads[k])
    return seen


def _forward(reads, producer, ret, loss_result: Optional[int]) -> set[int]:
    """The ops the loss depends on. Without `loss_result`, the loss is the rank-0 float result
    that depends on the most ops (a training step also returns scalars like AdamW's step count,
    which depend on next to nothing)."""
    if loss_result is not None:
        return _ancestors(reads, producer, ret.operands[loss_result])
    best: set[int] = set()
    for v in ret.operands:
        if v.type.rank == 0 and v.type.dtype.startswith(("f", "bf")):
            found = _ancestors(reads, producer, v)
            if len(found) > len(best):
                best = found
    return best


def activations(fn, loss_result: Optional[int] = None) -> dict[int, list[int]]:
    """Op position -> result slots of that op kept for the backward pass (see the module doc)."""
    ops = [op for op in fn.body.ops if not op.is_terminator]
    ret = fn.body.terminator
    if ret is None:
        return {}
    producer = {id(r): k for k, op in enumerate(ops) for r in op.results}
    reads = [_reads(op) for op in ops]   # a loop's regions walked once
    forward = _forward(reads, producer, ret, loss_result)
    kept: dict[int, set[int]] = {}
    for k, op in enumerate(ops):
        if k in forward:
            continue
        for v in reads[k]:
            src = producer.get(id(v))
            if src is not None and src in forward:
                kept.setdefault(src, set()).add(next(s for s, r in enumerate(ops[src].results) if r is v))
    return {k: sorted(s) for k, s in kept.items()}


def add_activation_memory(space: SearchSpace, costs: Costs, fn, loss_result: Optional[int] = None) -> float:
    """Adds every activation's local bytes to its producing op's memory, per strategy (in place);
    returns the activations' bytes when everything is replicated."""
    kept = activations(fn, loss_result)
    whole = 0.0
    for i, node in enumerate(space.nodes):
        # the function's own ops (positions in its block); a loop's kept values are its results
        slots = kept.get(node.index) if node.kind in ("op", "carry") and not node.depth else None
        if node.kind == "carry" and slots:
            slots = [0] if node.carry in slots else None
        if not slots:
            continue
        op = node.op
        values = [op.results[node.carry]] if node.kind == "carry" else [op.results[r] for r in slots]
        extra = np.array([sum(local_bytes(v, s.results[r], space.pm) for v, r in zip(values, slots))
                          for s in node.strategies])
        costs.memory[i] = costs.memory[i] + extra
        whole += sum(value_bytes(v) for v in values)
    return whole
