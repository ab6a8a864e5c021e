"""Aggressive propagation on a data-flow edge whose sources conflict (propagation_pipeline.mlir's
`case_multiple_dim_most_compatible`): Shardy prefers the most sharded factor only on elementwise
ops (by op trait); an edge takes its sources in order, so the first branch's split wins. Our own
programs, checked value by value against the live Shardy (jaxlib's), run as its pipeline runs it
(edges added, user-priority propagation, edges sunk)."""
import pytest

live = pytest.importorskip("live_shardy_values")

PASSES = [("sdy-add-data-flow-edges", ""), ("sdy-user-priority-propagate", ""), ("sdy-sink-data-flow-edges", "")]
HEAD = """sdy.mesh @m = <["x"=2, "y"=2]>
func.func @main(%p: tensor<i32>, %u: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@m, [{?}, {"y", ?}]>},
                %v: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"x", "y", ?}, {?}]>}) -> tensor<16x8xf32> {
"""
CASE = HEAD + """  %0 = "stablehlo.case"(%p) ({
    stablehlo.return %u : tensor<16x8xf32>
  }, {
    stablehlo.return %v : tensor<16x8xf32>
  }) : (tensor<i32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
"""
ADD = HEAD + """  %0 = stablehlo.add %u, %v : tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
"""


@pytest.mark.parametrize("text, expected", [
    (CASE, '[{"x", ?}, {"y", ?}]'),     # the edge: the first source's "y" (dim 1) first
    (ADD, '[{"x", "y", ?}, {?}]'),      # elementwise: the most sharded factor first
], ids=["case_edge", "elementwise_add"])
def test_conflicting_sources(text, expected):
    compared, differ = live.differences(text, live.pipeline(PASSES))
    assert compared >= 4 and differ == [], differ
    ops = live.ours(text).functions["main"].body.ops
    assert str(ops[0].results[0].sharding) == f"#sdy.sharding<@m, {expected}>"
