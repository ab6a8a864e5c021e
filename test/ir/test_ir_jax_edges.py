"""import_jax edge cases: custom_vjp, checkpoint, jit shardings, literal and pass-through outputs,
unused results, empty and non-float tensors, bf16 constants; each imports, verifies, prints and
evaluates to what JAX computes."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from spmdkit.ir import (EvaluateError, JaxImportError, TensorType, evaluate, import_jax, parse, print_program,
                        verify_program)
from spmdkit.ir.constants import dense_attr, dense_value


def _check(fn, *args, through_text=True):
    program = import_jax(fn, *args)
    verify_program(program)
    if through_text:
        program = parse(print_program(program), strict_ops=False)
        verify_program(program)
    # both sides compiled by XLA, so that fusion decisions (and rounding) are the same
    got = jax.jit(lambda *a: evaluate(program, *a))(*jax.tree_util.tree_leaves(args))
    want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))  # jit: outputs as JAX types them
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    return program


@jax.custom_vjp
def _sin(x):
    return jnp.sin(x)


_sin.defvjp(lambda x: (jnp.sin(x), x), lambda r, g: (g * jnp.cos(r),))


def test_custom_vjp_and_checkpoint_become_calls():
    f = lambda x: jax.checkpoint(lambda t: jnp.tanh(t) * 2.0)(_sin(x))  # noqa: E731
    program = _check(f, jnp.linspace(-1.0, 1.0, 5))
    assert {op.name for op in program.main.body.ops} >= {"func.call"}
    assert len(program.functions) == 3
    # and the gradient (custom rule applied by JAX before import) imports and agrees
    _check(jax.grad(lambda x: f(x).sum()), jnp.linspace(-1.0, 1.0, 5))


def test_jit_shardings_land_on_the_callee():
    mesh = AbstractMesh((2,), ("d",), axis_types=(AxisType.Auto,))
    inner = jax.jit(lambda a: a * 2.0, in_shardings=NamedSharding(mesh, P("d")),
                    out_shardings=NamedSharding(mesh, P(None, "d")))
    program = import_jax(lambda a: inner(a) + 1.0, jax.ShapeDtypeStruct((4, 4), jnp.float32))
    (callee,) = [fn for name, fn in program.functions.items() if name != "main"]
    assert str(callee.args[0].sharding) == '#sdy.sharding<@mesh, [{"d"}, {}]>'
    assert [str(s) for s in callee.result_shardings] == ['#sdy.sharding<@mesh, [{}, {"d"}]>']
    verify_program(program)
    text = print_program(program)
    assert 'func.func private @_lambda_(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>})' \
        in text


def test_literal_passthrough_and_unused_outputs():
    def f(x, n):
        first, _ = jnp.split(x, 2)  # the second result is never used
        return first, x, 3.0, n

    program = _check(f, jnp.arange(6.0), jnp.int32(7))
    assert program.main.body.ops[-1].operands[1] is program.main.args[0]
    assert program.main.result_types[2] == TensorType((), "f32")


def test_integer_bool_and_empty_tensors():
    _check(lambda a, b: (jnp.where(b, a, -a), a.sum(), jnp.zeros((0, 3)) + 1),
           jnp.arange(4, dtype=jnp.int32), jnp.array([True, False, True, False]))


def test_bf16_constants_in_memory_and_scalars_after_text():
    x = jnp.ones((3,), jnp.bfloat16)
    table = jnp.asarray([1.0, 2.5, -3.0], jnp.bfloat16)
    f = lambda v: v * jnp.bfloat16(0.5) + table  # noqa: E731
    _check(f, x, through_text=False)  # the exact raw form decodes any dtype
    _check(lambda v: v * jnp.bfloat16(0.5), x)  # scalars are splats: MLIR reads them back
    program = parse(print_program(import_jax(f, x)), strict_ops=False)
    with pytest.raises(EvaluateError, match="non-splat constant.*bf16"):
        evaluate(program, x)  # MLIR's bindings cannot read a bf16 array printed as decimals


@pytest.mark.parametrize("array", [np.float32(np.nan), np.arange(12, dtype=np.int16).reshape(3, 4),
                                   np.array([[True], [False]]), np.zeros((0, 2), np.float64),
                                   np.array([-0.0, np.inf], np.float32), np.uint8(255),
                                   np.array([1 + 2j, -3.5j], np.complex64), np.complex128(np.nan - 1j)])
def test_dense_attr_round_trips_exactly(array):
    array = np.asarray(array)
    name = {"float32": "f32", "int16": "i16", "bool": "i1", "float64": "f64", "uint8": "ui8",
            "complex64": "complex<f32>", "complex128": "complex<f64>"}[array.dtype.name]
    back = dense_value(dense_attr(array), TensorType(array.shape, name), array.dtype)
    assert back.dtype == array.dtype and back.shape == array.shape
    assert back.tobytes() == array.tobytes()


def test_evaluate_rejects_wrong_arguments():
    program = import_jax(lambda a: a + 1.0, jnp.ones((2,)))
    with pytest.raises(EvaluateError, match="takes 1 arguments, got 2"):
        evaluate(program, jnp.ones((2,)), jnp.ones((2,)))
    with pytest.raises(EvaluateError, match="argument 0: got tensor<3xf32>, the value's type is tensor<2xf32>"):
        evaluate(program, jnp.ones((3,)))
    with pytest.raises(EvaluateError, match="no function @nope"):
        evaluate(program, jnp.ones((2,)), function="nope")


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_becomes_a_while_loop(reverse):
    def f(c, xs, w):
        return jax.lax.scan(lambda c, a: (jnp.tanh(c * a + w), (c, a * 2.0)), c, xs, reverse=reverse)

    args = (jnp.ones(2), jnp.arange(6.0).reshape(3, 2) / 5, jnp.float32(0.3))
    program = _check(f, *args)
    names = {op.name for op in program.walk()}
    assert "stablehlo.while" in names and "jax.dynamic_update_slice" in names and "jax.scan" not in names


def test_gradient_through_scan_imports():
    def loss(w, xs):
        return jax.lax.scan(lambda c, a: (c * w + a, None), jnp.zeros(2), xs)[0].sum()
    _check(jax.grad(loss), jnp.float32(0.9), jnp.ones((4, 2)))


# -- argument shardings, by property: they land on the arguments and survive print -> parse -------
@st.composite
def _arg_shardings(draw):
    from spmdkit.sharding import DimSharding, TensorSharding
    rank = draw(st.integers(1, 3))
    axes = draw(st.permutations(["x", "y", "z"]))
    dims = [[] for _ in range(rank)]
    for a in axes[: draw(st.integers(0, 3))]:
        dims[draw(st.integers(0, rank - 1))].append(a)
    closed = [draw(st.booleans()) for _ in range(rank)]
    shape = tuple(draw(st.sampled_from([2, 4, 8])) for _ in range(rank))
    return shape, TensorSharding("m", [DimSharding(d, is_closed=c) for d, c in zip(dims, closed)])


@settings(max_examples=25, deadline=None)
@given(case=_arg_shardings())
def test_arg_shardings_survive_print_and_parse(case):
    from spmdkit.sharding import Mesh
    shape, sharding = case
    program = import_jax(lambda a: jnp.sin(a), jax.ShapeDtypeStruct(shape, jnp.float32), arg_shardings=[sharding],
                         meshes={"m": Mesh({"x": 2, "y": 2, "z": 2})})
    assert program.main.args[0].sharding == sharding
    again = parse(print_program(program), strict_ops=False)
    assert again.main.args[0].sharding == sharding
    verify_program(again)


def test_result_shardings_land_on_the_results():
    from spmdkit.sharding import Mesh
    program = import_jax(lambda a: (a * 2.0, {"s": a.sum()}), jnp.ones((4, 2)), meshes={"m": Mesh({"x": 2})},
                         result_shardings=('#sdy.sharding<@m, [{"x"}, {}]>', {"s": None}))
    assert [str(s) if s else None for s in program.main.result_shardings] == ['#sdy.sharding<@m, [{"x"}, {}]>', None]
    assert '-> (tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@m, [{"x"}, {}]>}, tensor<f32>)' in print_program(program)
    with pytest.raises(JaxImportError, match="result_shardings has 1 leaves; the function has 2 array results"):
        import_jax(lambda a: (a, a), jnp.ones(2), result_shardings=[[None]])
    with pytest.raises(JaxImportError, match="result 0.*rank"):
        import_jax(lambda a: a, jnp.ones(2), meshes={"m": Mesh({"x": 2})},
                   result_shardings=['#sdy.sharding<@m, [{"x"}, {}]>'])


def test_switch_and_while_with_constants_in_both_regions():
    def f(i, x, limit):
        y = jax.lax.switch(i, [lambda v: v + 1.0, lambda v: v * 3.0, lambda v: jnp.sin(v)], x)
        n, z = jax.lax.while_loop(lambda c: (c[0] < 5) & (c[1].sum() < limit),  # cond reads `limit`
                                  lambda c: (c[0] + 1, c[1] * 1.5 + x), (0, y))  # body reads `x`
        return n, z

    x = jnp.linspace(0.0, 1.0, 3)
    for i in range(3):
        program = _check(f, jnp.int32(i), x, jnp.float32(20.0))
    (case,) = [op for op in program.walk() if op.name == "stablehlo.case"]
    assert len(case.regions) == 3
    (loop,) = [op for op in program.walk() if op.name == "stablehlo.while"]
    assert len(loop.operands) == 2  # only the carried values; the constants are read from outside


def test_debug_prints_are_dropped_with_a_warning_and_value_callbacks_refused():
    def f(x):
        jax.debug.print("x={x}", x=x.sum())
        jax.debug.callback(lambda v: None, x)
        return x * 2
    x = jnp.arange(4.0)
    with pytest.warns(UserWarning, match="debug.print.*dropped") as caught:
        program = import_jax(f, x, inline_calls=True)
    assert len(caught) == 2
    assert not any("debug" in op.name or "callback" in op.name for op in program.walk())
    np.testing.assert_array_equal(evaluate(program, x)[0], f(x))
    g = lambda x: jax.pure_callback(lambda v: np.asarray(v) + 1, jax.ShapeDtypeStruct(x.shape, x.dtype), x)  # noqa: E731
    with pytest.raises(JaxImportError, match="pure_callback.*computes its results in Python"):
        import_jax(g, x)
