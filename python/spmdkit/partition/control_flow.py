"""Control flow in the partitioner: `stablehlo.while` (JAX's while_loop, fori_loop, and scan, which
the importer brings in as the while loop JAX itself runs) and `stablehlo.case` (cond, switch).

A while loop's carried values have one layout each, in the loop's operands, the cond's and the
body's block arguments and the loop's results: the sharding propagation gave the data-flow edge
(written on the loop's results and block arguments; without one, the layout the initial value
was produced in). Partial layouts are taken whole: a carried value is reduced on entry. The cond
and the body are partitioned as nested blocks whose arguments arrive in the carry layouts; the
body's results are resharded to them at its end when it produced another layout, and the cond's
predicate is made whole (replicated). A case's index is made whole before it, and each branch
is a nested block with no arguments whose results leave in the case's result layouts.

Values defined outside a region (the loop's constants: weights, the scanned inputs) are read from
the enclosing block, and a reshard of one is placed in the block that defines it, i.e. before
the loop: it runs once, not once per iteration.

A carried value that the body only accumulates into (`acc + contribution`, as the backward scan
accumulates a weight's gradient over time steps) stays partial when the contribution comes
partial (a sum over the batch axes): the carry takes the contribution's layout, the body adds
partial sums, and the sum is reduced once, where the loop's result is needed, instead of once
per iteration. Likewise a stacked carry the body writes a partial update into
(`dynamic_update_slice(acc, contribution, i)`: a scan over layers stacking each layer's weight
gradient), when the update's split is the carry's. Whether the contribution comes partial is
read from a trial partitioning of the body (undone after).

A loop counted the way the importer writes scan (the index starts at a constant, the cond is
`index < constant`, the body adds 1) has a known trip count; the plan's summary counts the body's
collectives that many times.
"""
from __future__ import annotations

from typing import Optional

from ..reshard import Layout
from .errors import PartitionError
from .layouts import layout_of_value, replicated
from .plan import LocalControlFlow

CONTROL_FLOW_OPS = frozenset({"stablehlo.while", "stablehlo.case"})


def partition_control_flow(part, op) -> LocalControlFlow:
    """The local form of `op` (a while or case) in the block `part` (a partitioner.Partitioner) is
    partitioning; reshards of its operands go to `part`'s steps before it."""
    if op.name == "stablehlo.while":
        return _while(part, op)
    if op.name == "stablehlo.case":
        return _case(part, op)
    raise PartitionError(f"ops with regions other than {', '.join(sorted(CONTROL_FLOW_OPS))} are not partitioned",
                         op=op.name)


def _whole(layout: Layout, part) -> Layout:
    """The layout with its partial axes dropped (the value reduced)."""
    return Layout.make(part.pm.spec, layout.dims) if layout.partial else layout


def _edge_layout(part, values, fallback: Layout) -> Layout:
    """The layout of a data-flow edge: the first annotated value's, else `fallback`; whole."""
    for v in values:
        if v is not None and v.sharding is not None:
            return _whole(layout_of_value(v, part.pm), part)
    return _whole(fallback, part)


def _while(part, op) -> LocalControlFlow:
    if len(op.regions) != 2:
        raise PartitionError(f"expected two regions (cond, body), found {len(op.regions)}", op=op.name)
    cond, body = (r.block for r in op.regions)
    n = len(op.operands)
    if len(op.results) != n or len(cond.args) != n or len(body.args) != n:
        raise PartitionError(f"{n} carried values but {len(op.results)} results, {len(cond.args)} cond and "
                             f"{len(body.args)} body arguments", op=op.name)
    carries = []
    for i, x in enumerate(op.operands):
        layout = _edge_layout(part, (op.results[i], body.args[i], cond.args[i]), part.desired(x))
        part.check_shape(op.results[i], layout, f"carried value {i} of '{op.name}'")
        carries.append(layout)
    for i, layout in _partial_accumulators(part, op, carries).items():
        carries[i] = layout
    for i, (x, layout) in enumerate(zip(op.operands, carries)):
        part.need(x, layout, f"op '{op.name}' carried value {i}")
    if cond.terminator is None or len(cond.terminator.operands) != 1 or cond.terminator.operands[0].type.rank:
        raise PartitionError("the cond region must return one scalar predicate", op=op.name)
    cond_block = part.nested(cond, carries, [replicated(0)], f"'{op.name}' cond")
    body_block = part.nested(body, carries, carries, f"'{op.name}' body")
    for y, layout in zip(op.results, carries):
        part.define(y, layout)
    return LocalControlFlow(op, carries, list(carries), [cond_block, body_block], trip_count(op))


ACCUMULATE_OPS = frozenset({"jax.add", "jax.add_any"})
UPDATE_OPS = frozenset({"jax.dynamic_update_slice"})


def _uses(block) -> dict[int, int]:
    """id(value) -> how many operands in `block` (nested regions included) read it."""
    count: dict[int, int] = {}
    for op in block.ops:
        for o in op.walk():
            for v in o.operands:
                count[id(v)] = count.get(id(v), 0) + 1
    return count


def _partial_accumulators(part, op, carries) -> dict:
    """{carry index: partial layout} for the carried values the body only accumulates (or writes)
    a contribution into that the body produces sum-partial (see the module doc)."""
    cond, body = (r.block for r in op.regions)
    ret = body.terminator
    if ret is None or len(ret.operands) != len(carries):
        return {}
    body_uses, cond_uses = _uses(body), _uses(cond)
    candidates = []
    for i, r in enumerate(ret.operands):
        add = r.owner
        if r.is_block_arg or add.parent is not body or not (
                (add.name in ACCUMULATE_OPS and len(add.operands) == 2) or add.name in UPDATE_OPS):
            continue
        if add.name in UPDATE_OPS:  # acc with a partial update written into it
            contribution = add.operands[1] if add.operands[0] is body.args[i] else None
        else:
            a, b = add.operands
            contribution = b if a is body.args[i] else a if b is body.args[i] else None
        if contribution is None or contribution is body.args[i] or body_uses.get(id(body.args[i])) != 1 \
                or body_uses.get(id(r)) != 1 or cond_uses.get(id(cond.args[i])) or carries[i].partial:
            continue
        candidates.append((i, contribution))
    if not candidates:
        return {}
    with part.trial():
        part.nested(body, carries, carries, f"'{op.name}' body (trial)")
        produced = {i: part.versions[id(c)][0] for i, c in candidates}
    out = {}
    for i, layout in produced.items():
        if not layout.partial or layout.reduce != "sum":
            continue
        c = dict(candidates)[i]
        if c.type.shape == op.results[i].type.shape:  # acc + g: the carry takes g's layout
            out[i] = layout
        elif layout.dims == carries[i].dims:          # an update written into the stack
            out[i] = layout
    return out


def _case(part, op) -> LocalControlFlow:
    if len(op.operands) != 1 or op.operands[0].type.rank:
        raise PartitionError("expected one scalar index operand", op=op.name)
    if not op.regions:
        raise PartitionError("a case needs at least one branch", op=op.name)
    index = op.operands[0]
    part.need(index, replicated(0), f"op '{op.name}' index")
    results = []
    for i, y in enumerate(op.results):
        returned = [r.block.terminator.operands[i] if r.block.terminator is not None and
                    i < len(r.block.terminator.operands) else None for r in op.regions]
        layout = _edge_layout(part, [y, *returned], replicated(y.type.rank))
        part.check_shape(y, layout, f"result {i} of '{op.name}'")
        results.append(layout)
    branches = [part.nested(r.block, [], results, f"'{op.name}' branch {k}") for k, r in enumerate(op.regions)]
    for y, layout in zip(op.results, results):
        part.define(y, layout)
    return LocalControlFlow(op, [replicated(0)], results, branches)


# -- trip counts ---------------------------------------------------------------------------------
def _int_constant(value) -> Optional[int]:
    """The integer of a scalar integer `stablehlo.constant`, else None."""
    owner = value.owner
    if value.is_block_arg or owner is None or owner.name != "stablehlo.constant" or value.type.rank:
        return None
    if not value.type.dtype.startswith(("i", "si", "ui")):
        return None
    from ..ir.constants import dense_value
    from ..ir.evaluate import _np_dtype
    try:
        return int(dense_value(owner.attrs["value"], value.type, _np_dtype(value.type)))
    except Exception:  # an attribute we cannot read: the count is unknown, not an error
        return None


def trip_count(op) -> Optional[int]:
    """How many times a counted while loop's body runs (scan, fori_loop), else None."""
    cond, body = (r.block for r in op.regions)
    ret = cond.terminator
    if ret is None or len(ret.operands) != 1 or ret.operands[0].is_block_arg:
        return None
    lt = ret.operands[0].owner
    if lt.name not in ("jax.lt", "stablehlo.compare") or len(lt.operands) != 2:
        return None
    if lt.name == "stablehlo.compare" and str(lt.attrs.get("comparison_direction", "")).find("LT") < 0:
        return None
    counter, limit = lt.operands
    if not counter.is_block_arg or counter.owner is not cond:
        return None
    k, stop = counter.index, _int_constant(limit)
    start = _int_constant(op.operands[k])
    if stop is None or start is None or body.terminator is None:
        return None
    step = body.terminator.operands[k]
    add = step.owner
    if step.is_block_arg or add.name not in ("jax.add", "stablehlo.add"):
        return None
    a, b = add.operands
    if not ((a is body.args[k] and _int_constant(b) == 1) or (b is body.args[k] and _int_constant(a) == 1)):
        return None
    return max(0, stop - start)
