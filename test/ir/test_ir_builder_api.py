"""ProgramBuilder: every compiler-API construct built in Python, printed by MLIR, parsed back,
verified and (where it computes) evaluated; local shapes of manual computations by property."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spmdkit.ir import EvaluateError, ProgramBuilder, TensorType, evaluate, parse, print_program, verify_program
from spmdkit.ir.jax_params import NONE_PARAMS
from spmdkit.sharding import DimSharding, Mesh, ShardingParseError, TensorSharding


def _api_program():
    pb = ProgramBuilder("api")
    pb.mesh("m", {"x": 2, "y": 2})
    f = pb.function("main")
    x = f.arg((8, 16), sharding='#sdy.sharding<@m, [{"x"}, {}]>')
    w = f.arg((16, 32))
    y = f.op("jax.dot_general", [x, w], {"lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]})
    y = f.sharding_constraint(y, '<@m, [{}, {"y", ?}]>')
    f.sharding_group(y, 3)
    z = f.propagation_barrier(y, "BACKWARD")
    a, b = f.optimization_barrier(z, y)
    (m,) = f.manual_computation([a], ['<@m, [{"x"}, {"y"}]>'], ['<@m, [{"x"}], replicated={"y"}>'], ["x", "y"],
                                lambda bb, t: bb.op("jax.reduce_sum", [t], {"axes": [1], "out_sharding": None},
                                                    [((4,), "f32")]))
    n0 = f.constant(np.int32(0))
    cnt, acc = f.while_loop([n0, b],
                            lambda bb, i, v: bb.op("jax.lt", [i, bb.constant(np.int32(3))]),
                            lambda bb, i, v: [bb.op("jax.add", [i, bb.constant(np.int32(1))]),
                                              bb.op("jax.mul", [v, bb.constant(np.float32(2.0))])])
    (r,) = f.case(cnt, [lambda bb: bb.op("jax.neg", [acc]), lambda bb: [acc]])
    f.ret(r, m, shardings=[None, '#sdy.sharding<@m, [{"x"}]>'])
    return pb.build()


def test_every_construct_prints_parses_and_verifies():
    program = _api_program()
    text = print_program(program)
    for piece in ('sdy.mesh @m = <["x"=2, "y"=2]>', "sdy.sharding_constraint", "sdy.sharding_group",
                  "group_id=3", "allowed_direction=BACKWARD", "stablehlo.optimization_barrier",
                  'manual_axes={"x", "y"}', "(%arg2: tensor<4x16xf32>)", "stablehlo.while", "stablehlo.case",
                  '{sdy.sharding = #sdy.sharding<@m, [{"x"}]>}'):
        assert piece in text, piece
    again = parse(text, strict_ops=False)
    assert print_program(again) == text
    verify_program(again)


def test_builder_infers_jax_result_types_and_records_none_params():
    program = _api_program()
    dot = next(op for op in program.walk() if op.name == "jax.dot_general")
    assert dot.result.type == TensorType((8, 32), "f32")
    assert set(dot.attrs[NONE_PARAMS]) == {"out_sharding", "precision", "preferred_element_type"}
    mc = next(op for op in program.walk() if op.name == "sdy.manual_computation")
    assert mc.results[0].type == TensorType((8,), "f32")  # body (4,) times the manual "x" shards


def test_built_program_evaluates_like_numpy():
    pb = ProgramBuilder()
    f = pb.function()
    x = f.arg((3, 4))
    w = f.arg((4, 2))
    y = f.op("jax.dot_general", [x, w], {"lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]})
    y = f.op("jax.tanh", [y], {"accuracy": None})
    k, v = f.optimization_barrier(f.constant(np.int32(0)), y)
    out = f.while_loop([k, v], lambda bb, i, t: bb.op("jax.lt", [i, bb.constant(np.int32(2))]),
                       lambda bb, i, t: [bb.op("jax.add", [i, bb.constant(np.int32(1))]), bb.op("jax.exp", [t])])
    f.ret(out[1])
    program = pb.build()
    xv = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    wv = np.linspace(0, 1, 8, dtype=np.float32).reshape(4, 2)
    want = np.exp(np.exp(np.tanh(xv @ wv)))
    np.testing.assert_allclose(np.asarray(evaluate(program, xv, wv)[0]), want, rtol=1e-5)
    again = parse(print_program(program), strict_ops=False)
    np.testing.assert_allclose(np.asarray(evaluate(again, xv, wv)[0]), want, rtol=1e-5)


def test_calls_between_built_functions():
    pb = ProgramBuilder()
    g = pb.function("double", visibility="private")
    a = g.arg((4,))
    g.ret(g.op("jax.mul", [a, g.constant(np.float32(2.0))]))
    f = pb.function("main")
    x = f.arg((4,))
    f.ret(f.call("double", [f.call("double", [x])]))
    program = pb.build()
    np.testing.assert_array_equal(np.asarray(evaluate(program, np.arange(4, dtype=np.float32))[0]),
                                  np.arange(4) * 4.0)
    with pytest.raises(ValueError, match="no function @nope"):
        f.call("nope", [x])


def test_elementwise_and_paddle_ops():
    pb = ProgramBuilder()
    f = pb.function()
    x = f.arg((8, 1))
    y = f.arg((1, 6))
    s = f.op("add", [x, y])
    assert s.type == TensorType((8, 6), "f32")
    with pytest.raises(ValueError, match="do not broadcast"):
        f.op("multiply", [f.arg((3,)), f.arg((4,))])
    with pytest.raises(TypeError, match="op 'matmul': give result_types"):
        f.op("matmul", [x, y])
    m = f.op("matmul", [x, y], {"trans_x": False, "trans_y": False}, result_types=[((8, 6), "f32")])
    assert m.type == TensorType((8, 6), "f32")


@pytest.mark.parametrize("call, error, match", [
    (lambda f, x: f.propagation_barrier(x, "SIDEWAYS"), ValueError, "allowed_direction.*SIDEWAYS"),
    (lambda f, x: f.sharding_group(x, "0"), TypeError, "group_id"),
    (lambda f, x: f.sharding_constraint(x, '<@m, [{"x"}'), ShardingParseError, "column"),
    (lambda f, x: f.sharding_constraint(x, 3), TypeError, "TensorSharding"),
    (lambda f, x: f.op("jax.add", [x, 1.0]), TypeError, "operand 1"),
    (lambda f, x: f.op("jax.dot_general", [x, x], {"lhs_contracting_dimensions": [1],
                                                    "rhs_contracting_dimensions": [1, 0]}), ValueError,
     "jax.dot_general"),
    (lambda f, x: f.manual_computation([x], [], [], ["x"], lambda bb: []), ValueError, "0 in_shardings for 1"),
    (lambda f, x: f.manual_computation([x], ['<@m, [{"x"}, {}]>'], [], ["x"], lambda bb, t: [t]), ValueError,
     "returns 1 values for 0"),
    (lambda f, x: f.manual_computation([f.arg((3, 4))], ['<@m, [{"x"}, {}]>'], [], ["x"], lambda bb, t: []),
     ValueError, "dim 0 of size 3 is not divisible"),
    (lambda f, x: f.case(f.constant(np.int32(0)), []), ValueError, "at least one branch"),
])
def test_builder_rejects_bad_calls(call, error, match):
    pb = ProgramBuilder()
    pb.mesh("m", {"x": 2})
    f = pb.function()
    x = f.arg((4, 4))
    with pytest.raises(error, match=match):
        call(f, x)


def test_program_level_errors():
    pb = ProgramBuilder()
    pb.mesh("m", "<[\"x\"=4]>")
    assert pb.program.meshes["m"] == Mesh({"x": 4})
    with pytest.raises(ValueError, match="already declared"):
        pb.mesh("m", {"y": 2})
    with pytest.raises(ValueError, match="identifier"):
        pb.mesh("1bad", {"y": 2})
    f = pb.function()
    f.arg((2,))
    with pytest.raises(ValueError, match="no return"):
        pb.build()
    f.ret()
    with pytest.raises(ValueError, match="already returned"):
        f.ret()


# -- manual computation shapes, by property -------------------------------------------------------
AXES = [("a", 2), ("b", 3), ("c", 2)]


@st.composite
def manual_cases(draw):
    manual = [n for n, _ in AXES if draw(st.booleans())] or ["a"]
    rank = draw(st.integers(1, 3))
    dims, used = [[] for _ in range(rank)], set()
    for name, _ in AXES:
        if name in manual and draw(st.booleans()):
            dims[draw(st.integers(0, rank - 1))].append(name)
            used.add(name)
    local = [draw(st.integers(1, 3)) for _ in range(rank)]
    return manual, dims, used, local


@settings(max_examples=40, deadline=None)
@given(manual_cases())
def test_manual_computation_body_is_local_and_results_global(case):
    manual, dims, used, local = case
    sizes = dict(AXES)
    glob = [n * int(np.prod([sizes[a] for a in d])) for n, d in zip(local, dims)]
    pb = ProgramBuilder()
    pb.mesh("m", AXES)
    f = pb.function()
    x = f.arg(tuple(glob))
    sh = TensorSharding("m", [DimSharding(d) for d in dims], replicated=[a for a in manual if a not in used])
    (y,) = f.manual_computation([x], [sh], [sh], manual, lambda bb, t: [bb.op("jax.neg", [t])])
    f.ret(y)
    program = pb.build()  # verify_program checks invariants 1-4 on what the builder made
    mc = program.main.body.ops[0]
    assert mc.regions[0].block.args[0].type.shape == tuple(local)
    assert y.type.shape == tuple(glob)
    np.testing.assert_array_equal(sh.local_shape(glob, program.meshes), local)


def test_rule_ops_without_a_jax_primitive_are_not_evaluated():
    pb = ProgramBuilder()
    f = pb.function()
    x = f.arg((2, 2))
    f.ret(f.op("matmul", [x, x], {"trans_x": False}, result_types=[(2, 2)]))
    with pytest.raises(EvaluateError, match="no evaluator for op 'matmul'"):
        evaluate(pb.build(), np.ones((2, 2), np.float32))


def test_elementwise_inference_names_are_known_ops():
    from spmdkit.ir.builder import ELEMENTWISE
    from spmdkit.ir.verify import op_name_known
    assert all(op_name_known(n) for n in ELEMENTWISE)
