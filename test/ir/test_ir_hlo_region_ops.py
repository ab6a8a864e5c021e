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


def test_sort_of_two_operands_binds_and_keeps_the_sort_dim_whole():
    program = lowered(lambda x, y: jax.lax.sort((x, y), dimension=1, num_keys=1),
                      [np.zeros((4, 8), np.float32)] * 2, ['[{"a"}, {"b"}]', '[{?}, {?}]'])
    sort = the_op(program, "stablehlo.sort")
    call = bind(sort)
    assert call.rule_name == "stablehlo.sort" and call.attrs["dimension"] == 1
    out = propagate_program(program)
    assert out.opaque == []
    # "a" on the batch dim reaches the other operand and both results; "b" on the sort dim does not
    for v in list(sort.operands[1:]) + list(sort.results):
        assert sharding_of(v).endswith('[{"a", ?}, {?}]>'), sharding_of(v)


def test_jnp_sort_propagates():
    program = lowered(lambda x: jnp.sort(x, axis=0), [np.zeros((8, 6), np.float32)], ['[{"a"}, {"b"}]'])
    out = propagate_program(program)
    assert out.opaque == []
    assert sharding_of(the_op(program, "stablehlo.sort").results[0]).endswith('[{?}, {"b", ?}]>')


def test_jax_import_sort_binds_to_the_same_rule():
    from spmdkit.ir import import_jax
    program = import_jax(lambda x, y: jax.lax.sort((x, y), dimension=0, num_keys=2),
                         np.zeros((4, 3), np.float32), np.zeros((4, 3), np.float32))
    call = bind(the_op(program, "jax.sort"))
    assert call.rule().op == "jax.sort" and len(call.inputs[0]) == 2
    assert call.attrs == {"dimension": 0, "is_stable": True, "num_keys": 2}
