"""Write programs in Python: meshes, functions, rule ops and Shardy's compiler API (seed 001).

    pb = ProgramBuilder()
    pb.mesh("m", {"x": 2, "y": 2})
    f = pb.function("main")
    x = f.arg((8, 16), sharding='#sdy.sharding<@m, [{"x"}, {}]>')
    w = f.arg((16, 32))
    y = f.op("matmul", [x, w], {"trans_x": False, "trans_y": False}, result_types=[((8, 32), "f32")])
    y = f.sharding_constraint(y, '#sdy.sharding<@m, [{}, {"y", ?}]>')
    f.ret(y)
    program = pb.build()          # verified (spmdkit.ir.verify) unless verify=False

Shardings are TensorSharding objects or Shardy text. Result types are `TensorType`s or
(shape, dtype) pairs; when left out they are inferred where that is certain: `jax.<primitive>`
ops by JAX's own shape rules (the attributes rebuilt into params), elementwise ops with numpy
broadcasting, and the compiler-API ops from their operands. Anything else asks for them.
"""
from __future__ import annotations

import re
from typing import Callable, Iterable, Mapping, Optional, Sequence

import numpy as np

from ..sharding import Mesh, TensorSharding, parse_mesh, parse_sharding
from .constants import dense_attr
from .core import Block, Function, Op, Program, Region, Value
from .types import TensorType, element_type

DIRECTIONS = ("NONE", "FORWARD", "BACKWARD", "BOTH")

# registry names whose result is the numpy broadcast of their operands (same element type)
ELEMENTWISE = frozenset({
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "elementwise_pow", "relu", "gelu", "exp",
    "log", "tanh", "sigmoid", "sqrt", "rsqrt", "abs", "scale", "silu",
    "stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.divide", "stablehlo.maximum",
    "stablehlo.minimum", "stablehlo.negate", "stablehlo.exponential", "stablehlo.log", "stablehlo.tanh",
    "stablehlo.rsqrt", "stablehlo.sqrt", "stablehlo.abs", "stablehlo.logistic", "stablehlo.power",
})


def as_type(t) -> TensorType:
    """A TensorType from a TensorType, a (shape, dtype) pair or a bare shape (f32)."""
    if isinstance(t, TensorType):
        return t
    if isinstance(t, tuple) and len(t) == 2 and isinstance(t[1], str) and not isinstance(t[0], int):
        return TensorType(tuple(t[0]), element_type(t[1]))
    if isinstance(t, (tuple, list)) and all(isinstance(d, (int, np.integer)) for d in t):
        return TensorType(tuple(int(d) for d in t), "f32")
    raise TypeError(f"a result type must be a TensorType, a (shape, dtype) pair or a shape, got {t!r}")


def as_sharding(s) -> Optional[TensorSharding]:
    if s is None or isinstance(s, TensorSharding):
        return s
    if isinstance(s, str):
        text = s.strip()
        return parse_sharding(text if text.startswith("#sdy.sharding") else f"#sdy.sharding{text}")
    raise TypeError(f"a sharding must be a TensorSharding or Shardy text, got {type(s).__name__}")


class ProgramBuilder:
    def __init__(self, name: Optional[str] = None):
        self.program = Program(name=name)

    def mesh(self, name: str, axes, device_ids: Optional[Iterable[int]] = None) -> str:
        """Declare `sdy.mesh @name`: axes as {name: size}, [(name, size)], a Mesh or `<[...]>` text."""
        if not isinstance(name, str) or not re.match(r"[A-Za-z_][A-Za-z0-9_$.]*\Z", name):
            raise ValueError(f"mesh name must be an identifier, got {name!r}")
        if name in self.program.meshes:
            raise ValueError(f"mesh @{name} is already declared")
        if isinstance(axes, Mesh):
            mesh = axes
        elif isinstance(axes, str):
            mesh = parse_mesh(axes)
        else:
            mesh = Mesh(axes, device_ids=device_ids)
        self.program.meshes[name] = mesh
        return name

    def function(self, name: str = "main", visibility: Optional[str] = None) -> "FunctionBuilder":
        fn = self.program.add_function(Function(name=name, visibility=visibility))
        return FunctionBuilder(self, fn)

    def build(self, verify: bool = True) -> Program:
        for fn in self.program.functions.values():
            term = fn.body.terminator
            if term is None or term.name != "func.return":
                raise ValueError(f"function @{fn.name} has no return: call ret(...) on its builder")
        if verify:
            from .verify import verify_program
            verify_program(self.program)
        return self.program


class BlockBuilder:
    """Appends ops to one block (a function body or a region)."""

    def __init__(self, pb: ProgramBuilder, block: Block):
        self.pb = pb
        self.block = block

    # -- generic ops -------------------------------------------------------------------------
    def op(self, name: str, operands: Sequence[Value] = (), attrs: Optional[Mapping] = None,
           result_types=None, shardings=None, regions=None, attr_types: Optional[Mapping[str, str]] = None):
        """Append op `name`; returns its one result, or the list of its results (none: [])."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"an op name must be a non-empty string, got {name!r}")
        operands = list(operands)
        for i, v in enumerate(operands):
            if not isinstance(v, Value):
                raise TypeError(f"op '{name}': operand {i} must be a Value, got {type(v).__name__}")
        attrs = dict(attrs or {})
        if name.startswith("jax."):  # None has no MLIR form: jax ops list their None params instead
            nones = [k for k, v in attrs.items() if v is None]
            if nones:
                from .jax_params import NONE_PARAMS
                attrs = {k: v for k, v in attrs.items() if v is not None}
                attrs[NONE_PARAMS] = sorted(set(attrs.get(NONE_PARAMS, [])) | set(nones))
        if result_types is None:
            types = infer_result_types(name, operands, attrs)
        else:
            types = [as_type(t) for t in result_types]
        op = Op.create(name, operands, types, attrs, regions or [], attr_types=dict(attr_types or {}))
        if shardings is not None:
            shardings = list(shardings)
            if len(shardings) != len(op.results):
                raise ValueError(f"op '{name}': {len(shardings)} shardings for {len(op.results)} results")
            for r, s in zip(op.results, shardings):
                r.sharding = as_sharding(s)
        self.block.append(op)
        return op.results[0] if len(op.results) == 1 else list(op.results)

    def constant(self, data, dtype=None) -> Value:
        array = np.asarray(data, dtype=dtype)
        return self.op("stablehlo.constant", [], {"value": dense_attr(array)},
                       [TensorType(array.shape, element_type(array.dtype.name))])

    def call(self, callee: str, operands: Sequence[Value]):
        fn = self.pb.program.functions.get(callee)
        if fn is None:
            raise ValueError(f"func.call: no function @{callee} (build the callee first)")
        return self.op("func.call", operands, {"callee": callee}, list(fn.result_types))

    # -- the compiler API ------------------------------------------------------------------
    def sharding_constraint(self, value: Value, sharding) -> Value:
        return self.op("sdy.sharding_constraint", [value], {"sharding": as_sharding(sharding)}, [value.type])

    def sharding_group(self, value: Value, group_id: int) -> None:
        if isinstance(group_id, bool) or not isinstance(group_id, int):
            raise TypeError(f"sdy.sharding_group: group_id must be an int, got {group_id!r}")
        self.op("sdy.sharding_group", [value], {"group_id": group_id}, [])

    def propagation_barrier(self, value: Value, allowed_direction: str) -> Value:
        if allowed_direction not in DIRECTIONS:
            raise ValueError(f"sdy.propagation_barrier: allowed_direction must be one of {', '.join(DIRECTIONS)}, "
                             f"got {allowed_direction!r}")
        return self.op("sdy.propagation_barrier", [value], {"allowed_direction": allowed_direction}, [value.type])

    def optimization_barrier(self, *values: Value) -> list[Value]:
        op_results = self.op("stablehlo.optimization_barrier", values, {}, [v.type for v in values])
        return op_results if isinstance(op_results, list) else [op_results]

    def manual_computation(self, operands: Sequence[Value], in_shardings, out_shardings, manual_axes: Sequence[str],
                           body_fn: Callable) -> list[Value]:
        """`sdy.manual_computation`: `body_fn(block_builder, *local_args)` returns the body's results
        (local values); the op's results are their global types under `out_shardings`."""
        operands = list(operands)
        in_sh = [as_sharding(s) for s in in_shardings]
        out_sh = [as_sharding(s) for s in out_shardings]
        manual = list(manual_axes)
        if len(in_sh) != len(operands):
            raise ValueError(f"sdy.manual_computation: {len(in_sh)} in_shardings for {len(operands)} operands")
        meshes = self.pb.program.meshes
        body = Block()
        for i, (v, s) in enumerate(zip(operands, in_sh)):
            body.add_arg(TensorType(manual_shape(v.type.shape, s, manual, meshes, "local", f"operand {i}"),
                                    v.type.dtype))
        inner = BlockBuilder(self.pb, body)
        outs = _as_list(body_fn(inner, *body.args))
        if len(outs) != len(out_sh):
            raise ValueError(f"sdy.manual_computation: the body returns {len(outs)} values for {len(out_sh)} "
                             f"out_shardings")
        body.append(Op.create("sdy.return", outs, []))
        types = [TensorType(manual_shape(v.type.shape, s, manual, meshes, "global", f"result {i}"), v.type.dtype)
                 for i, (v, s) in enumerate(zip(outs, out_sh))]
        attrs = {"in_shardings": in_sh, "out_shardings": out_sh, "manual_axes": manual}
        return _as_list(self.op("sdy.manual_computation", operands, attrs, types, regions=[Region([body])]))

    def while_loop(self, init: Sequence[Value], cond_fn: Callable, body_fn: Callable) -> list[Value]:
        """`stablehlo.while` over carried values: cond_fn(bb, *carried) -> i1 scalar, body_fn -> carried."""
        init = list(init)
        regions = []
        for fn, what in ((cond_fn, "cond"), (body_fn, "body")):
            block = Block()
            for v in init:
                block.add_arg(v.type)
            outs = _as_list(fn(BlockBuilder(self.pb, block), *block.args))
            block.append(Op.create("stablehlo.return", outs, []))
            regions.append(Region([block]))
        return _as_list(self.op("stablehlo.while", init, {}, [v.type for v in init], regions=regions))

    def case(self, index: Value, branch_fns: Sequence[Callable]) -> list[Value]:
        """`stablehlo.case`: branch_fns[i](bb) -> results; branches read values from this block."""
        regions, types = [], None
        for fn in branch_fns:
            block = Block()
            outs = _as_list(fn(BlockBuilder(self.pb, block)))
            block.append(Op.create("stablehlo.return", outs, []))
            regions.append(Region([block]))
            types = types if types is not None else [v.type for v in outs]
        if not regions:
            raise ValueError("stablehlo.case needs at least one branch")
        return _as_list(self.op("stablehlo.case", [index], {}, types, regions=regions))


class FunctionBuilder(BlockBuilder):
    def __init__(self, pb: ProgramBuilder, fn: Function):
        super().__init__(pb, fn.body)
        self.fn = fn

    def arg(self, shape, dtype: str = "f32", sharding=None, name: Optional[str] = None) -> Value:
        return self.block.add_arg(as_type((tuple(shape), dtype)), sharding=as_sharding(sharding), name=name)

    def ret(self, *values: Value, shardings=None) -> None:
        """`func.return`: sets the function's result types (and result shardings, if given)."""
        if self.block.terminator is not None:
            raise ValueError(f"function @{self.fn.name} already returned")
        shardings = [None] * len(values) if shardings is None else [as_sharding(s) for s in shardings]
        if len(shardings) != len(values):
            raise ValueError(f"@{self.fn.name}: {len(shardings)} result shardings for {len(values)} results")
        self.block.append(Op.create("func.return", list(values), []))
        self.fn.result_types = [v.type for v in values]
        self.fn.result_shardings = shardings


# -- shapes ------------------------------------------------------------------------------------
def manual_shape(shape, sharding: TensorSharding, manual: Sequence[str], meshes, to: str, what: str) -> tuple:
    """The local ("local") or global ("global") shape of `shape` over the manual axes of `sharding`."""
    if sharding.rank != len(shape):
        raise ValueError(f"sdy.manual_computation {what}: sharding {sharding} has rank {sharding.rank}, the value "
                         f"has shape {list(shape)}")
    mesh = sharding.resolve_mesh(meshes)
    out = []
    for i, (n, d) in enumerate(zip(shape, sharding.dims)):
        k = 1
        for a in d.axes:
            if a.name in manual:
                k *= a.size_on(mesh)
        if to == "local":
            if n % k:
                raise ValueError(f"sdy.manual_computation {what}: dim {i} of size {n} is not divisible by the "
                                 f"manual axes' {k} shards")
            out.append(n // k)
        else:
            out.append(n * k)
    return tuple(out)


def infer_result_types(name: str, operands: Sequence[Value], attrs: dict) -> list[TensorType]:
    if name in ELEMENTWISE:
        if not operands:
            raise TypeError(f"op '{name}': an elementwise op needs operands")
        try:
            shape = np.broadcast_shapes(*(v.type.shape for v in operands))
        except ValueError:
            raise ValueError(f"op '{name}': operand shapes {[list(v.type.shape) for v in operands]} do not "
                             f"broadcast") from None
        return [TensorType(shape, operands[0].type.dtype)]
    if name.startswith("jax."):
        return jax_result_types(name, operands, attrs)
    raise TypeError(f"op '{name}': give result_types (they are inferred only for jax.<primitive> and "
                    f"elementwise ops)")


_MISSING_KW = re.compile(r"missing (?:\d+ )?required keyword-only argument[s]?: '(\w+)'")


def jax_result_types(name: str, operands: Sequence[Value], attrs: dict) -> list[TensorType]:
    """Result types of a `jax.<primitive>` op by JAX's shape rules.

    Params the attributes leave out are filled with None, JAX's own default for its optional
    params (sharding, accuracy, precision, ...), one at a time as the shape rule asks for them;
    their names are added to `attrs[jax.none_params]` so that the op evaluates as built.
    """
    import jax

    from .evaluate import _np_dtype
    from .jax_params import NONE_PARAMS, params_from_attrs, primitive
    prim_name = name[len("jax."):]
    prim = primitive(prim_name)
    dtypes = [_np_dtype(v.type) for v in operands]
    params = params_from_attrs(prim_name, attrs, dtypes)
    specs = [jax.ShapeDtypeStruct(v.type.shape, d) for v, d in zip(operands, dtypes)]
    for _ in range(8):
        try:
            out = jax.eval_shape(lambda *xs: prim.bind(*xs, **params), *specs)
            break
        except TypeError as e:
            m = _MISSING_KW.search(str(e))
            if not m or m.group(1) in params:  # JAX's shape rule refused these operands/attributes
                raise ValueError(f"op '{name}': cannot infer result types: {e}") from None
            params[m.group(1)] = None
            attrs[NONE_PARAMS] = sorted(set(attrs.get(NONE_PARAMS, [])) | {m.group(1)})
        except Exception as e:  # JAX's shape rules raise TypeError/ValueError on bad attributes
            raise ValueError(f"op '{name}': {type(e).__name__}: {e}") from None
    else:
        raise TypeError(f"op '{name}': cannot infer result types; give result_types")
    outs = out if isinstance(out, (list, tuple)) else [out]
    return [TensorType(o.shape, element_type(np.dtype(o.dtype).name)) for o in outs]


def _as_list(x) -> list:
    if isinstance(x, Value):
        return [x]
    if x is None:
        return []
    return list(x)
