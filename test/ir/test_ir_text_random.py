"""Random programs built from the IR core: print -> parse is the identity, print is a fixed point.

Programs draw random meshes, valid shardings (sub-axes, open dims, priorities, replicated and
unreduced axes), chains of registry ops with attributes of every kind, and the compiler-API ops
(constraints, groups, barriers, manual computations with a local body, optimization barriers,
calls to a private function, cases whose branches read outer values).
"""
import math

import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from ir_text_equality import assert_programs_equal
from spmdkit.ir import Function, MLIRAttr, Op, Program, Region, Block, TensorType, parse, print_program
from spmdkit.ir.attributes import from_mlir, to_text
from spmdkit.ir.mlir_context import ir, shared_context
from spmdkit.sharding import AxisRef, DimSharding, Mesh, TensorSharding

AXIS_NAMES = ["x", "y", "z", "data", "model", "a.b", "with space"]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def meshes(draw):
    names = draw(st.lists(st.sampled_from(AXIS_NAMES), min_size=1, max_size=3, unique=True))
    return Mesh({n: draw(st.sampled_from([2, 4])) for n in names})


@st.composite
def shardings(draw, mesh_name, mesh, rank):
    """A sharding that satisfies Shardy's invariants: every axis (or sub-axis) used once."""
    dims = [[] for _ in range(rank)]
    replicated, unreduced = [], []
    for axis in mesh.axes:
        pieces = [AxisRef(axis.name)]
        if axis.size == 4 and draw(st.booleans()):
            pieces = [AxisRef(axis.name, 1, 2), AxisRef(axis.name, 2, 2)]
        used_dims = set()
        for piece in pieces:
            where = draw(st.sampled_from(["none", "dim", "dim", "replicated", "unreduced"]))
            if where == "dim" and rank:
                d = draw(st.integers(0, rank - 1))
                if d in used_dims:  # two sub-axes of one axis in one dim must be merged: skip
                    continue
                used_dims.add(d)
                dims[d].append(piece)
            elif where == "replicated":
                replicated.append(piece)
            elif where == "unreduced":
                unreduced.append(piece)
    out = []
    for axes in dims:
        axes = draw(st.permutations(axes)) if axes else axes
        is_closed = draw(st.booleans())
        priority = draw(st.none() | st.integers(0, 3)) if (axes or not is_closed) else None
        out.append(DimSharding(axes, is_closed=is_closed, priority=priority))
    order = lambda a: (mesh.axis_index(a.name), a.pre_size or 1)
    # sub-axes of one axis in `replicated` (or `unreduced`) are adjacent there: merge them back
    return TensorSharding(mesh_name, out, replicated=_merged(sorted(replicated, key=order), mesh),
                          unreduced=_merged(sorted(unreduced, key=order), mesh))


def _merged(axes, mesh):
    out = []
    for a in axes:
        if out and out[-1].name == a.name and out[-1].is_sub_axis and a.is_sub_axis:
            out[-1] = AxisRef(a.name)
        else:
            out.append(a)
    return out


FLOAT_PINS = {None: float, "f32": lambda v: float(np.float32(v)), "f16": lambda v: float(np.float16(v)),
              "bf16": lambda v: float(ml_dtypes.bfloat16(v))}
OPAQUE = ["#stablehlo<comparison_direction GT>", "dense<[1, 2]> : tensor<2xi32>", "unit",
          "#stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>",
          "dense<1.500000e+00> : tensor<2x2xf32>"]


@st.composite
def attr_values(draw, mesh_name, mesh):
    """(value, pin) of one attribute, of any kind the text format supports."""
    kind = draw(st.sampled_from(["bool", "int", "int32", "float", "str", "ints", "ints32", "bools", "floats",
                                 "mixed", "empty", "sharding", "shardings", "opaque", "type", "symbol", "dict"]))
    if kind == "bool":
        return draw(st.booleans()), None
    if kind == "int":
        return draw(st.integers(-2 ** 62, 2 ** 62)), draw(st.sampled_from([None, "i64"]))
    if kind == "int32":
        return draw(st.integers(-2 ** 31, 2 ** 31 - 1)), "i32"
    if kind == "float":
        pin = draw(st.sampled_from(list(FLOAT_PINS)))
        v = draw(st.floats(allow_nan=False, width=32) | st.sampled_from([math.inf, -math.inf, 0.0, -0.0]))
        with np.errstate(over="ignore"):  # a float too big for f16 becomes inf, as MLIR would make it
            v = FLOAT_PINS[pin](v)
        return v, pin
    if kind == "str":
        return draw(st.text(max_size=12)), None
    if kind == "ints":
        return draw(st.lists(st.integers(-2 ** 40, 2 ** 40), max_size=5)), None
    if kind == "ints32":
        return draw(st.lists(st.integers(-100, 100), max_size=5)), draw(st.sampled_from(["array<i32>", "array<i8>"]))
    if kind == "bools":
        return draw(st.lists(st.booleans(), max_size=4)), "array<i1>"
    if kind == "floats":
        return [float(np.float32(v)) for v in draw(st.lists(st.floats(-1e6, 1e6, width=32), max_size=4))], "array<f32>"
    if kind == "mixed":
        items = draw(st.lists(st.one_of(st.booleans(), st.text(max_size=4), st.lists(st.integers(0, 9), max_size=3),
                                        st.integers(0, 9)), max_size=4))
        return items, "array"
    if kind == "empty":
        return [], draw(st.sampled_from([None, "array", "sharding_per_value", "array<i32>"]))
    if kind == "sharding":
        return draw(shardings(mesh_name, mesh, draw(st.integers(0, 3)))), None
    if kind == "shardings":
        return [draw(shardings(mesh_name, mesh, 2)) for _ in range(draw(st.integers(1, 2)))], None
    if kind == "opaque":
        return MLIRAttr(draw(st.sampled_from(OPAQUE))), None
    if kind == "type":
        return TensorType(draw(st.lists(st.integers(1, 9), max_size=3)), draw(st.sampled_from(["f32", "bf16", "i8"]))), None
    if kind == "symbol":
        return draw(st.sampled_from(["main", "helper", "odd name"])), "symbol"
    return {k: draw(st.integers(0, 5)) for k in draw(st.lists(st.sampled_from("abcz"), max_size=3, unique=True))}, None


ATTR_NAMES = ["alpha", "axis", "trans_x", "with-dash", "a.b", "x9", "_u"]
SHAPES = [(), (8,), (8, 4), (4, 8, 2)]


@st.composite
def programs(draw):
    mesh = draw(meshes())
    p = Program(meshes={"m": mesh}, name=draw(st.none() | st.sampled_from(["jit_f", "odd module"])))
    if draw(st.booleans()):
        p.meshes["n"] = Mesh({"k": 2})
    main = p.add_function(Function("main"))
    pool = []
    for _ in range(draw(st.integers(1, 3))):
        shape = draw(st.sampled_from(SHAPES))
        s = draw(st.none() | shardings("m", mesh, len(shape)))
        pool.append(main.body.add_arg(TensorType(shape, draw(st.sampled_from(["f32", "bf16"]))), sharding=s))
    helper = None
    if draw(st.booleans()):
        helper = p.add_function(Function("helper", visibility="private"))
        h = helper.body.add_arg(TensorType((8, 4)))
        neg = helper.body.append(Op.create("stablehlo.negate", [h], [h.type]))
        helper.body.append(Op.create("func.return", [neg.result], []))
        helper.result_types = [h.type]
    for _ in range(draw(st.integers(1, 8))):
        v = draw(st.sampled_from(pool))
        kind = draw(st.sampled_from(["unary", "binary", "generic", "constraint", "group", "barrier", "opt_barrier",
                                     "manual", "call", "case"]))
        if kind == "unary":
            op = Op.create(draw(st.sampled_from(["relu", "exp", "tanh", "stablehlo.negate"])), [v], [v.type])
        elif kind == "binary":
            op = Op.create(draw(st.sampled_from(["add", "multiply", "stablehlo.add"])), [v, v], [v.type])
        elif kind == "generic":
            attrs, pins = {}, {}
            for name in draw(st.lists(st.sampled_from(ATTR_NAMES), max_size=4, unique=True)):
                attrs[name], pin = draw(attr_values("m", mesh))
                if pin is not None:
                    pins[name] = pin
            op = Op.create("scale", [v], [v.type], attrs=attrs, attr_types=pins)
        elif kind == "constraint":
            op = Op.create("sdy.sharding_constraint", [v], [v.type],
                           attrs={"sharding": draw(shardings("m", mesh, v.type.rank))})
        elif kind == "group":
            op = Op.create("sdy.sharding_group", [v], [], attrs={"group_id": draw(st.integers(0, 2 ** 40))})
        elif kind == "barrier":
            op = Op.create("sdy.propagation_barrier", [v], [v.type],
                           attrs={"allowed_direction": draw(st.sampled_from(["NONE", "FORWARD", "BACKWARD"]))})
        elif kind == "opt_barrier":
            vs = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3))
            op = Op.create("stablehlo.optimization_barrier", vs, [x.type for x in vs])
        elif kind == "manual" and v.type.rank >= 1:
            op = manual_computation(draw, mesh, v)
        elif kind == "case":
            index = main.body.add_arg(TensorType((), "i32"))
            branches = []
            for _ in range(draw(st.integers(1, 3))):
                block = Block()  # branches read outer values directly (case regions capture)
                inner = block.append(Op.create(draw(st.sampled_from(["stablehlo.negate", "relu"])), [v], [v.type]))
                block.append(Op.create("stablehlo.return", [inner.result], []))
                branches.append(Region([block]))
            op = Op.create("stablehlo.case", [index], [v.type], regions=branches)
        elif kind == "call" and helper is not None:
            fits = [x for x in pool if x.type == helper.args[0].type]
            if not fits:
                fits = [main.body.add_arg(helper.args[0].type)]
                pool.extend(fits)
            op = Op.create("func.call", [draw(st.sampled_from(fits))], [helper.args[0].type],
                           attrs={"callee": "helper"})
        else:
            continue
        if op.results and draw(st.booleans()):
            for r in op.results:
                r.sharding = draw(shardings("m", mesh, r.type.rank))
        main.body.append(op)
        pool.extend(op.results)
    outs = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2))
    main.body.append(Op.create("func.return", outs, []))
    main.result_types = [o.type for o in outs]
    main.result_shardings = [draw(st.none() | shardings("m", mesh, o.type.rank)) for o in outs]
    return p


def manual_computation(draw, mesh, v):
    """A shard_map-like region over some mesh axes (in mesh order), dim 0 split over all of them."""
    names = [a.name for a in mesh.axes]
    manual = [n for n in names if draw(st.booleans())] or names[:1]
    count = math.prod(mesh.axis_size(n) for n in manual)
    if v.type.shape[0] % count:
        manual, count = [], 1
    s = TensorSharding("m", [DimSharding(manual)] + [DimSharding([])] * (v.type.rank - 1))
    local = TensorType((v.type.shape[0] // count,) + v.type.shape[1:], v.type.dtype)
    block = Block()
    arg = block.add_arg(local)
    neg = block.append(Op.create("stablehlo.negate", [arg], [local]))
    block.append(Op.create("sdy.return", [neg.result], []))
    return Op.create("sdy.manual_computation", [v], [v.type], regions=[Region([block])],
                     attrs={"in_shardings": [s], "out_shardings": [s], "manual_axes": manual})


@SETTINGS
@given(programs())
def test_random_programs_round_trip(program):
    text = print_program(program)
    again = parse(text)
    assert_programs_equal(program, again)
    assert print_program(again) == text


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_attribute_values_survive_mlir(data):
    """Python value -> MLIR attribute -> Python value gives back the same MLIR text."""
    mesh = Mesh({"x": 4, "y": 2})
    value, pin = data.draw(attr_values("m", mesh))
    text = to_text(value, pin)
    with shared_context():
        attr = ir.Attribute.parse(text)
        back, back_pin = from_mlir(attr)
        again = ir.Attribute.parse(to_text(back, back_pin))
    assert str(again) == str(attr)
    if not isinstance(value, dict):  # a dict comes back as exact text (MLIRAttr), the rest as values
        assert to_text(back, back_pin) == to_text(value, pin)


def test_partial_result_shardings_print_as_open():
    """Shardy needs a sharding per result; one we lack prints as 'nothing decided yet' (open dims)."""
    p = Program(meshes={"m": Mesh({"x": 2})})
    main = p.add_function(Function("main"))
    a = main.body.add_arg(TensorType((8, 4)))
    op = main.body.append(Op.create("stablehlo.optimization_barrier", [a, a], [a.type, a.type]))
    op.results[0].sharding = TensorSharding("m", [DimSharding(["x"]), DimSharding([])])
    main.body.append(Op.create("func.return", [op.results[1]], []))
    main.result_types = [a.type]
    again = parse(print_program(p))
    r0, r1 = again.main.body.ops[0].results
    assert r0.sharding == op.results[0].sharding
    assert r1.sharding == TensorSharding("m", [DimSharding([], is_closed=False)] * 2)


def test_bare_return_becomes_the_return_of_its_region():
    p = Program()
    main = p.add_function(Function("main"))
    a = main.body.add_arg(TensorType((4,)))
    block = Block()
    x = block.add_arg(TensorType((), "f32"))
    y = block.add_arg(TensorType((), "f32"))
    add = block.append(Op.create("stablehlo.add", [x, y], [TensorType(())]))
    block.append(Op.create("return", [add.result], []))
    init = main.body.append(Op.create("stablehlo.constant", [], [TensorType(())],
                                      attrs={"value": MLIRAttr("dense<0.000000e+00> : tensor<f32>")}))
    red = main.body.append(Op.create("stablehlo.reduce", [a, init.result], [TensorType(())],
                                     attrs={"dimensions": [0]}, regions=[Region([block])]))
    main.body.append(Op.create("return", [red.result], []))
    main.result_types = [TensorType(())]
    text = print_program(p)
    assert "applies stablehlo.add across dimensions = [0]" in text  # MLIR's pretty form of reduce
    again = parse(text)
    assert [o.name for o in again.walk()] == ["stablehlo.constant", "stablehlo.reduce", "stablehlo.add",
                                              "stablehlo.return", "func.return"]
