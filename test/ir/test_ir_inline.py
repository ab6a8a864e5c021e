"""spmdkit.ir.inline_calls: a program with func.call in it computes the same after inlining, has
no calls or unused private functions left, and prints as MLIR that parses again."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from spmdkit.ir import IRError, evaluate, import_jax, inline_calls, parse, print_program


def _step(x, w):
    h = jnp.tril(jnp.tanh(x @ w))                        # tril: a jitted jnp helper, a call
    return jax.nn.log_softmax(jnp.where(h > 0, h, -h)), jax.jit(lambda a: a * 2.0)(x).sum()


def _calls(program):
    return [op for op in program.walk() if op.name == "func.call"]


def test_inlined_program_computes_the_same():
    x = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32)
    program = import_jax(_step, x, w)
    assert _calls(program) and len(program.functions) > 1
    want = evaluate(program, x, w)
    inline_calls(program)
    assert not _calls(program) and list(program.functions) == ["main"]
    for got, ref in zip(evaluate(program, x, w), want):
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-6)
    again = parse(print_program(program), strict_ops=False)  # valid text: the SSA names were renumbered
    assert not _calls(again) and len(again.main.body.ops) == len(program.main.body.ops)


def test_a_callee_called_twice_is_copied_twice():
    program = inline_calls(parse(TWICE))
    adds = [op for op in program.main.body.ops if op.name == "stablehlo.add"]
    assert len(adds) == 2 and adds[1].operands[0] is adds[0].results[0]
    assert program.main.body.terminator.operands[0] is adds[1].results[0]
    assert list(program.functions) == ["main"]


TWICE = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @twice(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @twice(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @twice(%y: tensor<4xf32>) -> tensor<4xf32> {
  %z = stablehlo.add %y, %y : tensor<4xf32>
  return %z : tensor<4xf32>
}
"""


@pytest.mark.parametrize("callee, words", [("missing", "unknown function @missing"),
                                            ("main", "recursive call of @main")])
def test_calls_that_cannot_be_inlined_are_errors(callee, words):
    program = parse(TWICE)
    program.main.body.ops[0].attrs["callee"] = callee  # the parser refuses both; built programs may not
    with pytest.raises(IRError, match=words):
        inline_calls(program)
