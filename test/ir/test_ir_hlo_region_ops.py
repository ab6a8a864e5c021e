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


def test_cumsum_lowering_is_a_reduce_window_that_keeps_the_scanned_dim_whole():
    program = lowered(lambda x: jnp.cumsum(x, axis=1), [np.zeros((4, 8), np.float32)], ['[{"a"}, {"b"}]'])
    rw = the_op(program, "stablehlo.reduce_window")
    call = bind(rw)
    assert call.attrs["padding"] == [0, 0, 7, 0] and call.attrs["window_dimensions"] == [1, 8]
    assert call.attrs["body"] == "sum"
    out = propagate_program(program)
    assert out.opaque == []
    # the scanned dim is a permutation factor (Shardy's): propagation carries "b" over it as
    # Shardy does; the rule itself computes it whole (test_hlo_region_rules.py)
    assert sharding_of(rw.results[0]).endswith('[{"a", ?}, {"b", ?}]>'), sharding_of(rw.results[0])
    (ops, _), _ = call.infer_forward(lambda v: _spec(v, [0, 1] if v is rw.operands[0] else None))
    assert ops[0].dims_mapping == [0, -1]


def test_max_pool_propagates_the_batch_and_channel_dims():
    pool = lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")  # noqa: E731
    program = lowered(pool, [np.zeros((4, 8, 8, 6), np.float32)], ['[{"a"}, {"b"}, {}, {}]'])
    assert bind(the_op(program, "stablehlo.reduce_window")).attrs["body"] == "max"
    out = propagate_program(program)
    assert out.opaque == []
    assert sharding_of(the_op(program, "stablehlo.reduce_window").results[0]).endswith('[{"a", ?}, {"b", ?}, {?}, {?}]>')


@pytest.mark.parametrize("pick,select", [(jax.lax.max, "ge"), (jax.lax.min, "le")])
def test_max_pool_grad_binds_select_and_scatter_and_propagates(pick, select):
    # the pool's gradient is StableHLO's select_and_scatter (operand, source, init value; select
    # and scatter regions): padding flattened, the select region named, the pooled dims whole
    # (permutation factors shared with the windowed source), batch and channels passed through
    init = -jnp.inf if pick is jax.lax.max else jnp.inf
    grad = jax.grad(lambda x: jax.lax.reduce_window(x, init, pick, (1, 2, 2, 1), (1, 2, 2, 1), "VALID").sum())
    program = lowered(grad, [np.zeros((4, 8, 8, 6), np.float32)], ['[{"a"}, {}, {}, {"b"}]'])
    op = the_op(program, "stablehlo.select_and_scatter")
    call = bind(op)
    assert call.attrs == {"window_dimensions": [1, 2, 2, 1], "window_strides": [1, 2, 2, 1], "padding": [0] * 8,
                          "select": select}
    assert str(call.factors(_spec)) == "([i, j, k, l], [i, j, k, l], [])->([i, j, k, l]) {i=4, j=8, k=8, l=6} " \
                                       "permutation={j, k}"
    assert propagate_program(program).opaque == []
    assert sharding_of(op.results[0]).endswith('[{"a", ?}, {?}, {?}, {"b", ?}]>')


def test_jax_import_reduce_window_sum_binds_with_flat_padding():
    from spmdkit.ir import import_jax
    f = lambda x: jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 3), (1, 1), ((0, 0), (1, 1)))  # noqa: E731
    program = import_jax(f, np.zeros((4, 8), np.float32))
    call = bind(the_op(program, "jax.reduce_window_sum"))
    assert call.attrs["padding"] == [0, 0, 1, 1]
    table = call.factors(lambda v: _spec(v))
    assert str(table) == "([i, j])->([i, j]) {i=4, j=8} permutation={j}"


def _spec(value, mapping=None):
    from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr
    attr = TensorDistAttr()
    attr.process_mesh = ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])
    attr.dims_mapping = mapping or [-1] * len(value.type.shape)
    return DistTensorSpec(list(value.type.shape), attr)


def conv_nhwc(x, w):
    return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def test_convolution_lowering_binds_and_propagates_batch_and_features():
    x, w = np.zeros((4, 8, 8, 6), np.float32), np.zeros((3, 3, 6, 10), np.float32)
    program = lowered(conv_nhwc, [x, w], ['[{"a"}, {}, {}, {}]', '[{}, {}, {}, {"b"}]'])
    op = the_op(program, "stablehlo.convolution")
    call = bind(op)
    assert call.attrs["lhs_spec"] == [0, 3, 1, 2] and call.attrs["rhs_spec"] == [3, 2, 0, 1]
    assert call.attrs["out_spec"] == [0, 3, 1, 2] and call.attrs["padding"] == [1, 1, 1, 1]
    out = propagate_program(program)
    assert out.opaque == []
    assert sharding_of(op.results[0]).endswith('[{"a", ?}, {?}, {?}, {"b", ?}]>'), sharding_of(op.results[0])


def test_jax_import_conv_binds_to_the_same_rule():
    from spmdkit.ir import import_jax
    program = import_jax(conv_nhwc, np.zeros((4, 8, 8, 6), np.float32), np.zeros((3, 3, 6, 10), np.float32))
    call = bind(the_op(program, "jax.conv_general_dilated"))
    assert call.attrs["padding"] == [1, 1, 1, 1] and call.attrs["lhs_spec"] == [0, 3, 1, 2]
    table = call.factors(lambda v: _spec(v))
    assert "reduction=" in str(table) and "permutation=" in str(table)


@pytest.mark.parametrize("fn,kind,lengths", [(jnp.fft.fft, 0, [16]), (jnp.fft.ifft2, 1, [4, 16]),
                                             (jnp.fft.rfft, 2, [16])])
def test_fft_lowering_binds_to_jax_fft_and_keeps_the_transformed_dims_whole(fn, kind, lengths):
    program = lowered(lambda x: jnp.abs(fn(x)), [np.zeros((8, 4, 16), np.float32)], ['[{"a"}, {"b"}, {}]'])
    op = the_op(program, "stablehlo.fft")
    call = bind(op)
    assert call.rule_name == "stablehlo.fft" and call.attrs == {"fft_type": kind, "fft_lengths": lengths}
    # the transformed dims are whole (permutation factors: rfft resizes the last), the others pass
    whole = "j, k" if len(lengths) == 2 else "k"
    assert str(call.factors(_spec)).endswith(f"permutation={{{whole}}}")
    assert propagate_program(program).opaque == []
    # as Shardy's, propagation carries a split across a permutation factor (the rule asks it whole)
    assert sharding_of(op.results[0]).endswith('[{"a", ?}, {"b", ?}, {?}]>')
