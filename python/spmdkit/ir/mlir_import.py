"""MLIR text -> Program: our own text and Shardy/StableHLO modules alike, read by MLIR's parser.

MLIR parses and verifies (Shardy's verifiers check meshes, axes and ranks); this module walks the
verified module into the IR: `sdy.mesh` ops become `Program.meshes`, `func.func` ops functions
(arg/result `sdy.sharding` attributes become shardings), every other op an `Op` whose attributes
are converted by `attributes.from_mlir`. An op's `sdy.sharding` (`#sdy.sharding_per_value`)
becomes its results' shardings. Generic `"paddle.<name>"` ops are registry name `<name>`;
`"jax.<primitive>"` keep their name. An op in no dialect and in no registry is an error.

The compiler API in the IR (the printer writes the same back):
- func argument / result `sdy.sharding`  -> `Value.sharding` / `Function.result_shardings[i]`
- op attribute `sdy.sharding` (per value) -> `op.results[i].sharding`
- `sdy.sharding_constraint`   attrs {"sharding": TensorSharding}; one result
- `sdy.sharding_group`        attrs {"group_id": int}; no result
- `sdy.propagation_barrier`   attrs {"allowed_direction": "NONE" | "FORWARD" | "BACKWARD"}
                              (Shardy's verifier rejects "BOTH")
- `sdy.manual_computation`    attrs {"in_shardings": [TensorSharding], "out_shardings": [...],
                              "manual_axes": [axis name]}; one region on local shapes, `sdy.return`
- `stablehlo.while` (regions cond, body), `stablehlo.case` (a region per branch),
  `stablehlo.optimization_barrier`; `func.call` attrs {"callee": function name}
- terminators `func.return`, `stablehlo.return`, `sdy.return`
"""
from __future__ import annotations

import os
from functools import lru_cache
from typing import Optional

from .. import _core
from ..sharding import ShardingError, parse_mesh, parse_sharding
from .attributes import OP_ATTR_PINS, MLIRAttr, default_pin, from_mlir, tensor_type_or_none
from .core import (DIRECTIONS, JAX_PREFIX, LOCATION_READERS, PADDLE_PREFIX, Block, Function, Op, Program, Region, Value,
                   paused_gc)
from .errors import IRError, IRVerifyError, UnknownOpError, UnsupportedIRError, location_line_column
from .mlir_context import ir, parse_module, shared_context
from .ssa_names import SsaNamer


def location_text(loc) -> Optional[str]:
    """Where an op came from, in words (from its MLIR location): "line 4, column 10" for the
    parsed text, the name of a name location (what print_program(locations=True) writes),
    else MLIR's own form."""
    text = str(loc)
    if text == "loc(unknown)":
        return None
    line, column = location_line_column(text)
    if line is not None and text.startswith('loc("-":'):
        return f"line {line}, column {column}"
    if loc.typeid == ir.NameLoc.static_typeid and not text.endswith('"))'):  # a bare name
        return loc.name_str
    return text[4:-1] if text.startswith("loc(") and text.endswith(")") else text


def _file_location_text(loc) -> Optional[str]:
    """location_text of a file location; a line of the parsed text read without printing it."""
    try:
        if loc.filename == "-":
            return f"line {loc.start_line}, column {loc.start_col}"
    except (AttributeError, ValueError):
        pass
    return location_text(loc)


for _kind in [ir.Location, *ir.Location.__subclasses__()]:
    LOCATION_READERS[_kind] = location_text
LOCATION_READERS[ir.FileLineColLoc] = _file_location_text

# the printer's exact text of a sharding whose unreduced axes have reduce types Shardy's text lacks
EXACT_SHARDING = "spmdkit.exact_sharding"


@lru_cache(maxsize=1)
def rule_names() -> frozenset:
    """Every name the rule registry knows (aliases included)."""
    from .. import core as rules
    return frozenset(rules.list_spmd_rules())


def registry_name(mlir_name: str) -> str:
    """The IR's op name for an MLIR op name: `paddle.matmul` -> `matmul`, others unchanged."""
    return mlir_name[len(PADDLE_PREFIX):] if mlir_name.startswith(PADDLE_PREFIX) else mlir_name


def parse(text: str, strict_ops: bool = True, ssa_names: bool = False) -> Program:
    """Parse MLIR text (ours or Shardy's/StableHLO's) into a Program; typed IRError on bad input.

    strict_ops: reject ops that are in no registered dialect and have no rule in the registry.
    ssa_names: set each value's `name` to the file's own SSA name (`arg0`, `6`, `cst`), for tools
    that address values as the file does; off by default (it costs a pass over the text).
    """
    module = parse_module(text)
    try:
        return import_module(module, source=text, strict_ops=strict_ops, ssa_names=ssa_names)
    except RecursionError:  # regions nested thousands deep: refuse rather than crash
        raise IRError("regions are nested too deeply to import") from None


def load(path: str | os.PathLike, strict_ops: bool = True, ssa_names: bool = False) -> Program:
    """Parse an MLIR file."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        return parse(text, strict_ops=strict_ops, ssa_names=ssa_names)
    except IRError as e:
        e.args = (f"{os.fspath(path)}: {e.args[0]}",) + e.args[1:]
        raise


def import_module(module, source: Optional[str] = None, strict_ops: bool = True, ssa_names: bool = False) -> Program:
    """Walk a parsed (and verified) jaxlib MLIR module into a Program."""
    namer = SsaNamer(module.operation, source) if ssa_names else None
    with paused_gc():
        return _Importer(source, strict_ops, namer).module(module)


class _Importer:
    # An op whose parts the caches below already hold (the common case) is imported in C++
    # (_core.import_block_ops, spmd_rules/ir/bind_mlir_import.cc); `op` is the definition, and
    # imports every other op. False: every op through `op` (the tests compare the two).
    fast = True

    def __init__(self, source: Optional[str], strict_ops: bool, namer: Optional[SsaNamer] = None):
        self.source = source
        self.strict_ops = strict_ops
        self.namer = namer  # SSA names of the file, when asked for
        self.values: dict = {}  # _core.mlir_value_key(ir.Value) -> Value
        self.ctx = shared_context()
        self.names: dict[str, str] = {}     # MLIR op name -> IR op name, checked once per name
        self.registered: dict[str, bool] = {}  # IR op name -> in a registered dialect
        self.regionless: set[str] = set()   # registered ops whose definition has no regions
        self.types: dict = {}               # ir.Type -> TensorType (MLIR uniques types)
        self.attributes: dict = {}          # (key, ir.Attribute) -> (value, pin, value is a list: copied per op)
        self.state = (self.values, self.names, self.types, self.attributes, self.regionless, self.registered,
                      Op, Value, OP_ATTR_PINS, EXACT_SHARDING, self.op, self.regions)  # what import_block_ops reads, fills

    # -- errors --------------------------------------------------------------------------
    def fail(self, cls, message: str, operation, value: Optional[str] = None):
        line, column = location_line_column(operation.location)
        raise cls(message, line=line, column=column, op=operation.name, value=value, source=self.source)

    # -- module, meshes, functions --------------------------------------------------------
    def module(self, module) -> Program:
        mod_op = module.operation
        program = Program()
        for name, attr in mod_op.attributes.items():
            if name == "sym_name":
                program.name = ir.StringAttr(attr).value
            else:
                program.attrs[name] = _plain(attr)
        for op in module.body.operations:
            operation = op.operation
            if operation.name == "sdy.mesh":
                mesh_name = ir.StringAttr(operation.attributes["sym_name"]).value
                try:
                    program.meshes[mesh_name] = parse_mesh(str(operation.attributes["mesh"]))
                except ShardingError as e:
                    self.fail(IRVerifyError, f"mesh @{mesh_name}: {e}", operation)
                extra = {k: _plain(a) for k, a in operation.attributes.items() if k not in ("sym_name", "mesh")}
                if extra:
                    program.mesh_attrs[mesh_name] = extra
            elif operation.name == "func.func":
                program.add_function(self.function(operation))
            else:
                self.fail(UnsupportedIRError, "a module may hold only sdy.mesh and func.func ops", operation)
        return program

    def function(self, operation) -> Function:
        attrs = operation.attributes
        name = ir.StringAttr(attrs["sym_name"]).value
        ftype = ir.FunctionType(ir.TypeAttr(attrs["function_type"]).value)
        fn = Function(name)
        if len(operation.regions[0].blocks) == 0:
            self.fail(UnsupportedIRError, f"function @{name} is a declaration without a body", operation)
        if len(operation.regions[0].blocks) != 1:
            self.fail(UnsupportedIRError, f"function @{name} has several blocks", operation)
        arg_attrs = _dict_list(attrs, "arg_attrs")
        res_attrs = _dict_list(attrs, "res_attrs")
        for key, attr in attrs.items():
            if key in ("sym_name", "function_type", "arg_attrs", "res_attrs"):
                continue
            if key == "sym_visibility":
                fn.visibility = ir.StringAttr(attr).value
            else:
                fn.attrs[key] = _plain(attr)
        fn.body = self.block(operation.regions[0].blocks[0], operation, arg_attrs)
        fn.arg_attrs = [_without_sharding(d) for d in arg_attrs]
        for i, t in enumerate(ftype.results):
            fn.result_types.append(self.tensor_type(t, operation, f"result {i} of @{name}"))
            d = res_attrs[i] if i < len(res_attrs) else {}
            fn.result_shardings.append(self.sharding_of(d, operation, f"result {i}"))
        fn.result_attrs = [_without_sharding(d) for d in res_attrs]
        _trim(fn.arg_attrs)
        _trim(fn.result_attrs)
        return fn

    def tensor_type(self, t, operation, what: str):
        tt = tensor_type_or_none(t)
        if tt is None:
            self.fail(UnsupportedIRError, f"{what} has type {t}; only static ranked tensors are supported",
                      operation, value=what)
        return tt

    def convert(self, attr, operation, what: str):
        """from_mlir, with a sharding our representation refuses reported at its op and line."""
        try:
            return from_mlir(attr)
        except ShardingError as e:
            self.fail(IRVerifyError, f"{what}: {e}", operation, value=what)

    def sharding_of(self, d: dict, operation, what: str):
        if EXACT_SHARDING in d:  # the printer's exact text of reduce types Shardy's text lacks
            return self.exact(ir.StringAttr(d[EXACT_SHARDING]).value, operation, what)
        return self.convert(d["sdy.sharding"], operation, what)[0] if "sdy.sharding" in d else None

    def exact(self, text: str, operation, what: str):
        try:
            return parse_sharding(text)
        except ShardingError as e:
            self.fail(IRVerifyError, f"{what}: {e}", operation, value=what)

    # -- blocks and ops --------------------------------------------------------------------
    def block(self, mblock, owner, arg_attrs=None) -> Block:
        block = Block()
        types = self.types
        for i, a in enumerate(mblock.arguments):
            d = arg_attrs[i] if arg_attrs and i < len(arg_attrs) else None
            t = a.type
            tt = types.get(t) or self.new_type(t, owner, f"block argument {i}")
            v = block.add_arg(tt, sharding=self.sharding_of(d, owner, f"argument {i}") if d else None)
            if self.namer is not None:
                v.name = (self.namer.argument(a) or "%")[1:] or None
            self.values[_core.mlir_value_key(a)] = v
        ops = block.ops
        operation = None
        if self.fast and self.namer is None:
            operation = _core.import_block_ops(mblock.operations, block, ops, self.state)
        else:
            for view in mblock.operations:
                operation = view.operation
                op = self.op(operation)
                op.parent = block
                ops.append(op)
        # MLIR lets only a block's last op have successors (its verifier checked the rest)
        if operation is not None and len(operation.successors):
            self.fail(UnsupportedIRError, "ops with successor blocks are not supported", operation)
        return block

    def op_name(self, operation) -> str:
        """The IR name of the op, checked against the dialects and the registry once per name."""
        mlir_name = operation.name
        name = self.names.get(mlir_name)
        if name is None:
            name = registry_name(mlir_name)
            self.registered[name] = registered = self.ctx.is_registered_operation(mlir_name)
            if self.strict_ops and not registered and name not in rule_names():
                where = "no rule of that name is registered" if mlir_name.startswith((PADDLE_PREFIX, JAX_PREFIX)) \
                    else "it is in no registered dialect and names no rule"
                self.fail(UnknownOpError, f"unknown op '{mlir_name}': {where}", operation)
            self.names[mlir_name] = name
        return name

    def new_type(self, t, operation, what: str):
        """tensor_type of a type not in the cache yet, cached (MLIR uniques types)."""
        tt = self.types[t] = self.tensor_type(t, operation, what)
        return tt

    def op(self, operation) -> Op:
        # The hot loop of an import (one call per op): every binding call here costs ~1 us.
        name = self.names.get(operation.name) or self.op_name(operation)
        values, key = self.values, _core.mlir_value_key
        try:
            operands = [values[key(v)] for v in operation.operands]
        except KeyError:  # MLIR's verifier guarantees dominance; a value from elsewhere is a bug
            i = next(i for i, v in enumerate(operation.operands) if key(v) not in values)
            self.fail(IRError, f"operand {i} is defined outside the IR being imported", operation)
        op = Op(name, operands, location=operation.location)  # read into text when asked for (core.LOCATION_READERS)
        types = self.types
        results = op.results
        for i, r in enumerate(operation.results):
            t = r.type
            v = Value(types.get(t) or self.new_type(t, operation, f"result {i}"), op, i)
            values[key(r)] = v
            results.append(v)
        attributes = operation.attributes
        if len(attributes):
            self.op_attributes(op, operation, attributes)
            for r, text in zip(results, op.attrs.pop(EXACT_SHARDING, None) or ()):
                if text:
                    r.sharding = self.exact(text, operation, EXACT_SHARDING)
        if self.namer is not None:
            for r, rname in zip(results, self.namer.results(operation)):
                r.name = rname[1:] if rname else None
        if name not in self.regionless:
            if len(operation.regions):
                self.regions(op, operation)
            elif self.registered[name]:  # its op definition fixes the count
                self.regionless.add(name)
        return op

    def regions(self, op: Op, operation) -> None:
        op.regions = [Region([self.block(b, operation) for b in region.blocks]) for region in operation.regions]

    def op_attributes(self, op: Op, operation, attributes) -> None:
        for key, attr in attributes.items():
            if key == "sdy.sharding" and not len(op.results):
                op.attrs[key] = MLIRAttr(str(attr))  # Shardy allows one on a result-less op: kept as it is
                continue
            if key == "sdy.sharding":
                cached = self.attributes.get((key, attr))
                if cached is None:
                    cached = self.attributes[(key, attr)] = self.convert(attr, operation, key)
                value = cached[0]
                if not isinstance(value, list) or len(value) != len(op.results):
                    self.fail(IRError, f"sdy.sharding must give one sharding per result ({len(op.results)})",
                              operation)
                for r, s in zip(op.results, value):
                    r.sharding = s
                continue
            cached = self.attributes.get((key, attr))
            if cached is None:
                value, pin = self.convert(attr, operation, key)
                if op.name == "sdy.propagation_barrier" and key == "allowed_direction" and isinstance(value, int):
                    value, pin = DIRECTIONS[value], None
                self.attributes[(key, attr)] = cached = (value, pin, isinstance(value, list))
            value, pin, is_list = cached
            op.attrs[key] = _fresh(value) if is_list else value
            if pin is not None and pin != default_pin(op.name, key):
                op.attr_types[key] = pin


def _fresh(value):
    """A cached attribute value, with its lists copied (an op may change its own)."""
    return [_fresh(v) for v in value] if isinstance(value, list) else value


def _dict_list(attrs, key: str) -> list[dict]:
    """A func's arg_attrs/res_attrs as a list of {name: ir.Attribute}."""
    if key not in attrs:
        return []
    return [{n.name: n.attr for n in ir.DictAttr(d)} for d in ir.ArrayAttr(attrs[key])]


def _without_sharding(d: dict) -> dict:
    return {k: _plain(v) for k, v in d.items() if k not in ("sdy.sharding", EXACT_SHARDING)}


def _plain(attr):
    """Module/function attributes stay exact text: nothing reads them but the printer."""
    return MLIRAttr(str(attr))


def _trim(dicts: list[dict]) -> None:
    while dicts and not dicts[-1]:
        dicts.pop()
