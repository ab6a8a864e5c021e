"""StableHLO that jax lowers today, with ops that have regions or window attributes (variadic
reduce, ...): each binds to its registry rule, and spmdkit.propagate carries shardings through it
(the op is not opaque)."""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from spmdkit.ir import bind, parse
from spmdkit.propagation.from_ir import propagate_program


def lowered(fn, args, shardings):
    """jax's StableHLO for fn(*args), with mesh a=2, b=2 and `shardings` (text per dim list) on
    main's arguments."""
    text = jax.jit(fn).lower(*args).as_text()
    for i, (a, dims) in enumerate(zip(args, shardings)):
        t = "tensor<" + "".join(f"{n}x" for n in a.shape) + "f32>"
        text = text.replace(f"@main(%arg{i}: {t}" if i == 0 else f", %arg{i}: {t}",
                            (f"@main(%arg{i}: {t}" if i == 0 else f", %arg{i}: {t}")
                            + f" {{sdy.sharding = #sdy.sharding<@mesh, {dims}>}}", 1)
    text = re.sub(r"(module @\S+ attributes \{[^\n]*\{)\n", r'\1\n  sdy.mesh @mesh = <["a"=2, "b"=2]>\n', text, count=1)
    return parse(text)


def the_op(program, name):
    ops = [op for op in program.walk() if op.name == name]
    assert len(ops) == 1, [op.name for op in program.walk()]
    return ops[0]


def sharding_of(value) -> str:
    return str(value.sharding)


@pytest.mark.parametrize("fn,body", [(jnp.argmax, "argmax"), (jnp.argmin, "argmin")])
def test_argmax_lowering_binds_the_variadic_reduce(fn, body):
    program = lowered(lambda x: fn(x, axis=1), [np.zeros((4, 8), np.float32)], ['[{"a"}, {"b"}]'])
    call = bind(the_op(program, "stablehlo.reduce"))
    assert call.rule_name == "stablehlo.reduce-variadic"
    assert call.attrs == {"dimensions": [1], "body": body}
    assert [len(x) for x in call.inputs] == [2, 2]


def test_argmax_propagates_through_the_variadic_reduce():
    program = lowered(lambda x: jnp.argmax(x, axis=1), [np.zeros((4, 8), np.float32)], ['[{"a"}, {"b"}]'])
    out = propagate_program(program)
    assert out.opaque == []
    red = the_op(program, "stablehlo.reduce")
    # the kept dim carries "a" to both results and back to the index operand (the iota)
    assert sharding_of(red.results[0]).endswith('[{"a", ?}]>') and sharding_of(red.results[1]).endswith('[{"a", ?}]>')
    iota = the_op(program, "stablehlo.iota")
    assert '{"a", ?}, {?}' in sharding_of(iota.results[0])
