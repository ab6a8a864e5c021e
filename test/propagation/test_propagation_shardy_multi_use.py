"""Shardy's op priorities defer propagation into a value with several uses to a later step
(op_priority_propagation.mlir: `defer_forward_propagation_for_multi_use_ops`,
`..._dynamic_slice`, `defer_backwards_propagation_for_op_with_multi_use_operand`): forward
through an op whose result has several uses, backward through an op whose operand has. Our own
programs, checked value by value against the live Shardy (jaxlib's), and on the value that the
deferral decides."""
import pytest

live = pytest.importorskip("live_shardy_values")

MESH = 'sdy.mesh @m = <["x"=2, "y"=2]>\n'
# %0 has two users: the split of %a reaches it first, but the two users take the results'
# split (dim 1) before %0 may move it forward
FAN_OUT = MESH + """func.func @main(%a: tensor<16x8xf32> {{sdy.sharding = #sdy.sharding<@m, [{{"y"}}, {{}}]>}}, %i: tensor<i32>)
    -> (tensor<{shape}xf32> {{sdy.sharding = #sdy.sharding<@m, [{{}}, {{"y"}}]>}}, tensor<{shape}xf32> {{sdy.sharding = #sdy.sharding<@m, [{{}}, {{"y"}}]>}}) {{
  %0 = {source}
  %1 = stablehlo.negate %0 : tensor<{shape}xf32>
  %2 = stablehlo.multiply %0, %0 : tensor<{shape}xf32>
  %3 = stablehlo.sqrt %1 : tensor<{shape}xf32>
  %4 = stablehlo.sqrt %2 : tensor<{shape}xf32>
  return %3, %4 : tensor<{shape}xf32>, tensor<{shape}xf32>
}}
"""
SOURCES = {
    "elementwise": ("stablehlo.exponential %a : tensor<16x8xf32>", "16x8"),
    "dynamic_slice": ("stablehlo.dynamic_slice %a, %i, %i, sizes = [16, 4] : "
                      "(tensor<16x8xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>", "16x4"),
}


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_forward_into_a_multi_use_value_waits(source):
    op, shape = SOURCES[source]
    text = FAN_OUT.format(source=op, shape=shape)
    compared, differ = live.differences(text, live.USER_PRIORITY)
    assert compared >= 8 and differ == [], differ
    ops = live.ours(text).functions["main"].body.ops
    assert str(ops[0].results[0].sharding) == '#sdy.sharding<@m, [{"y", ?}, {?}]>'
    for user in ops[1:3]:  # not the source's dim-0 split: the results' dim-1 split came first
        assert str(user.results[0].sharding) == '#sdy.sharding<@m, [{?}, {"y", ?}]>'


def test_backward_into_a_multi_use_operand_waits():
    # %a has two users, each asked for another dim; the tanh (first in order, its request came
    # through the exponential) wins once backward propagation into %a is allowed
    text = MESH + """func.func @main(%a: tensor<16x8xf32>)
    -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"x"}, {}]>}, tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {"x"}]>}) {
  %0 = stablehlo.tanh %a : tensor<16x8xf32>
  %1 = stablehlo.negate %a : tensor<16x8xf32>
  %2 = stablehlo.exponential %0 : tensor<16x8xf32>
  return %2, %1 : tensor<16x8xf32>, tensor<16x8xf32>
}
"""
    compared, differ = live.differences(text, live.USER_PRIORITY)
    assert compared >= 6 and differ == [], differ
    fn = live.ours(text).functions["main"]
    assert str(fn.args[0].sharding) == '#sdy.sharding<@m, [{"x", ?}, {?}]>'
    assert str(fn.body.ops[1].results[0].sharding) == '#sdy.sharding<@m, [{?}, {"x", ?}]>'
