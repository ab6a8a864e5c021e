"""spmdkit.ir programs <-> propagation graphs: the integration point of issue 9.

`propagate_program(program)` builds a Graph from a `spmdkit.ir.Program` (meshes, function
arguments and results, every op that has a factor table, and the compiler-API ops: sharding
constraints, groups, barriers, while/case/optimization_barrier data-flow edges, func.call
edges and manual computations), propagates, and writes the shardings back onto the program's
values (in place). Each op's factor table comes from `factor_table_of(op)`; by default the
registry rule's `factors(...)` through `spmdkit.ir.bind` (the jax-rules branch), and an op
whose table cannot be had (no rule, no factors in this build) is left opaque: nothing
propagates through it, and it is listed in `Propagated.opaque`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import _core
from ..ir.core import paused_gc
from ..ir.signatures import OpSignatures
from .factor_text import parse_factor_table
from .graph import Graph


@dataclass
class Propagated:
    program: object
    graph: Graph
    value_ids: dict = field(default_factory=dict)   # id(ir Value) -> graph value id
    values: list = field(default_factory=list)      # graph value id -> ir Value (or None for edges)
    opaque: list = field(default_factory=list)      # ops without a factor table: (op name, reason)
    constraints: list = field(default_factory=list)  # sdy.sharding_constraint ops (their sharding is an attribute)
    edges: list = field(default_factory=list)        # (explicit sdy.data_flow_edge op, its owner's sharding before)
    manuals: list = field(default_factory=list)      # (manual_computation op, in-edge ids, out-edge ids)
    # every op's signature number, for the partition of the same program (partition(signatures=))
    signatures: OpSignatures = field(default_factory=OpSignatures)

    def explain(self, value) -> str:
        return self.graph.explain(self.value_ids[id(value)])


# ops that only move dims around, first in op-priority propagation like elementwise ops
LAYOUT_PASS_THROUGH = frozenset({"stablehlo.reshape", "stablehlo.transpose", "jax.reshape", "jax.transpose",
                                 "jax.squeeze", "jax.expand_dims"})


# custom calls that move a value between host and device memory: pass-through ops for Shardy
MEMORY_MOVES = frozenset({"MoveToHost", "MoveToDevice"})


def _sharding_text(sharding) -> str:
    text = str(sharding)
    return text[len("#sdy.sharding"):] if text.startswith("#sdy.sharding") else text


_PRESET_RULE = "#sdy.op_sharding_rule<"

# ops jax.jit's lowering writes that jaxlib's Shardy has no sharding rule for: propagation leaves
# them opaque, as Shardy does (its values equal Shardy's); the search and the partitioner, which
# need a rule for every op, read the registry's (chlo.square is jax.square's, chlo.top_k jax.top_k's)
SHARDY_HAS_NO_RULE = frozenset({"chlo.square", "chlo.top_k"})


def default_factor_table(op):
    """The op's factor table: a pre-set `sdy.sharding_rule` attribute (as in Shardy, it always
    wins: a custom_call's only rule), else the registry rule's table (raises when it has none, and
    for the ops of SHARDY_HAS_NO_RULE)."""
    from .. import DistTensorSpec, ProcessMesh, TensorDistAttr
    from ..ir import bind

    preset = op.attrs.get("sdy.sharding_rule")
    if preset is not None:
        text = str(preset)
        if not (text.startswith(_PRESET_RULE) and text.endswith(">")):
            raise ValueError(f"op '{op.name}': sdy.sharding_rule is not an #sdy.op_sharding_rule: {text}")
        return text[len(_PRESET_RULE):-1].removesuffix(", custom")
    if op.name in SHARDY_HAS_NO_RULE:
        raise LookupError("jaxlib's Shardy has no sharding rule for it: opaque to propagation, as in Shardy")

    mesh = ProcessMesh([0], dim_names=["_"])

    def spec_of(value):
        attr = TensorDistAttr()
        attr.process_mesh = mesh
        attr.dims_mapping = [-1] * len(value.type.shape)
        return DistTensorSpec(list(value.type.shape), attr)

    return bind(op).factors(spec_of)


def _table_parts(table, result_shapes=None):
    """(operands, results, sizes, kinds, blocked) from a FactorTable object, or None for text;
    `result_shapes` give the sizes of the factors the op creates (see _born_sizes)."""
    if isinstance(table, str):
        return None
    n = len(table.sizes)
    blocked = set(table.blocked) if not (table.blocked and isinstance(table.blocked[0], bool)) else \
        {f for f, b in enumerate(table.blocked) if b}
    operands, results = [list(map(list, t)) for t in table.operands], [list(map(list, t)) for t in table.results]
    sizes = list(table.sizes)
    if result_shapes is not None:
        _born_sizes(sizes, results, result_shapes)
    return operands, results, sizes, list(table.kinds), [f in blocked for f in range(n)]


def _born_sizes(sizes: list, results: list, result_shapes) -> None:
    """A factor the op creates (a dim only its results have, as top_k's k) has no size in the
    rule's table, which sees only the operands (-1): it is the size of a result dim made of it alone."""
    for f, size in enumerate(sizes):
        if size < 0:
            sizes[f] = next((shape[d] for shape, dims in zip(result_shapes, results) for d, fs in enumerate(dims)
                             if fs == [f]), size)


# ops the builder turns into edges, groups, constraints and regions rather than factor tables
_COMPILER_API = frozenset({"func.return", "return", "stablehlo.return", "sdy.return", "sdy.sharding_group",
                           "sdy.sharding_constraint", "sdy.propagation_barrier", "stablehlo.optimization_barrier",
                           "stablehlo.while", "stablehlo.case", "func.call", "call", "sdy.manual_computation",
                           "sdy.data_flow_edge", "sdy.named_computation"})


# ops the C++ loop leaves to _Builder.op: the compiler API and custom calls (memory moves)
_GENERAL = _COMPILER_API | {"stablehlo.custom_call"}


class _Builder:
    def __init__(self, program, factor_table_of):
        self.program = program
        self.factor_table_of = factor_table_of or default_factor_table
        self.g = Graph()
        self.out = Propagated(program, self.g)
        self.groups: dict[int, list[int]] = {}
        self.value_ids = self.out.value_ids
        # Ops of the same name, types and attributes share one factor table (computed once):
        # signature number -> (table id, why it has none)
        self.tables: dict = {} if self.factor_table_of is default_factor_table else None
        self.signatures = self.out.signatures
        for name, mesh in program.meshes.items():
            self.g.mesh(name, list(zip(mesh.axis_names, mesh.shape)), maximal=mesh.is_maximal)

    def value(self, v, name=""):
        vid = self.value_ids.get(id(v))
        if vid is None:
            name = name or v.name or ""
            vid = self.g.value_sharded(v.type.shape, v.sharding, name) if v.sharding is not None else \
                self.g.plain_value(v.type.shape, name)
            self.value_ids[id(v)] = vid
            self.bind(vid, v)
        return vid

    def bind(self, vid, v):
        """out.values[vid] = v: the list is indexed by graph value id, and the graph makes values
        of its own (a manual_computation's boundary values) that no IR value stands for."""
        values = self.out.values
        if vid == len(values):
            values.append(v)
            return
        while len(values) <= vid:
            values.append(None)
        values[vid] = v

    def results(self, vs) -> list:
        """self.value(v) for each of an op's results: the hot path of a build (one call per op)."""
        known, ids, plain = self.value_ids.get, self.value_ids, self.g.plain_value
        out = []
        for v in vs:
            vid = known(id(v))
            if vid is None:
                if v.sharding is not None or v.name:
                    vid = self.value(v)
                else:
                    vid = ids[id(v)] = plain(v.type.shape)
                    self.bind(vid, v)
            out.append(vid)
        return out

    def edge(self, sources, targets):
        self.g.data_flow_edge([self.value(s) for s in sources], [self.value(t) for t in targets])

    def function(self, fn):
        for i, a in enumerate(fn.args):
            self.value(a, f"{fn.name}.arg{i}")
        for op in fn.body.ops:  # an explicit edge's result is its owner (before the return reads it)
            if op.name == "sdy.data_flow_edge":
                self.out.value_ids[id(op.results[0])] = self.value(op.operands[0])
        ret = fn.body.terminator
        if ret is not None and ret.name in ("func.return", "return"):
            # Shardy applies the function's result shardings before it walks the ops: their
            # edges come first, so a result's sharding reaches the returned value first
            self.op(ret, fn)
        self.ops(fn.body.ops, fn, skip=ret)

    def block(self, block, fn=None):
        self.ops(block.ops, fn)

    def ops(self, ops, fn, skip=None):
        """self.op(op, fn) for each op but `skip`. The common case, an op with a factor table whose
        results are first seen here, plain, is taken in C++ (_core.build_rule_ops) op after op;
        it stops at each op it leaves to self.op (the first op of its kind makes the table the
        rest share)."""
        if self.tables is None:  # a caller's own factor_table_of: every op through it
            for op in ops:
                if op is not skip:
                    self.op(op, fn)
            return
        g = self.g
        builder = (self.tables, self.value_ids, self.out.values)
        numbers = self.signatures.sign(ops)
        i, count = 0, len(ops)
        while i < count:
            default = g._default_id if g._default_id is not None else g._default_mesh_id()
            i = _core.build_rule_ops(ops, i, skip, builder, g._build_lists(), default, _GENERAL, LAYOUT_PASS_THROUGH,
                                     numbers)
            if i < count:
                if ops[i] is not skip:
                    self.op(ops[i], fn)
                i += 1

    def op(self, op, fn):
        name = op.name
        if name not in _COMPILER_API and (name != "stablehlo.custom_call" or not _memory_move(op)):  # an op with a factor table (or an opaque one)
            table = self.table_of(op)
            if table is not None:
                known = self.value_ids.get
                operands = [known(id(v)) for v in op.operands]
                if None in operands:
                    operands = [self.value(v) for v in op.operands]
                # Shardy's op priorities move reshapes and transposes with the elementwise ops
                pass_through = True if name in LAYOUT_PASS_THROUGH else None
                ids, new = self.value_ids, True
                for v in op.results:
                    if v.sharding is not None or v.name or id(v) in ids:
                        new = False
                        break
                if new:  # the common case: results first seen here, plain
                    results = self.g.rule_op(name, table, operands, [v.type.shape for v in op.results], pass_through)
                    for v, vid in zip(op.results, results):
                        ids[id(v)] = vid
                        self.bind(vid, v)
                else:
                    results = self.results(op.results)
                    self.g._add_op(name, table, operands, results, pass_through, 3, (0, 0))
            return
        if name in ("func.return", "return"):
            for i, v in enumerate(op.operands):
                sharding = fn.result_shardings[i] if fn and i < len(fn.result_shardings) else None
                r = self.g.func_result(self.value(v), sharding)
                self.bind(r, None)
                self.out.value_ids[("result", fn.name, i)] = r
            return
        if name in ("stablehlo.return", "sdy.return"):
            return  # handled by the op that owns the region
        if name == "sdy.sharding_group":
            self.groups.setdefault(int(op.attrs["group_id"]), []).append(self.value(op.operands[0]))
            return
        if name == "sdy.sharding_constraint":
            self.g._identity("sharding_constraint", [self.value(op.operands[0])], [self.value(op.results[0])])
            # the result carries the constraint: annotate it (a constraint is a user sharding)
            self.g.annotate_sharded(self.value(op.results[0]), op.attrs["sharding"])
            self.out.constraints.append(op)
            return
        if name == "sdy.data_flow_edge":
            # Shardy's explicit edge: its result stands for the edge's owner (a while/case/
            # barrier result, a region argument), whose sharding the op carries as `sharding`.
            owner = self.value(op.operands[0])
            self.out.value_ids[id(op.results[0])] = owner
            if op.attrs.get("sharding") is not None:
                self.g.annotate_sharded(owner, op.attrs["sharding"])
            self.out.edges.append((op, op.operands[0].sharding))  # the owner keeps what it had
            return
        if name == "sdy.named_computation":  # a call whose body is inline: edges in and out
            body = op.regions[0].block
            for x, a in zip(op.operands, body.args):
                self.edge([x], [a])
            self.block(body)
            for y, r in zip(op.results, body.terminator.operands):
                self.edge([r], [y])
            return
        if _memory_move(op):  # Shardy moves these with the elementwise ops: the value itself, elsewhere in memory
            self.g._identity(str(op.attrs["call_target_name"]), [self.value(op.operands[0])],
                             [self.value(op.results[0])])
            return
        if name == "sdy.propagation_barrier":
            direction = str(op.attrs.get("allowed_direction", "NONE")).lower()
            self.g._identity("propagation_barrier", [self.value(op.operands[0])], [self.value(op.results[0])],
                             allowed="both" if direction == "both" else direction)
            return
        if name == "stablehlo.optimization_barrier":
            for s, t in zip(op.operands, op.results):
                self.edge([s], [t])
            return
        if name == "stablehlo.while":
            cond, body = (r.block for r in op.regions)
            body_ret = body.terminator.operands
            for i, (x, y) in enumerate(zip(op.operands, op.results)):
                self.edge([x, body_ret[i]], [y, body.args[i], cond.args[i]])
            self.block(cond)
            self.block(body)
            return
        if name == "stablehlo.case":
            for r in op.regions:
                self.block(r.block)
            for i, y in enumerate(op.results):
                self.edge([r.block.terminator.operands[i] for r in op.regions], [y])
            return
        if name in ("func.call", "call"):
            callee = self.program.functions.get(op.attrs.get("callee"))
            if callee is None:
                self.out.opaque.append((name, "unknown callee"))
                return
            for x, a in zip(op.operands, callee.args):
                self.edge([x], [a])
            ret = callee.body.terminator
            for y, r in zip(op.results, ret.operands if ret else []):
                self.edge([r], [y])
            return
        if name == "sdy.manual_computation":
            self.manual(op)
            return

    def table_of(self, op):
        """The engine's table id for `op` (None: opaque), shared by ops of one signature."""
        key = None
        if self.tables is not None:
            key = self.signatures.number(op)
            hit = self.tables.get(key) if key >= 0 else None  # -1: attributes that cannot be keyed
            if hit is not None:
                table, why = hit
                if table is None:
                    self.out.opaque.append((op.name, why))
                return table
        try:
            table, why = self.factor_table_of(op), None
        except Exception as e:  # no rule / no factors: the op stays opaque
            table, why = None, str(e)
            self.out.opaque.append((op.name, why))
        if table is not None:
            parts = _table_parts(table, [v.type.shape for v in op.results])
            if parts is None:  # a preset rule's text
                shapes = lambda vs: [list(v.type.shape) for v in vs]
                parts = parse_factor_table(table, shapes(op.operands), shapes(op.results))
            table = self.g.add_table(parts)
        if key is not None and key >= 0:
            self.tables[key] = (table, why)
        return table

    def manual(self, op):
        body = op.regions[0].block
        ins = [_sharding_text(s) for s in op.attrs["in_shardings"]]
        outs = [_sharding_text(s) for s in op.attrs["out_shardings"]]
        manual_axes = list(op.attrs.get("manual_axes", []))
        mesh = op.attrs["in_shardings"][0].mesh_name if op.attrs["in_shardings"] else None

        def build_body(g, args):
            for a, arg in zip(body.args, args):  # the body's arguments are the graph's body args
                self.out.value_ids[id(a)] = arg
                self.bind(arg, a)
            self.block(body)
            return [self.value(v) for v in body.terminator.operands]

        first_op = len(self.g.ops)
        results = self.g.manual_computation([self.value(v) for v in op.operands], ins, outs, manual_axes, build_body,
                                            mesh=mesh)
        for y, r in zip(op.results, results):
            self.g.data_flow_edge([r], [self.value(y)])
        # the boundary values that stand for in_shardings / out_shardings: this op's first
        # operand edges (made before its body) and its last exit edges (made after it)
        made = self.g.ops[first_op:]
        ins_ids = [o["results"][0] for o in made if o["name"] == "manual_computation.operand"][:len(ins)]
        outs_ids = [o["results"][0] for o in made if o["name"] == "manual_computation.exit"][-len(outs):] if outs else []
        self.out.manuals.append((op, ins_ids, outs_ids))

    def finish(self):
        for members in self.groups.values():
            self.g.group(members)
        return self.out


def build_graph(program, factor_table_of=None) -> Propagated:
    from ..ir.lift_meshes import lift_inlined_meshes
    lift_inlined_meshes(program)  # as Shardy's import does: inline meshes become named ones
    b = _Builder(program, factor_table_of)
    for fn in program.functions.values():
        b.function(fn)
    return b.finish()


def _propagated_shardings(graph: Graph, program):
    """Every value's sharding after propagation, read from the engine in one call: (per graph
    value the TensorSharding or None, per value whether it shards any dim). Equal shardings are
    one object."""
    from ..sharding import AxisRef, DimSharding, TensorSharding
    ids, distinct = graph.export_shardings()
    made = []
    for mesh_id, dims, replicated, has_axes in distinct:
        name = graph.mesh_name(mesh_id)
        spec = graph.meshes[name]

        def axis(a, spec=spec):
            idx, pre, size = a
            whole = pre == 1 and size == spec.axis_sizes[idx]
            return AxisRef(spec.axis_names[idx]) if whole else AxisRef(spec.axis_names[idx], pre, size)

        dims = [] if not spec.axis_names else [
            DimSharding(tuple(axis(a) for a in axes), closed, None if priority < 0 else priority)
            for axes, closed, priority in dims]
        made.append((TensorSharding(name, dims, tuple(axis(a) for a in replicated)), has_axes))
    return [None if k < 0 else made[k] for k in ids]


def propagate_program(program, factor_table_of=None, **options) -> Propagated:
    """Propagates `program`'s shardings in place; returns the graph (with provenance)."""
    opened = 0
    with paused_gc():  # the graph's lists and the written shardings are all kept: nothing to collect
        while True:
            out = build_graph(program, factor_table_of)
            try:
                out.graph.propagate(**options)
                break
            except ValueError as e:  # conflicting group members: Shardy warns and opens the group
                opened += 1  # each round opens a group for good: there are no more rounds than groups
                if opened > 1000 or not _open_conflicting_groups(out, program, str(e)):
                    raise
        shardings = _propagated_shardings(out.graph, program)
    for v, new in zip(out.values, shardings):
        # write what propagation set: annotated values, and values that gained axes
        if v is not None and new is not None:
            old = v.sharding
            if old is None:
                if new[1]:
                    v.sharding = new[0]
            else:
                v.sharding = _keep_unreduced(new[0], old)
    for op in out.constraints:  # Shardy prints a constraint's grown sharding on the op itself
        if op.results[0].sharding is not None:
            op.attrs["sharding"] = op.results[0].sharding
            op.results[0].sharding = None
    _write_back_edges(out, shardings)
    # these ops' attributes now hold the grown shardings: a partition numbers them again
    out.signatures.forget([*out.constraints, *(op for op, _ in out.edges), *(op for op, _, _ in out.manuals)])
    for fn in program.functions.values():
        for i in range(len(fn.result_types)):
            rid = out.value_ids.get(("result", fn.name, i))
            new = shardings[rid] if rid is not None else None
            if new is not None and ((i < len(fn.result_shardings) and fn.result_shardings[i] is not None) or new[1]):
                while len(fn.result_shardings) <= i:
                    fn.result_shardings.append(None)
                fn.result_shardings[i] = new[0]
    return out


def _memory_move(op) -> bool:
    """A MoveToHost/MoveToDevice custom call without a rule of its own: a pass-through edge."""
    return op.name == "stablehlo.custom_call" and op.attrs.get("call_target_name") in MEMORY_MOVES \
        and "sdy.sharding_rule" not in op.attrs and len(op.operands) == len(op.results) == 1


def _open_conflicting_groups(out, program, message: str) -> bool:
    import re

    from ..ir.group_conflicts import group_ids_of, open_conflicting_group
    m = re.match(r"sharding group \d+: value (\d+) dim \d+ is (.*), which conflicts", message)
    value = out.values[int(m.group(1))] if m and int(m.group(1)) < len(out.values) else None
    ids = group_ids_of(program, value) if value is not None else []
    for gid in ids:
        open_conflicting_group(program, gid, f"a member is {m.group(2)}")
    return bool(ids)


def _keep_unreduced(new, old):
    """The engine holds unreduced axes as reserved (replicated) ones: give them back their field."""
    if old is None or not old.unreduced:
        return new
    from ..sharding import TensorSharding
    unreduced = set(old.unreduced)
    return TensorSharding(new.mesh, new.dims, [a for a in new.replicated if a not in unreduced], old.unreduced,
                          old.reduce_types)


def _edge_users(program) -> set:
    """id() of every value an explicit sdy.data_flow_edge reads."""
    users = set()

    def walk(block):
        for op in block.ops:
            if op.name == "sdy.data_flow_edge":
                users.add(id(op.operands[0]))
            for region in op.regions:
                for b in region.blocks:
                    walk(b)

    for fn in program.functions.values():
        walk(fn.body)
    return users


def _write_back_edges(out, shardings) -> None:
    """Like Shardy: an explicit data-flow edge carries its owner's sharding (the owner keeps the
    one it started with, if any); a manual_computation's shardings are its in/out_shardings (its
    results carry none), which grow only where no explicit edge stands for them (then the edge
    carries the growth)."""
    def grown(vid):  # (sharding, whether it shards a dim) as propagation left it, or None
        return shardings[vid] if vid is not None and vid < len(shardings) else None

    for op, owner_had in out.edges:
        owner = op.operands[0]
        sharding = owner.sharding
        if sharding is None and (new := grown(out.value_ids.get(id(owner)))) is not None and new[1]:
            sharding = new[0]
        if sharding is not None:
            op.attrs["sharding"] = sharding
        if not owner.is_block_arg:
            owner.sharding = owner_had
    explicit = _edge_users(out.program) if out.manuals else set()  # a walk of every op: only when read
    for op, ins_ids, outs_ids in out.manuals:
        body = op.regions[0].block
        for i, vid in enumerate(ins_ids):
            if id(body.args[i]) not in explicit and (new := grown(vid)) is not None:
                op.attrs["in_shardings"][i] = new[0]
        for i, vid in enumerate(outs_ids):
            if id(op.results[i]) not in explicit and (new := grown(vid)) is not None:
                op.attrs["out_shardings"][i] = new[0]
        for r in op.results:
            r.sharding = None
