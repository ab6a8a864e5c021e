"""spmdkit.propagation.Graph: build a program's dataflow graph (values, ops with factor tables,
and the compiler-API edges), propagate shardings with the C++ engine, read them back with
their provenance.

    g = Graph(); g.mesh("mesh", a=2, b=2)
    x = g.value([8, 16], '[{"a"}, {?}]'); w = g.value([16, 32])
    y = g.op("dot", "ik,kj->ij", [x, w], out=[[8, 32]], reduction="k")
    g.propagate(); g.sharding(y)      # '[{"a", ?}, {?}]'
"""
from __future__ import annotations

from .. import _core
from .factor_text import parse_factor_table
from .sharding_text import MeshSpec, format_dims, parse_sharding

_DIRECTIONS = {"none": 0, "forward": 1, "backward": 2, "both": 3}
_MAX_AXES = 16            # per dim, as the engine stores them (spmd::prop::kMaxAxes)
_MAX_SIZE = 2 ** 31 - 1


def _checked(parsed):
    """An annotation the engine will take: the checks it makes, made now, where the value is
    added (the engine sees it later, in a batch)."""
    _, dims, replicated = parsed
    for axes in [d[0] for d in dims] + [replicated]:
        if len(axes) > _MAX_AXES:
            raise ValueError(f"a dim may hold at most {_MAX_AXES} axes")
        for axis, pre, size in axes:
            if not (1 <= pre <= _MAX_SIZE and 1 <= size <= _MAX_SIZE):
                raise ValueError(f"axis {axis}: sub-axis ({pre}){size} is out of range")
    return parsed


class Graph:
    def __init__(self):
        self._engine = _core.PropagationGraph()
        self.meshes: dict[str, MeshSpec] = {}
        self._mesh_ids: dict[str, int] = {}
        self._mesh_names: list[str] = []
        self._tables: dict = {}
        self._table_info: dict[int, tuple] = {}  # table id -> (parts, pass-through-like)
        self._sharding_cache: dict = {}          # (TensorSharding, rank) -> engine tuples
        self._default_id = None                  # the default mesh's id (-1: none), once known
        self.stats = None
        # Per value and per op, one list per field. The engine gets what is new in one call per
        # field list (_flush, before anything reads it), not one call per value or op. Shapes and
        # an op's value ids are tuples: a program's own shape tuples, and tuples of ints, which
        # the cycle collector stops tracking at its first look (a 100k-op graph's ~270k lists
        # were one more walk for every full collection).
        self._value_names: list[str] = []
        self._shapes: list[tuple[int, ...]] = []
        self._value_meshes: list[int] = []
        self._values_sent = 0
        self._new_annotations: list[tuple] = []  # (value, mesh id, dims, replicated)
        self._op_names: list[str] = []
        self._op_tables: list[int] = []
        self._op_operands: list[tuple[int, ...]] = []
        self._op_results: list[tuple[int, ...]] = []
        self._op_flags: list[int] = []            # bit 0 pass-through, bits 1-2 allowed direction
        self._op_manual: dict[int, tuple] = {}    # op -> (manual axes mask, inner tensors mask)
        self._ops_sent = 0
        self._op_dicts: list[dict] = []

    @property
    def ops(self) -> list[dict]:
        """Per op: name, table id, operands, results, factors (operands, results, sizes, kinds)
        of its table (for executors); made when first read."""
        for o in range(len(self._op_dicts), len(self._op_names)):
            self._op_dicts.append(dict(name=self._op_names[o], table=self._op_tables[o], operands=self._op_operands[o],
                                       results=self._op_results[o], factors=self._table_info[self._op_tables[o]][0]))
        return self._op_dicts

    @property
    def _g(self):
        """The C++ engine, with everything added so far."""
        self._flush()
        return self._engine

    def _flush(self) -> None:
        start, end = self._values_sent, len(self._shapes)
        if end > start:
            self._engine.add_values(self._value_names[start:], self._shapes[start:], self._value_meshes[start:])
            self._values_sent = end
        if self._new_annotations:
            for v, mesh_id, dims, replicated in self._new_annotations:
                self._engine.set_sharding(v, mesh_id, dims, replicated)
            self._new_annotations = []
        start, end = self._ops_sent, len(self._op_names)
        if end > start:
            for o in sorted(o for o in self._op_manual if start <= o < end) + [end]:
                if o > start:
                    self._engine.add_ops(self._op_names[start:o], self._op_tables[start:o], self._op_operands[start:o],
                                         self._op_results[start:o], self._op_flags[start:o])
                if o < end:  # a manual_computation boundary, with its masks
                    flags = self._op_flags[o]
                    self._engine.add_op(self._op_names[o], self._op_tables[o], self._op_operands[o], self._op_results[o],
                                        bool(flags & 1), flags >> 1, *self._op_manual[o])
                start = o + 1
            self._ops_sent = end

    # ---- meshes and values ----------------------------------------------------------------
    def mesh(self, name: str, axes=None, *, maximal: bool = False, **sizes) -> str:
        """Adds a mesh with named axes: mesh("m", a=2, b=4) or mesh("m", [("a", 2), ("b", 4)]).
        A mesh without axes is Shardy's empty mesh (fits any mesh) unless `maximal` (one device:
        a mesh of its own). A second name for the same axes is the same mesh (Shardy dedups
        meshes on import)."""
        pairs = list(axes.items() if isinstance(axes, dict) else (axes or [])) + list(sizes.items())
        if name in self.meshes:
            raise ValueError(f"mesh {name!r} is defined twice")
        names = [str(n) for n, _ in pairs]
        if len(set(names)) != len(names):
            raise ValueError(f"mesh {name!r}: axis names repeat: {names}")
        spec = MeshSpec(name, tuple(names), tuple(int(s) for _, s in pairs), maximal)
        same = next((m for m in self.meshes.values() if names and (m.axis_names, m.axis_sizes, m.maximal)
                     == (spec.axis_names, spec.axis_sizes, False)), None)
        if same is not None:
            self._mesh_ids[name] = self._mesh_ids[same.name]
        else:
            self._mesh_ids[name] = self._engine.add_mesh(name, list(spec.axis_names), list(spec.axis_sizes))
            self._mesh_names.append(name)
        self.meshes[name] = spec
        self._default_id = None
        return name

    def _default_mesh(self, mesh):
        if mesh is not None:
            return mesh
        return self._mesh_names[0] if len(self._mesh_names) == 1 else None  # one distinct mesh: the default

    def _parse(self, text, mesh, rank, what):
        mesh_name, dims, replicated = parse_sharding(text, self.meshes, self._default_mesh(mesh))
        if not dims and rank and self.meshes[mesh_name].maximal:  # Shardy writes a maximal sharding as []
            dims = [([], True, -1, True)] * rank
        if len(dims) != rank:
            raise ValueError(f"{what}: sharding {text!r} has {len(dims)} dims, the value has rank {rank}")
        if not self.meshes[mesh_name].axis_names and not self.meshes[mesh_name].maximal:  # the empty mesh fits any
            return -1, dims, replicated
        return self._mesh_ids[mesh_name], dims, replicated

    def value(self, shape, sharding: str | None = None, name: str = "", mesh: str | None = None) -> int:
        """A value of `shape`, annotated by the user if `sharding` is given (Shardy text)."""
        parsed = None
        if sharding is not None:
            parsed = self._parse(sharding, mesh, len(shape), f"value {name or f'v{len(self._shapes)}'!r}")
        return self._add_value(shape, parsed, name, mesh)

    def value_sharded(self, shape, sharding, name: str = "") -> int:
        """A value of `shape` annotated with a `spmdkit.sharding.TensorSharding` (None: none),
        read field by field (no text)."""
        parsed = None
        if sharding is not None:
            parsed = self._structured(sharding, len(shape), f"value {name or f'v{len(self._shapes)}'!r}")
        return self._add_value(shape, parsed, name, None)

    def plain_value(self, shape, name: str = "") -> int:
        """value(shape) without an annotation, for a shape already known to be valid (a
        program's TensorType): the builder's fast path."""
        v = len(self._shapes)
        shape = tuple(shape)  # a TensorType's own tuple: no copy
        default = self._default_id
        if default is None:
            default = self._default_mesh_id()
        self._value_names.append(name)  # "" (unnamed): v<id>, see value_name
        self._shapes.append(shape)
        self._value_meshes.append(default)
        return v

    def _default_mesh_id(self) -> int:
        """The engine id of the mesh an unannotated value lives on (-1: none), worked out once."""
        mesh = self._default_mesh(None)
        self._default_id = self._mesh_ids[mesh] if mesh is not None and (
            self.meshes[mesh].axis_names or self.meshes[mesh].maximal) else -1
        return self._default_id

    def _build_lists(self) -> tuple:
        """The lists _core.build_rule_ops appends to (as rule_op does), in its order."""
        return (self._value_names, self._shapes, self._value_meshes, self._op_names, self._op_tables,
                self._op_operands, self._op_results, self._op_flags, self._table_info)

    def rule_op(self, name, table, operands, shapes, pass_through) -> list[int]:
        """A factor-table op whose results are new values of `shapes` (program TensorType shapes,
        unannotated, unnamed): plain_value per result, then _add_op; the builder's hot path."""
        default = self._default_id
        if default is None:
            default = self._default_mesh_id()
        v = len(self._shapes)
        results = tuple(range(v, v + len(shapes)))
        for shape in shapes:
            self._value_names.append("")  # unnamed: v<id> (value_name; the engine names it too)
            self._shapes.append(tuple(shape))
            self._value_meshes.append(default)
            v += 1
        if pass_through is None:
            pass_through = self._table_info[table][1]
        self._op_names.append(name)
        self._op_tables.append(table)
        self._op_operands.append(tuple(operands))
        self._op_results.append(results)
        self._op_flags.append(bool(pass_through) | 3 << 1)
        return results

    def _add_value(self, shape, parsed, name, mesh) -> int:
        shape = tuple([int(d) for d in shape])
        if any(d < 0 for d in shape):
            raise ValueError(f"value {name!r}: negative dim in shape {shape}")
        v = len(self._shapes)
        mesh_id = -1
        if parsed is not None:
            mesh_id = parsed[0]
            self._new_annotations.append((v, *_checked(parsed)))
        else:
            default = self._default_mesh(mesh)
            if default is not None and (self.meshes[default].axis_names or self.meshes[default].maximal):
                mesh_id = self._mesh_ids[default]
        self._value_names.append(name)
        self._shapes.append(shape)
        self._value_meshes.append(mesh_id)
        return v

    def _structured(self, sharding, rank: int, what: str):
        """(mesh id, dims, replicated) of a TensorSharding on a named mesh; other forms (an
        inline mesh, unreduced axes) go through their text, which says what is wrong with them."""
        key = (sharding, rank)
        hit = self._sharding_cache.get(key)
        if hit is not None:
            return hit
        mesh_name = sharding.mesh
        if not isinstance(mesh_name, str) or sharding.unreduced:
            text = sharding.to_text()
            return self._parse(text[len("#sdy.sharding"):], None, rank, what)
        spec = self.meshes.get(mesh_name)
        if spec is None:
            raise ValueError(f"sharding {sharding.to_text(prefix=False)!r}: mesh {mesh_name!r} is not defined "
                             f"(meshes: {sorted(self.meshes)})")
        text = sharding.to_text(prefix=False)

        def axis(a):
            idx = spec.axis_index(a.name, text)
            return (idx, 1, spec.axis_sizes[idx]) if a.pre_size is None else (idx, a.pre_size, a.size)

        dims = [([axis(a) for a in d.axes], d.is_closed, -1 if d.priority is None else d.priority, True)
                for d in sharding.dims]
        replicated = [axis(a) for a in sharding.replicated]
        if not dims and rank and spec.maximal:  # Shardy writes a maximal sharding as []
            dims = [([], True, -1, True)] * rank
        if len(dims) != rank:
            raise ValueError(f"{what}: sharding {text!r} has {len(dims)} dims, the value has rank {rank}")
        mesh_id = -1 if not spec.axis_names and not spec.maximal else self._mesh_ids[mesh_name]
        out = (mesh_id, dims, replicated)
        self._sharding_cache[key] = out
        return out

    def annotate(self, v: int, sharding: str, mesh: str | None = None) -> None:
        parsed = self._parse(sharding, mesh, len(self._shapes[v]), f"value {self.value_name(v)!r}")
        self._new_annotations.append((v, *_checked(parsed)))

    def annotate_sharded(self, v: int, sharding) -> None:
        """annotate() with a TensorSharding."""
        parsed = self._structured(sharding, len(self._shapes[v]), f"value {self.value_name(v)!r}")
        self._new_annotations.append((v, *_checked(parsed)))

    def shape(self, v: int):
        return list(self._shapes[v])

    # ---- ops ------------------------------------------------------------------------------
    def op(self, name, rule, operands, out, *, sizes=None, reduction="", need_replication="", permutation="",
           blocked="", pass_through=None, allowed="both", _manual=(0, 0)):
        """An op whose factor table is `rule` (shorthand or Shardy's printed form, see
        factor_text). `out` lists result shapes (new values) or existing value ids. Returns the
        result id, or a list of them when there are several."""
        operands = [int(v) for v in operands]
        results = [r if isinstance(r, int) else self.value(r, name=f"{name}.{i}") for i, r in enumerate(out)]
        kinds = {f: "reduction" for f in reduction}
        kinds.update({f: "need_replication" for f in need_replication})
        kinds.update({f: "permutation" for f in permutation})
        text = rule if isinstance(rule, str) else str(rule)
        key = (text, tuple(tuple(self._shapes[v]) for v in operands), tuple(tuple(self._shapes[v]) for v in results),
               tuple(sorted((sizes or {}).items())), tuple(sorted(kinds.items())), blocked)
        table = self._tables.get(key)
        if table is None:
            parsed = parse_factor_table(text, [self._shapes[v] for v in operands], [self._shapes[v] for v in results],
                                        sizes, kinds, tuple(blocked))
            table = self._add_table(parsed)
            self._tables[key] = table
        if allowed not in _DIRECTIONS:
            raise ValueError(f"op {name!r}: allowed direction {allowed!r} is not one of {sorted(_DIRECTIONS)}")
        self._add_op(name, table, operands, results, pass_through, _DIRECTIONS[allowed], _manual)
        return results[0] if len(results) == 1 else results

    def op_table(self, name, parts, operands, results, pass_through=None, allowed="both"):
        """An op whose factor table is given as (operands, results, sizes, kinds, blocked), the
        fields of a rule's FactorTable."""
        return self.op_with_table(name, self._add_table(parts), operands, results, pass_through, allowed)

    def add_table(self, parts) -> int:
        """Registers a factor table (operands, results, sizes, kinds, blocked) for op_with_table:
        ops of the same shape and attributes share one."""
        return self._add_table(parts)

    def op_with_table(self, name, table: int, operands, results, pass_through=None, allowed="both"):
        """An op on a table from add_table."""
        if allowed not in _DIRECTIONS:
            raise ValueError(f"op {name!r}: allowed direction {allowed!r} is not one of {sorted(_DIRECTIONS)}")
        operands, results = list(operands), list(results)
        self._add_op(name, table, operands, results, pass_through, _DIRECTIONS[allowed], (0, 0))
        return results[0] if len(results) == 1 else results

    def _add_table(self, parts) -> int:
        ins, outs, sizes, kinds, blocked = parts
        sizes, kinds = list(sizes), list(kinds)
        table = self._engine.add_table(ins, outs, sizes, kinds, [bool(b) for b in blocked])
        # elementwise-like: every tensor carries the same pass-through factors
        tensors = ins + outs
        elementwise = all(k == "pass_through" for k in kinds) and all(t == tensors[0] for t in tensors)
        self._table_info[table] = ((ins, outs, sizes, kinds), elementwise)
        return table

    def _add_op(self, name, table, operands, results, pass_through, allowed: int, manual) -> None:
        if pass_through is None:
            pass_through = self._table_info[table][1]
        if manual != (0, 0):  # a manual_computation boundary
            self._op_manual[len(self._op_names)] = manual
        self._op_names.append(name)
        self._op_tables.append(table)
        self._op_operands.append(tuple(operands))
        self._op_results.append(tuple(results))
        self._op_flags.append(bool(pass_through) | allowed << 1)

    def _identity(self, name, sources, targets, **kw):
        rank = len(self._shapes[sources[0] if sources else targets[0]])
        dims = "".join(chr(ord("a") + d) for d in range(rank)) if rank <= 26 else None
        if dims is None:
            raise ValueError(f"{name}: rank {rank} is too large")
        for v in list(sources) + list(targets):
            if self._shapes[v] != self._shapes[(sources or targets)[0]]:
                raise ValueError(f"{name}: value {self.value_name(v)!r} has shape {self._shapes[v]}, "
                                 f"the edge joins shape {self._shapes[(sources or targets)[0]]}")
        rule = ",".join([dims] * len(sources)) + "->" + ",".join([dims] * len(targets))
        return self.op(name, rule, sources, list(targets), pass_through=kw.pop("pass_through", True), **kw)

    def constraint(self, v: int, sharding: str, mesh: str | None = None) -> int:
        """sdy.sharding_constraint: a new value equal to `v` that must have `sharding`."""
        out = self.value(self._shapes[v], sharding, name=f"constraint({self.value_name(v)})", mesh=mesh)
        self._identity("sharding_constraint", [v], [out])
        return out

    def barrier(self, v: int, allowed: str = "none") -> int:
        """sdy.propagation_barrier: a new value equal to `v`; shardings cross only in `allowed`."""
        out = self.value(self._shapes[v], name=f"barrier({self.value_name(v)})")
        self._identity("propagation_barrier", [v], [out], allowed=allowed)
        return out

    def data_flow_edge(self, sources, targets) -> None:
        """One edge of while/case/optimization_barrier: all of sources and targets share a sharding."""
        self._identity("data_flow_edge", list(sources), list(targets))

    def group(self, values) -> None:
        """sdy.sharding_group: every member ends with the same sharding."""
        self._g.add_group([int(v) for v in values])

    def func_result(self, v: int, sharding: str | None = None, mesh: str | None = None) -> int:
        """A function result: its own sharding (the func's result attribute), joined to the
        returned value by an identity edge."""
        name = f"result({self.value_name(v)})"
        out = self.value(self._shapes[v], sharding, name=name, mesh=mesh) if sharding is None or \
            isinstance(sharding, str) else self.value_sharded(self._shapes[v], sharding, name=name)
        self._identity("func_result", [v], [out])
        return out

    def manual_computation(self, operands, in_shardings, out_shardings, manual_axes, body, mesh: str | None = None):
        """sdy.manual_computation: `body(graph, args) -> results` builds the body on values of
        local shape (each dim divided by the manual axes its in/out sharding leads with). Free
        axes cross the boundary both ways; manual axes never enter the body."""
        mesh = self._default_mesh(mesh)
        spec = self.meshes[mesh]
        manual = [spec.axis_index(a, f"manual_computation manual_axes {list(manual_axes)}") for a in manual_axes]
        mask = sum(1 << a for a in set(manual))

        def split(v, sharding, what):
            """The boundary table between global value `v` and the local body value."""
            mesh_id, dims, _ = self._parse(sharding, mesh, len(self._shapes[v]), what)
            outer, inner, sizes, blocked, local = [], [], {}, "", []
            for d, (axes, _, _, _) in enumerate(dims):
                lead = 1
                for k, (axis, _, size) in enumerate(axes):
                    if axis in manual:
                        if any(a not in manual for a, _, _ in axes[:k]):
                            raise ValueError(f"{what}: manual axis {spec.axis_names[axis]!r} follows a free axis in dim {d}")
                        lead *= size
                extent = self._shapes[v][d]
                if extent % lead:
                    raise ValueError(f"{what}: dim {d} of size {extent} does not divide by its manual axes ({lead})")
                f, m = chr(ord("a") + d), chr(ord("A") + d)
                sizes[f] = extent // lead
                if lead > 1:
                    sizes[m] = lead
                    blocked += m
                outer.append(f"({m}{f})" if lead > 1 else f)
                inner.append(f)
                local.append(extent // lead)
            return "".join(outer), "".join(inner), sizes, blocked, local

        args = []
        for n, (v, s) in enumerate(zip(operands, in_shardings)):
            what = f"manual_computation in_shardings[{n}]"
            edge = self.value(self._shapes[v], s, name=f"in_sharding({self.value_name(v)})", mesh=mesh)
            self._identity("manual_computation.operand", [v], [edge])
            outer, inner, sizes, blocked, local = split(edge, s, what)
            arg = self.value(local, name=f"body_arg({self.value_name(v)})", mesh=mesh)
            self.op("manual_computation.enter", f"{outer}->{inner}", [edge], [arg], sizes=sizes, blocked=blocked,
                    pass_through=True, _manual=(mask, 0b10))
            args.append(arg)
        rets = body(self, args)
        rets = [rets] if isinstance(rets, int) else list(rets)
        if len(rets) != len(out_shardings):
            raise ValueError(f"manual_computation: the body returns {len(rets)} values, out_shardings has {len(out_shardings)}")
        results = []
        for n, (r, s) in enumerate(zip(rets, out_shardings)):
            what = f"manual_computation out_shardings[{n}]"
            mesh_id, dims, _ = self._parse(s, mesh, len(self._shapes[r]), what)
            lead = [1] * len(dims)
            for d, (axes, _, _, _) in enumerate(dims):
                for axis, _, size in axes:
                    if axis in manual:
                        lead[d] *= size
            edge = self.value([e * m for e, m in zip(self._shapes[r], lead)], s, name=f"out_sharding({self.value_name(r)})", mesh=mesh)
            outer, inner, sizes, blocked, _ = split(edge, s, what)
            self.op("manual_computation.exit", f"{inner}->{outer}", [r], [edge], sizes=sizes, blocked=blocked,
                    pass_through=True, _manual=(mask, 0b01))
            res = self.value(self._shapes[edge], name=f"manual_computation.result({self.value_name(r)})", mesh=mesh)
            self._identity("manual_computation.result", [edge], [res])
            results.append(res)
        return results

    # ---- running and reading ----------------------------------------------------------------
    def propagate(self, aggressive: bool = True, op_priority: bool = True, user_priority: bool = True) -> dict:
        self.stats = self._g.propagate(aggressive, op_priority, user_priority)
        return self.stats

    def _mesh_of(self, mesh_id):
        return self.meshes[self._mesh_names[mesh_id]] if mesh_id >= 0 else None

    def sharding(self, v: int, with_priority: bool = False) -> str:
        """Shardy text without the mesh: '[{"a", ?}, {}]'."""
        mesh_id, dims, _ = self._g.sharding(v)
        return format_dims(self._mesh_of(mesh_id), dims, with_priority)

    def export_shardings(self):
        """Every value's sharding in one call: (per value an index into `distinct`, -1 for a
        value on no mesh; `distinct`: (mesh id, dims as (axes, closed, priority), replicated,
        has_axes), axes as (axis index, pre, size))."""
        return self._g.export_shardings()

    def mesh_name(self, mesh_id: int) -> str:
        return self._mesh_names[mesh_id]

    def sharding_full(self, v: int) -> str:
        return self._g.sharding_string(v)

    def mesh_of(self, v: int) -> str | None:
        mesh_id = self._g.sharding(v)[0]
        return self._mesh_names[mesh_id] if mesh_id >= 0 else None

    def dim_axes(self, v: int):
        """Per dim, the axes as (name, pre, size) triples, major to minor."""
        mesh_id, dims, _ = self._g.sharding(v)
        mesh = self._mesh_of(mesh_id)
        return [[(mesh.axis_names[a], pre, size) for a, pre, size in d[0]] for d in dims]

    def provenance(self, v: int) -> dict:
        """Why `v` has its sharding: the op and level that set it last, and per dim the value
        whose user annotation the axes came from."""
        p = dict(self._g.provenance(v))
        p["op_name"] = self._op_names[p["op"]] if p["op"] >= 0 else None
        _, dims, _ = self._g.sharding(v)
        p["origins"] = [self.value_name(d[4]) if d[4] >= 0 else None for d in dims]
        return p

    def explain(self, v: int) -> str:
        p = self.provenance(v)
        name = self.value_name(v)
        lines = [f"{name}: {self.sharding_full(v)}"]
        if p["level"] == "user":
            given = p["user_priority"]
            lines.append("  annotated by the user" + (f" (priority p{given})" if given >= 0 else ""))
        elif p["level"] == "none":
            lines.append("  no op changed it")
        else:
            where = f"op #{p['op']} '{p['op_name']}' ({p['level']} propagation"
            if p["user_priority"] >= 0:
                where += f", user priority p{p['user_priority']}"
            where += f", op-priority step {p['op_priority_step']})"
            if p["group"] >= 0:
                where = f"sharding group {p['group']}, moved by " + where
            lines.append("  last set by " + where)
        for d, origin in enumerate(p["origins"]):
            if origin is not None:
                lines.append(f"  dim {d}: axes from the annotation of {origin!r}")
        return "\n".join(lines)

    def value_name(self, v: int) -> str:
        """The value's name: its own, or v<id> for an unnamed one (the engine's name for it)."""
        return self._value_names[v] or f"v{v}"

    def rename_value(self, v: int, name: str) -> None:
        """Call value `v` `name` in explanations (a tool's labels, e.g. the file's SSA names)."""
        self._value_names[v] = name

    @property
    def num_values(self) -> int:
        return len(self._shapes)
