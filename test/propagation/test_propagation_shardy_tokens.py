"""Tokens and dynamically shaped tensors: Shardy gives them no sharding and propagates around
them (basic_propagation_token.mlir, basic_propagation.mlir's `token_func_output_skipped`,
`dynamic_shaped_func_output_skipped`, the data-flow-edge tests with tokens). Our own programs,
checked value by value against the live Shardy (jaxlib's); the printed program keeps the types."""
import pytest

from spmdkit import ir

live = pytest.importorskip("live_shardy_values")

SEND = """
sdy.mesh @m = <["x"=2, "y"=2]>
func.func @main(%t: !stablehlo.token, %a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"x"}, {}]>},
                %d: tensor<?x4xf32>) -> (!stablehlo.token, tensor<8x8xf32>, tensor<?x4xf32>) {
  %t2 = stablehlo.after_all %t : !stablehlo.token
  %0 = stablehlo.negate %a : tensor<8x8xf32>
  %1 = "stablehlo.send"(%0, %t2) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>,
      is_host_transfer = true} : (tensor<8x8xf32>, !stablehlo.token) -> !stablehlo.token
  %2 = stablehlo.abs %0 : tensor<8x8xf32>
  return %1, %2, %d : !stablehlo.token, tensor<8x8xf32>, tensor<?x4xf32>
}
"""

WHILE = """
sdy.mesh @m = <["x"=2, "y"=2]>
func.func @main(%t: !stablehlo.token, %a: tensor<8x8xf32>) -> (!stablehlo.token, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {"y"}]>}) {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %n = stablehlo.constant dense<4> : tensor<i32>
  %0:3 = stablehlo.while(%it = %t, %ia = %a, %i = %c) : !stablehlo.token, tensor<8x8xf32>, tensor<i32>
    cond {
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %e = stablehlo.exponential %ia : tensor<8x8xf32>
    %t3 = stablehlo.after_all %it : !stablehlo.token
    stablehlo.return %t3, %e, %i : !stablehlo.token, tensor<8x8xf32>, tensor<i32>
  }
  return %0#0, %0#1 : !stablehlo.token, tensor<8x8xf32>
}
"""


@pytest.mark.parametrize("text", [SEND, WHILE], ids=["send", "while"])
def test_tokens_and_dynamic_shapes_stay_unsharded(text):
    # the while's edges as Shardy's pipeline adds them around its propagation
    passes = live.pipeline([("sdy-add-data-flow-edges", ""), ("sdy-user-priority-propagate", ""),
                            ("sdy-sink-data-flow-edges", "")])
    compared, differ = live.differences(text, passes)
    assert compared >= 5 and differ == [], differ
    program = live.ours(text)
    fn = program.functions["main"]
    printed = ir.print_program(program)
    assert "!stablehlo.token" in printed and fn.args[0].sharding is None
    tensors = [v for op in fn.walk() for v in op.results if str(v.type).endswith("8x8xf32>")]
    assert tensors and all(v.sharding is not None for v in tensors)  # the tensors around them do get one
