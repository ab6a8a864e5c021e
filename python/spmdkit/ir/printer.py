"""Program -> MLIR text, printed by MLIR itself.

We write the program in MLIR's generic op form (simple and exact for every op), let MLIR parse
and verify it, and print the module with MLIR's printer: sdy/stablehlo/func ops come out in their
pretty forms, `"paddle.<name>"` and `"jax.<primitive>"` in the generic form. So what we print is
by construction text MLIR reads, and `to_mlir_module` is the same parse.

Shardy's text has no reduce type for unreduced axes (all are pending sums). A value sharding with
other types (`unreduced_max={"mp"}`: a max over a vocab split, left for later) is written to MLIR
with those axes as `unreduced`, and its exact spmdkit text beside it in the discardable string
attribute `spmdkit.exact_sharding` (per result on ops), which the reader (mlir_import) puts back.

Before MLIR sees the text we check every sharding (known mesh, known axes, rank of its value),
so a program built in Python gets errors that name its op and value, not a line of text the user
never saw; whatever MLIR still rejects is mapped back to the op on that line.
"""
from __future__ import annotations

from typing import Optional

from ..sharding import Mesh, TensorSharding
from .attributes import attr_name, default_pin, quote_string, symbol_ref, to_text
from .core import Block, Function, Op, Program, Value
from .errors import IRError, ShardingRankError, UnknownAxisError, UnknownMeshError
from .mlir_context import parse_module, print_module
from .mlir_import import DIRECTIONS, EXACT_SHARDING, PADDLE_PREFIX


def _for_mlir(s):
    """The sharding MLIR reads: unreduced axes of any reduce type written as Shardy's (sum)."""
    return s.replace(reduce_types=()) if isinstance(s, TensorSharding) and s.reduce_types else s


def _with_exact(extra: dict, s) -> None:
    """`extra`'s sdy.sharding (and its exact text when MLIR's form loses reduce types)."""
    extra["sdy.sharding"] = _for_mlir(s)
    if s.reduce_types:
        extra[EXACT_SHARDING] = s.to_text()


def mlir_op_name(name: str) -> str:
    """The MLIR name of an IR op: registry names without a dialect are Paddle's."""
    return name if "." in name else PADDLE_PREFIX + name


def print_program(program: Program, generic: bool = False, locations: bool = False) -> str:
    """The program as MLIR text (pretty forms; `generic=True` for MLIR's generic form).

    locations=True also prints each op's `location` (as an MLIR name location, `loc("...")`),
    which parsing reads back into `Op.location`.
    """
    return print_module(to_mlir_module(program, locations=locations), generic=generic, locations=locations)


def to_mlir_module(program: Program, locations: bool = False):
    """A jaxlib MLIR module of the program, verified by MLIR (ops carry their locations if asked)."""
    writer = _Writer(program, locations)
    try:
        text = writer.module()
    except RecursionError:
        raise IRError("regions are nested too deeply to print") from None
    try:
        return parse_module(text)
    except IRError as e:
        raise writer.explain(e) from None


def generic_text(program: Program) -> str:
    """The text handed to MLIR (generic op form): useful to debug the printer."""
    return _Writer(program).module()


class _Writer:
    def __init__(self, program: Program, locations: bool = False):
        self.program = program
        self.locations = locations
        self.lines: list[str] = []
        self.line_ops: list[Optional[str]] = []  # per line: what it writes, for error messages
        self.names: dict[int, str] = {}
        self.counter = 0

    # -- output helpers ------------------------------------------------------------------
    def emit(self, text: str, what: Optional[str] = None):
        self.lines.append(text)
        self.line_ops.append(what)

    def explain(self, e: IRError) -> IRError:
        """Re-raise MLIR's complaint about our generated text as one about the op it names."""
        what = None
        if e.line is not None and 0 < e.line <= len(self.line_ops):
            what = self.line_ops[e.line - 1]
        cls = type(e)
        return cls(f"{e.reason} (MLIR rejected the printed program)", op=what or e.op)

    def name_of(self, v: Value, where: str) -> str:
        try:
            return self.names[id(v)]
        except KeyError:
            raise IRError(f"{where} uses a value that is not defined before it (or in an enclosing block)",
                          value=repr(v)) from None

    def define(self, v: Value, prefix: str) -> str:
        name = f"%{prefix}{self.counter}"
        self.counter += 1
        self.names[id(v)] = name
        return name

    # -- checks --------------------------------------------------------------------------
    def check_sharding(self, s, v_type, op: Optional[str], value: str):
        if s is None:
            return
        if not isinstance(s, TensorSharding):
            raise IRError(f"a sharding must be a TensorSharding, got {type(s).__name__}", op=op, value=value)
        if isinstance(s.mesh, Mesh):
            mesh = s.mesh
        elif s.mesh in self.program.meshes:
            mesh = self.program.meshes[s.mesh]
        else:
            known = ", ".join("@" + m for m in self.program.meshes) or "none"
            raise UnknownMeshError(f"sharding {s} names mesh @{s.mesh}; the program declares {known}",
                                   op=op, value=value)
        maximal = not mesh.axes and s.rank == 0  # a device-pinned value: Shardy allows any rank
        if v_type is not None and s.rank != v_type.rank and not maximal:
            raise ShardingRankError(f"sharding {s} has {s.rank} dims, the value {v_type} has rank {v_type.rank}",
                                    op=op, value=value)
        for axis in s.axes_used():
            if not mesh.has_axis(axis.name):
                raise UnknownAxisError(f"sharding {s} uses axis {axis}, which mesh {mesh} does not have",
                                       op=op, value=value)

    def check_attr_shardings(self, op: Op):
        for key, v in op.attrs.items():
            items = v if isinstance(v, (list, tuple)) else [v]
            for s in items:
                if isinstance(s, TensorSharding):
                    self.check_sharding(s, None, op.name, f"attribute {key}")
                    if s.reduce_types:  # only value shardings carry their exact text beside them
                        raise IRError(f"sharding {s} has unreduced axes of reduce types {dict(s.reduce_types)}, "
                                      "which Shardy's text cannot hold in an attribute", op=op.name,
                                      value=f"attribute {key}")

    # -- module --------------------------------------------------------------------------
    def module(self) -> str:
        p = self.program
        head = "module"
        if p.name:
            head += " " + symbol_ref(p.name)
        if p.attrs:
            head += " attributes " + self.attr_dict(p.attrs, {}, "module")
        self.emit(head + " {", "module")
        for name, mesh in p.meshes.items():
            if not isinstance(mesh, Mesh):
                raise IRError(f"mesh @{name} must be a spmdkit.sharding.Mesh, got {type(mesh).__name__}")
            extra = p.mesh_attrs.get(name)
            tail = " " + self.attr_dict(extra, {}, f"sdy.mesh @{name}") if extra else ""
            self.emit(f"  sdy.mesh {symbol_ref(name)} = {mesh}{tail}", f"sdy.mesh @{name}")
        for fn in p.functions.values():
            self.function(fn)
        self.emit("}")
        return "\n".join(self.lines) + "\n"

    def function(self, fn: Function):
        where = f"func.func @{fn.name}"
        self.counter = 0
        args = []
        for i, a in enumerate(fn.body.args):
            self.check_sharding(a.sharding, a.type, where, f"argument {i}")
            extra = dict(fn.arg_attrs[i]) if i < len(fn.arg_attrs) else {}
            if a.sharding is not None:
                _with_exact(extra, a.sharding)
            text = f"{self.define(a, 'arg')}: {a.type}"
            if extra:
                text += " " + self.attr_dict(extra, {}, f"{where} argument {i}")
            args.append(text)
        results = []
        for i, t in enumerate(fn.result_types):
            s = fn.result_shardings[i] if i < len(fn.result_shardings) else None
            self.check_sharding(s, t, where, f"result {i}")
            extra = dict(fn.result_attrs[i]) if i < len(fn.result_attrs) else {}
            if s is not None:
                _with_exact(extra, s)
            results.append(str(t) + (" " + self.attr_dict(extra, {}, f"{where} result {i}") if extra else ""))
        vis = f"{fn.visibility} " if fn.visibility else ""
        head = f"  func.func {vis}{symbol_ref(fn.name)}(" + ", ".join(args) + ") -> (" + ", ".join(results) + ")"
        if fn.attrs:
            head += " attributes " + self.attr_dict(fn.attrs, {}, where)
        self.emit(head + " {", where)
        # MLIR would take an unregistered last op (paddle.*) for a terminator: say it here.
        if not fn.body.ops or fn.body.ops[-1].name not in ("func.return", "return"):
            last = fn.body.ops[-1].name if fn.body.ops else "nothing"
            raise IRError(f"function @{fn.name} must end with func.return, it ends with {last}", op=where)
        for op in fn.body.ops:
            self.op(op, "    ", "func.return")
        self.emit("  }", where)

    # -- ops -----------------------------------------------------------------------------
    def op(self, op: Op, indent: str, return_name: str):
        name = return_name if op.name == "return" else mlir_op_name(op.name)
        operands = ", ".join(self.name_of(v, f"op '{op.name}' operand {i}") for i, v in enumerate(op.operands))
        attrs = dict(op.attrs)
        types = dict(op.attr_types)
        if name == "sdy.propagation_barrier" and isinstance(attrs.get("allowed_direction"), str):
            direction = attrs["allowed_direction"]
            if direction not in DIRECTIONS:
                raise IRError(f"allowed_direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}",
                              op=op.name)
            attrs["allowed_direction"], types["allowed_direction"] = DIRECTIONS.index(direction), "i32"
        self.check_attr_shardings(op)
        shardings = [r.sharding for r in op.results]
        if any(s is not None for s in shardings):
            for i, (r, s) in enumerate(zip(op.results, shardings)):
                self.check_sharding(s, r.type, op.name, f"result {i}")
            attrs["sdy.sharding"] = _per_value([_for_mlir(s) for s in shardings], op.results)
            if any(s is not None and s.reduce_types for s in shardings):
                attrs[EXACT_SHARDING] = [s.to_text() if s is not None and s.reduce_types else "" for s in shardings]
        for key in attrs:
            if key not in types and default_pin(name, key):
                types[key] = default_pin(name, key)
        head = ""
        if op.results:
            head = ", ".join(self.define(r, "v") for r in op.results) + " = "
        text = f"{indent}{head}{quote_string(name)}({operands})"
        operand_types = ", ".join(str(v.type) for v in op.operands)
        result_types = [str(r.type) for r in op.results]
        tail = self.attr_dict(attrs, types, op.name) if attrs else ""
        signature = f" : ({operand_types}) -> " + (result_types[0] if len(result_types) == 1
                                                    else "(" + ", ".join(result_types) + ")")
        if self.locations:  # an op without one must not inherit a line of this generated text
            signature += f" loc({quote_string(str(op.location))})" if op.location else " loc(unknown)"
        if not op.regions:
            self.emit(text + (" " + tail if tail else "") + signature, op.name)
            return
        inner_return = "sdy.return" if name == "sdy.manual_computation" else "stablehlo.return"
        self.emit(text + " (", op.name)
        for ri, region in enumerate(op.regions):
            self.emit(indent + "  {", op.name)
            for bi, block in enumerate(region.blocks):
                self.block_label(block, bi, indent + "  ")
                for inner in block.ops:
                    self.op(inner, indent + "    ", inner_return)
            self.emit(indent + "  }" + ("," if ri + 1 < len(op.regions) else ""), op.name)
        self.emit(indent + ")" + (" " + tail if tail else "") + signature, op.name)

    def block_label(self, block: Block, index: int, indent: str):
        if not block.args and index == 0:
            return
        args = ", ".join(f"{self.define(a, 'b')}: {a.type}" for a in block.args)
        self.emit(f"{indent}^bb{index}" + (f"({args})" if args else "") + ":")

    def attr_dict(self, attrs: dict, types: dict, where: str) -> str:
        parts = []
        for key, value in attrs.items():
            if not isinstance(key, str) or not key:
                raise IRError(f"attribute names must be non-empty strings, got {key!r}", op=where)
            try:
                parts.append(f"{attr_name(key)} = {to_text(value, types.get(key), key)}")
            except IRError as e:
                raise type(e)(e.reason, op=where) from None
        return "{" + ", ".join(parts) + "}"


def _per_value(shardings, results) -> list:
    """One sharding per result; a result without one gets Shardy's 'no sharding yet': all dims open."""
    mesh = next(s.mesh for s in shardings if s is not None)
    from ..sharding import DimSharding
    return [s if s is not None else TensorSharding(mesh, [DimSharding([], is_closed=False)] * r.type.rank)
            for s, r in zip(shardings, results)]


__all__ = ["print_program", "to_mlir_module", "generic_text", "mlir_op_name"]
