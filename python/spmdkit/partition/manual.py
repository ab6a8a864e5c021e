"""`sdy.manual_computation` in the partitioner: a `jax.shard_map` written inside the step.

The body is already a per-device program, written by the user with its own collectives (`psum`,
`all_gather`, `ppermute`, ...) over the mesh's axis names. The whole partitioned program runs
inside one shard_map over every axis of the same mesh, so a computation manual over every axis
runs there as it is: its operands are resharded to its `in_shardings` (what `in_specs` said), its
body's ops run on the local shards unchanged (their params already hold local sizes), and its
results are defined in its `out_shardings`. Its collectives are counted in the plan's summary
beside ours (the bytes one device receives, by the planner's ring formulas), so that the plan
still says what the compiled program moves.

Refused with a PartitionError naming the op: a computation manual over some axes only (its body
would still be partitioned over the others). On the fine mesh (fine_mesh.py) the body's
collectives name the fine axes that make up the axes they named.
"""
from __future__ import annotations

import math

from ..sharding import AxisRef
from .control_flow import CONTROL_FLOW_OPS, trip_count
from .errors import PartitionError, value_name
from .layouts import itemsize, layout_of_sharding, replicated
from .plan import LocalBlock, LocalControlFlow, LocalManual, LocalOp

MANUAL_OPS = frozenset({"sdy.manual_computation"})

# the user's collectives: primitive -> (the planner's collective kind, how the bytes one device
# receives follow from the operand and result bytes over n devices: the ring formulas)
_COLLECTIVES = {
    "jax.psum": ("all_reduce", lambda op_b, res_b, n: 2 * (n - 1) / n * op_b),
    "jax.psum_invariant": ("all_reduce", lambda op_b, res_b, n: 2 * (n - 1) / n * op_b),
    "jax.pmax": ("all_reduce", lambda op_b, res_b, n: 2 * (n - 1) / n * op_b),
    "jax.pmin": ("all_reduce", lambda op_b, res_b, n: 2 * (n - 1) / n * op_b),
    "jax.all_gather": ("all_gather", lambda op_b, res_b, n: (n - 1) / n * res_b),
    "jax.all_gather_invariant": ("all_gather", lambda op_b, res_b, n: (n - 1) / n * res_b),
    "jax.reduce_scatter": ("reduce_scatter", lambda op_b, res_b, n: (n - 1) / n * op_b),
    "jax.all_to_all": ("all_to_all", lambda op_b, res_b, n: (n - 1) / n * op_b),
    "jax.ppermute": ("collective_permute", lambda op_b, res_b, n: res_b),
}


def partition_manual(part, op) -> LocalManual:
    """The local form of a manual computation in the block `part` (a partitioner._Partitioner)
    is partitioning; reshards of its operands go to `part`'s steps before it."""
    pm = part.pm
    check_fully_manual(op, pm)
    ins, outs = op.attrs.get("in_shardings", []), op.attrs.get("out_shardings", [])
    if len(ins) != len(op.operands) or len(outs) != len(op.results):
        raise PartitionError(f"{len(ins)} in_shardings for {len(op.operands)} operands, {len(outs)} out_shardings for "
                             f"{len(op.results)} results", op=op.name)
    operands = [layout_of_sharding(s, v.type.rank, pm, value_name(v), v.type.shape) for s, v in zip(ins, op.operands)]
    results = [layout_of_sharding(s, v.type.rank, pm, value_name(v), v.type.shape) for s, v in zip(outs, op.results)]
    for i, (v, layout) in enumerate(zip(op.operands, operands)):
        part.check_shape(v, layout, f"operand {i} of '{op.name}'")
        part.need(v, part.pm.canonical(layout), f"op '{op.name}' operand {i}")
    for i, (y, layout) in enumerate(zip(op.results, results)):
        part.check_shape(y, layout, f"result {i} of '{op.name}'")
        part.define(y, layout)
    body = op.regions[0].block if op.regions and op.regions[0].blocks else None
    if body is None or body.terminator is None or len(body.terminator.operands) != len(op.results):
        raise PartitionError("the body must return one value per result", op=op.name)
    block = as_is(body, pm)
    collectives = []
    _count_collectives(body, pm, part.cost, 1.0, collectives)
    return LocalManual(op, operands, results, block, collectives)


def check_fully_manual(op, pm) -> None:
    """PartitionError unless the computation is manual over every mesh axis (of size > 1)."""
    manual = list(op.attrs.get("manual_axes", ()))
    free = [a for a in pm.user_mesh.axis_names if a not in manual and pm.user_mesh.axis_size(a) > 1]
    if free:
        raise PartitionError(f"a shard_map manual over {manual} only is not partitioned (its body would still be split "
                             f"over {free}); make it manual over every mesh axis", op=op.name)


def as_is(block, pm) -> LocalBlock:
    """A per-device block run as written: every value whole in its own (local) type; on a fine
    mesh (fine_mesh.py) the axis names its collectives name are the fine axes making them up."""
    steps = []
    for op in block.ops:
        if op is block.terminator:
            break
        whole = [replicated(v.type.rank) for v in op.results]
        if op.name in CONTROL_FLOW_OPS:
            blocks = [as_is(r.block, pm) for r in op.regions]
            steps.append(LocalControlFlow(op, [replicated(v.type.rank) for v in op.operands], whole, blocks,
                                          trip_count(op) if op.name == "stablehlo.while" else None))
        elif op.regions:
            raise PartitionError("ops with regions other than while/case are not run inside a shard_map body",
                                 op=op.name)
        else:
            steps.append(LocalOp(op, _on_mesh(op.attrs, pm), [replicated(v.type.rank) for v in op.operands], whole))
    ret = block.terminator.operands if block.terminator is not None else []
    return LocalBlock(list(block.args), [replicated(v.type.rank) for v in block.args], steps,
                      [(v, replicated(v.type.rank)) for v in ret])


_AXIS_PARAMS = ("axes", "axis_name")  # where a collective (psum, ppermute, axis_index, ...) names mesh axes


def _axis_names(value):
    """The mesh axis names a param holds (a name, or a list of names), else None (ints: array dims)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and value and all(isinstance(a, str) for a in value):
        return list(value)
    return None


def _on_mesh(attrs: dict, pm) -> dict:
    """`attrs` with the names of the program mesh's axes as the partition's mesh names them: on a
    fine mesh, "mp" is ("mp(1)2", "mp(2)2"), whose joint index is mp's (row-major), so a psum,
    all_gather, all_to_all, ppermute's permutation or axis_index over them means what it did."""
    if pm.pieces is None:
        return attrs
    out = attrs
    for key in _AXIS_PARAMS:
        names = _axis_names(attrs.get(key))
        if names is None:
            continue
        fine = [f for a in names for f in pm.fine_names(AxisRef(a))]
        if fine != names:
            out = dict(out) if out is attrs else out
            out[key] = fine
    return out


def _bytes(value) -> float:
    return math.prod(value.type.shape) * itemsize(value)


def _count_collectives(block, pm, cost, weight: float, out: list) -> None:
    """(kind, axes, bytes one device receives, modeled us, times per call) of every collective of
    the user's in `block`, a loop body's once per iteration (its trip count; 1 when unknown)."""
    for op in block.ops:
        if op.name == "stablehlo.while":
            n = trip_count(op)
            cond, body = (r.block for r in op.regions)
            _count_collectives(cond, pm, cost, weight * ((n if n is not None else 1) + 1), out)
            _count_collectives(body, pm, cost, weight * (n if n is not None else 1), out)
            continue
        if op.name == "stablehlo.case":  # the branch moving the most
            branches = []
            for r in op.regions:
                found: list = []
                _count_collectives(r.block, pm, cost, weight, found)
                branches.append(found)
            out.extend(max(branches, key=lambda b: sum(c[2] * c[4] for c in b), default=[]))
            continue
        known = _COLLECTIVES.get(op.name)
        if known is None:
            continue
        attrs = _on_mesh(op.attrs, pm)
        axes = _axis_names(attrs.get("axes", attrs.get("axis_name"))) or []
        n = math.prod(pm.spec.size(a) for a in axes) if axes else 1
        if n <= 1:
            continue
        kind, formula = known
        for v, y in zip(op.operands, op.results):  # a tuple collective moves each tensor
            nbytes = formula(_bytes(v), _bytes(y), n)
            out.append((kind, tuple(axes), nbytes, cost.collective_us(pm.spec, kind, axes, nbytes), weight))
