"""The search space: per node (a function argument, an op, a function result) the ways it can be
laid out, read from the op's factor table.

An op strategy assigns mesh axes to the op's factors: each mesh axis goes to at most one factor,
a factor's axes (in mesh order) must divide its size, need-replication, permutation and blocked
factors take none, and in a dim made of several factors (a reshape's compound dim) only the
major-most factor of size > 1 may take axes (a minor one alone would leave a device a strided
set of blocks). A tensor's layout follows: per dim, the axes of its factors major to minor. A
sharded reduction factor leaves the results partial over its axes (sum, or the reduction's
max/min). The fully replicated strategy is always there.

An argument's or result's strategies are its layouts: each mesh axis on at most one dim, dims
divisible; pinned ones have exactly the layout the user gave.

Control flow (JAX's scan, fori_loop, while_loop, cond, switch): each carried value of a while
(and each result of a case) is a "carry" node whose strategies are its layouts, read in that
layout from its initial value and from the body's (each branch's) result; the ops of the cond,
the body and the branches are nodes like any other, reading the carries through the regions'
arguments and the enclosing blocks' values directly. A loop body's nodes and the reshards of its
values count once per iteration (the trip count of a counted loop, else once).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Optional

from ..ir.core import op_signature
from ..partition.layouts import ProgramMesh, layout_of_value, replicated, to_spec
from ..partition.partitioner import itemsize
from ..partition.rules import IDENTITY_OPS, SOURCE_OPS, factor_table
from ..reshard import Layout
from .errors import AutoShardingError

# reductions whose partial results combine with max/min; other non-sum reductions (product, and,
# or, argmax) keep their reduction factors whole
REDUCE_KIND = {"jax.reduce_max": "max", "jax.reduce_min": "min", "stablehlo.reduce_max": "max",
               "reduce_max": "max", "max": "max", "reduce_min": "min", "min": "min"}
NOT_SUMMABLE = ("prod", "and", "or", "xor", "argm", "cum", "sort", "top_k")
UNSPLITTABLE = frozenset({"need_replication", "permutation"})


@dataclass(frozen=True)
class Strategy:
    """One way to lay out a node: the layouts of its operands and results, the axes per factor."""
    operands: tuple[Layout, ...]
    results: tuple[Layout, ...]
    factor_axes: tuple[tuple[str, ...], ...] = ()   # per factor of the op's table (ops only)
    local_flops: float = 0.0

    def text(self, names: Optional[list[str]] = None) -> str:
        if not self.factor_axes:
            layouts = self.results or self.operands
            split = any(l.dims and any(l.dims) or l.partial for l in layouts)
            return layout_text(layouts[0]) if split else "replicated"
        names = names or [f"f{i}" for i in range(len(self.factor_axes))]
        parts = [f"{n}:{','.join(a)}" for n, a in zip(names, self.factor_axes) if a]
        return "{" + " ".join(parts) + "}" if parts else "replicated"


def layout_text(layout: Layout) -> str:
    dims = ", ".join("{" + ",".join(a) + "}" for a in layout.dims)
    part = f" partial={{{','.join(layout.partial)}}}:{layout.reduce}" if layout.partial else ""
    return f"[{dims}]{part}"


@dataclass(eq=False)
class Node:
    kind: str                         # "arg", "op", "carry" (one value of a while or case), "result"
    name: str                         # the leaf's label, or the op's name and place
    strategies: list[Strategy]
    op: Any = None                    # the IR op (kinds "op" and "carry")
    value: Any = None                 # the argument's or result's IR value
    index: int = 0                    # argument or result number; op position in its block
    pinned: bool = False
    tied_results: list[int] = field(default_factory=list)   # results that must come back in this arg's layout
    factor_names: list[str] = field(default_factory=list)
    carry: int = -1                   # kind "carry": which of the op's results
    weight: float = 1.0               # how many times a step runs it (a loop body's ops: the trip count)
    depth: int = 0                    # 0: in the function's own block; else nested in that many regions


@dataclass(frozen=True)
class Edge:
    """A value produced by `src` (its result `src_slot`) and read by `dst` (its operand `dst_slot`);
    `weight`: how many times a step reshards it (the partitioner reshards a value in the block
    that defines it: once per iteration inside a loop body, once before the loop for a value the
    body reads from outside)."""
    src: int
    src_slot: int
    dst: int
    dst_slot: int
    value: Any
    weight: float = 1.0


@dataclass
class SearchSpace:
    pm: ProgramMesh
    nodes: list[Node]
    edges: list[Edge]


def _axis_subsets_divide(size: int, axes, pm: ProgramMesh) -> bool:
    return size % math.prod(pm.spec.size(a) for a in axes) == 0


def value_layouts(shape, pm: ProgramMesh) -> list[Layout]:
    """Every layout of a value: each mesh axis on one dim or none (mesh order within a dim),
    every dim divisible."""
    names = [a for a in pm.spec.names if pm.spec.size(a) > 1]
    out = []
    for choice in itertools.product(range(len(shape) + 1), repeat=len(names)):
        dims = [[] for _ in shape]
        for axis, d in zip(names, choice):
            if d < len(shape):
                dims[d].append(axis)
        if all(_axis_subsets_divide(shape[d], dims[d], pm) for d in range(len(shape))):
            out.append(Layout.make(pm.spec, dims))
    return list(dict.fromkeys(out))


def _reduce_kind(op_name: str) -> Optional[str]:
    if op_name in REDUCE_KIND:
        return REDUCE_KIND[op_name]
    short = op_name.split(".")[-1]
    return None if any(s in short for s in NOT_SUMMABLE) else "sum"


def op_strategies(op, pm: ProgramMesh) -> tuple[list[Strategy], list[str]]:
    """The op's strategies from its rule's factor table (AutoShardingError: no rule)."""
    try:
        table = factor_table(op, lambda v: to_spec(replicated(v.type.rank), v.type.shape, pm))
    except Exception as e:  # PartitionError (no rule) or a rule that refuses the call
        raise AutoShardingError(f"no sharding rule to search over: {getattr(e, 'reason', e)}", op=op.name) from None
    sizes = list(table.sizes)
    kinds = list(table.kinds)
    n = len(sizes)
    blocked = set(table.blocked) if not (table.blocked and isinstance(table.blocked[0], bool)) else \
        {f for f, b in enumerate(table.blocked) if b}
    operands = [[list(d) for d in t] for t in table.operands]
    results = [[list(d) for d in t] for t in table.results]
    reduce_kind = _reduce_kind(op.name)
    in_results = {f for t in results for d in t for f in d}
    splittable = []
    for f in range(n):
        if kinds[f] in UNSPLITTABLE or f in blocked or sizes[f] <= 1:
            continue
        if kinds[f] == "reduction" and reduce_kind is None:
            continue
        if kinds[f] != "reduction" and f not in in_results:
            continue  # a non-reduction factor no result holds: nothing says what splitting it means
        major_only = all(next((g for g in d if sizes[g] > 1), f) == f for t in operands + results for d in t if f in d)
        if major_only:
            splittable.append(f)
    axes = [a for a in pm.spec.names if pm.spec.size(a) > 1]
    contraction = any(kinds[f] == "reduction" for f in range(n)) and sum(1 for t in operands if t) >= 2
    seen, out = set(), []
    for choice in itertools.product(range(len(splittable) + 1), repeat=len(axes)):
        fax = [[] for _ in range(n)]
        for axis, k in zip(axes, choice):
            if k < len(splittable):
                fax[splittable[k]].append(axis)
        if any(fax[f] and not _axis_subsets_divide(sizes[f], fax[f], pm) for f in range(n)):
            continue
        key = tuple(map(tuple, fax))
        if key in seen:
            continue
        seen.add(key)
        partial = [a for f in range(n) if kinds[f] == "reduction" for a in fax[f]]

        def layout(tensor, may_be_partial):
            dims = [[a for f in d for a in fax[f]] for d in tensor]
            if may_be_partial and partial:
                return Layout.make(pm.spec, dims, sorted(partial, key=pm.spec.names.index), reduce_kind)
            return Layout.make(pm.spec, dims)

        local = math.prod(sizes[f] // math.prod(pm.spec.size(a) for a in fax[f]) for f in range(n))
        out.append(Strategy(tuple(layout(t, False) for t in operands), tuple(layout(t, True) for t in results),
                            key, float(local * (2 if contraction else 1))))
    names = [chr(ord("i") + f) if f < 18 else f"f{f}" for f in range(n)]
    return out, names


def _signature(op):
    """What an op's strategies depend on (ir.core.op_signature: name, types, attributes); None
    for an op with regions (a reduce's body) or attributes that cannot be keyed: not shared."""
    if op.regions:
        return None
    try:
        sig = op_signature(op)
        hash(sig)
    except TypeError:
        return None
    return sig


def _manual_strategy(op, pm: ProgramMesh) -> Strategy:
    """The one strategy of an sdy.manual_computation: operands in its in_shardings, results in its
    out_shardings (its body runs as written: partition/manual.py)."""
    from ..partition.layouts import layout_of_sharding
    from ..partition.manual import check_fully_manual
    try:
        check_fully_manual(op, pm)
        return Strategy(tuple(layout_of_sharding(sh, v.type.rank, pm, f"operand {i}", v.type.shape)
                              for i, (sh, v) in enumerate(zip(op.attrs["in_shardings"], op.operands))),
                        tuple(layout_of_sharding(sh, v.type.rank, pm, f"result {i}", v.type.shape)
                              for i, (sh, v) in enumerate(zip(op.attrs["out_shardings"], op.results))))
    except (KeyError, ValueError) as e:
        raise AutoShardingError(f"cannot read its shardings: {getattr(e, 'reason', e)}", op=op.name) from None


def _arg_name(v, i: int) -> str:
    return f"%arg{i}" + (f" ({v.name})" if v.name else "")


def build_space(program, pinned_args: list[bool], ties: dict[int, int]) -> SearchSpace:
    """Nodes and edges of `program`'s main function (its control flow included). `pinned_args[i]`:
    argument i keeps its annotation; `ties`: result index -> argument index whose layout it must
    come back in; other results keep a declared sharding, or are free when they have none."""
    from ..partition.control_flow import CONTROL_FLOW_OPS, trip_count
    from ..partition.manual import MANUAL_OPS
    from ..partition.partitioner import check_function
    pm = ProgramMesh.of(program)
    fn = program.main
    try:
        check_function(fn, control_flow=True, other_regions=True)
    except ValueError as e:
        raise AutoShardingError(str(e)) from None
    nodes: list[Node] = []
    edges: list[Edge] = []
    where: dict[int, tuple[int, int, float]] = {}  # id(value) -> (node, result slot, weight of its block)
    shared: dict = {}                          # op signature -> (strategies, factor names)
    layouts_of: dict = {}                      # (kind, reads, shape) -> strategies over value_layouts (shared)

    def layouts(shape, kind, reads=1):
        key = (kind, reads, tuple(shape))
        hit = layouts_of.get(key)
        if hit is None:
            make = {"arg": lambda l: Strategy((), (l,)), "identity": lambda l: Strategy((l,) * reads, (l,)),
                    "result": lambda l: Strategy((l,), ())}[kind]
            hit = layouts_of[key] = [make(l) for l in value_layouts(key[2], pm)]
        return hit

    def read(node: int, slot: int, v) -> None:
        src, src_slot, weight = where[id(v)]
        edges.append(Edge(src, src_slot, node, slot, v, weight))

    for i, v in enumerate(fn.args):
        if pinned_args[i]:
            try:
                layout = layout_of_value(v, pm)
            except ValueError as e:
                raise AutoShardingError(getattr(e, "reason", str(e)), value=_arg_name(v, i)) from None
            for d, axes in enumerate(layout.dims):
                if not _axis_subsets_divide(v.type.shape[d], axes, pm):
                    raise AutoShardingError(f"pinned layout splits dim {d} of size {v.type.shape[d]} over {list(axes)} "
                                            f"({math.prod(pm.spec.size(a) for a in axes)} parts), which does not "
                                            f"divide it", value=_arg_name(v, i))
            strategies = [Strategy((), (layout,))]
        else:
            strategies = layouts(v.type.shape, "arg")
        nodes.append(Node("arg", f"%arg{i}", strategies, value=v, index=i, pinned=pinned_args[i]))
        where[id(v)] = (len(nodes) - 1, 0, 1.0)

    def passing(y, reads: int = 1) -> list[Strategy]:
        """Strategies of a node that passes its value through unchanged (a constraint, a loop's
        carry) into `y`: the layout the program fixes on `y`, else every layout."""
        if y.sharding is None:
            return layouts(y.type.shape, "identity", reads)
        target = layout_of_value(y, pm)
        return [Strategy((target,) * reads, (target,))]

    def carry_node(op, k: int, j: int, reads: int, weight: float, depth: int, where_: str) -> int:
        """A node for result j of a while or case (its carried value, or its j-th result)."""
        strategies = passing(op.results[j], reads)
        nodes.append(Node("carry", f"{where_}{op.name}@{k} #{j}", strategies, op=op, index=k, carry=j, weight=weight,
                          depth=depth))
        return len(nodes) - 1

    def control_flow(op, k: int, weight: float, depth: int, where_: str) -> None:
        inside = f"{where_}{op.name}@{k}/"   # nested nodes are named by their path: while@12/body/dot@3
        if op.name == "stablehlo.while":
            cond, body = (r.block for r in op.regions)
            inner = weight * max(trip_count(op) or 1, 1)
            carries = [carry_node(op, k, j, 2, weight, depth, where_) for j in range(len(op.results))]
            for j, x in enumerate(op.operands):
                read(carries[j], 0, x)
            for block in (cond, body):
                for j, a in enumerate(block.args):
                    where[id(a)] = (carries[j], 0, inner)
            walk(cond, inner, depth + 1, inside + "cond/")  # its predicate is made whole: no edge
            ret = walk(body, inner, depth + 1, inside + "body/")
            for j, r in enumerate(ret.operands):
                read(carries[j], 1, r)
        else:  # stablehlo.case: its index is a scalar (whole, no choice); its branches take no arguments
            rets = [walk(region.block, weight, depth + 1, f"{inside}branch{b}/") for b, region in enumerate(op.regions)]
            carries = [carry_node(op, k, j, len(rets), weight, depth, where_) for j in range(len(op.results))]
            for j, node in enumerate(carries):
                for b, ret in enumerate(rets):
                    read(node, b, ret.operands[j])
        for j, y in enumerate(op.results):
            where[id(y)] = (carries[j], 0, weight)

    def walk(block, weight: float, depth: int, where_: str = ""):
        """Nodes for the ops of `block`; returns its terminator (a region's: required)."""
        for k, op in enumerate(block.ops):
            if op.is_terminator:
                return op
            if op.regions and op.name in CONTROL_FLOW_OPS:
                control_flow(op, k, weight, depth, where_)
                continue
            if op.name in MANUAL_OPS:  # a shard_map in the step: its in/out shardings are the user's (no choice)
                strategies, names = [_manual_strategy(op, pm)], []
            elif op.name in SOURCE_OPS or not op.operands:   # computed whole on every device; a consumer slices it free
                strategies, names = [Strategy((), tuple(replicated(r.type.rank) for r in op.results))], []
            elif op.name in IDENTITY_OPS:
                strategies, names = passing(op.result), []
            else:   # once per distinct signature: a transformer's layers repeat theirs
                sig = _signature(op)
                hit = shared.get(sig) if sig is not None else None
                if hit is None:
                    hit = op_strategies(op, pm)
                    if sig is not None:
                        shared[sig] = hit
                strategies, names = hit
            nodes.append(Node("op", f"{where_}{op.name}@{k}", strategies, op=op, index=k, factor_names=names,
                              weight=weight, depth=depth))
            nid = len(nodes) - 1
            for s, v in enumerate(op.operands):
                read(nid, s, v)
            for s, v in enumerate(op.results):
                where[id(v)] = (nid, s, weight)
        if depth:
            raise AutoShardingError("a region of a control-flow op has no terminator", op=block.ops[-1].name
                                    if block.ops else "region")
        return None

    ret = walk(fn.body, 1.0, 0)
    if ret is None:
        raise AutoShardingError(f"@{fn.name} has no return")
    declared = list(fn.result_shardings) + [None] * len(ret.operands)
    for i, v in enumerate(ret.operands):
        src, slot, _ = where[id(v)]
        if i in ties:
            a = ties[i]
            nodes[a].tied_results.append(i)
            edges.append(Edge(src, slot, a, 0, v))
            continue
        if declared[i] is not None:
            from ..partition.layouts import layout_of_sharding
            try:
                strategies = [Strategy((layout_of_sharding(declared[i], v.type.rank, pm, f"result {i}"),), ())]
            except ValueError as e:
                raise AutoShardingError(getattr(e, "reason", str(e)), value=f"result {i}") from None
        else:
            strategies = layouts(v.type.shape, "result")
        nodes.append(Node("result", f"result {i}", strategies, value=v, index=i, pinned=declared[i] is not None))
        edges.append(Edge(src, slot, len(nodes) - 1, 0, v))
    return SearchSpace(pm, nodes, edges)


def end_layouts(node: Node, slot: int, side: str) -> list[Layout]:
    """Per strategy of `node`, the layout of one end of an edge: its result `slot` (side "out",
    the producer) or how it reads operand `slot` (side "in", the consumer). A tied argument
    reads the result it is tied to in its own layout."""
    if side == "out":
        return [s.results[slot] for s in node.strategies]
    if node.kind == "arg":
        return [s.results[0] for s in node.strategies]
    return [s.operands[slot] for s in node.strategies]


def value_bytes(value) -> int:
    return math.prod(value.type.shape) * itemsize(value)
