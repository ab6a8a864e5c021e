"""Shardy's aggressive_propagation.mlir scenarios (sdy-aggressive-propagate: no op or user
priorities), re-expressed as graphs. Each test names the Shardy function it mirrors."""
from prop_helpers import BATCH_DOT, DOT, DOT_T, dot, ew, expect, graph

AGGRESSIVE = dict(aggressive=True, op_priority=False, user_priority=False)


def test_no_conflict():
    g = graph(a=2, b=2)
    x = g.value([8, 8], '[{"a"}, {"b"}]')
    y = g.value([8, 8])
    w = g.value([8, 16])
    s = ew(g, x, y)
    d = dot(g, s, w)
    r = g.func_result(d)
    g.propagate(**AGGRESSIVE)
    expect(g, {y: '[{"a", ?}, {"b", ?}]', w: '[{"b", ?}, {?}]', s: '[{"a", ?}, {"b", ?}]',
               d: '[{"a", ?}, {?}]', r: '[{"a", ?}, {?}]'})


def test_fake_conflict_between_two_non_contracting_dims():
    g = graph(a=2, b=2)
    x = g.value([256, 512], '[{"a", ?}, {?}]')
    y = g.value([128, 512])
    d = dot(g, x, y, DOT_T, out_sharding='[{?}, {"a", ?}]')
    r = g.func_result(d)
    g.propagate(**AGGRESSIVE)
    expect(g, {x: '[{"a", ?}, {?}]', y: '[{"a", ?}, {?}]', d: '[{?}, {"a", ?}]', r: '[{?}, {"a", ?}]'})


def test_fake_conflict_between_two_non_contracting_dims_basic_leaves_it():
    # The point of the Shardy scenario: basic propagation alone does not resolve it.
    g = graph(a=2, b=2)
    x = g.value([256, 512], '[{"a", ?}, {?}]')
    y = g.value([128, 512])
    d = dot(g, x, y, DOT_T, out_sharding='[{?}, {"a", ?}]')
    g.propagate(aggressive=False, op_priority=False, user_priority=False)
    expect(g, {y: '[{?}, {?}]', d: '[{?}, {"a", ?}]'})


def test_fake_conflict_between_contracting_and_non_contracting_dims():
    g = graph(a=2, b=2, c=2)
    x = g.value([256, 512], '[{"a"}, {"b", "c"}]')
    y = g.value([128, 512], '[{"c", "b"}, {"a"}]')
    d = dot(g, x, y, DOT_T)
    r = g.func_result(d)
    g.propagate(**AGGRESSIVE)
    expect(g, {d: '[{"a", ?}, {"c", "b", ?}]', r: '[{"a", ?}, {"c", "b", ?}]'})


def test_fake_conflict_closed_dims():
    g = graph(a=2, b=2, c=2)
    x = g.value([8, 8], '[{"a", ?}, {"b"}]')
    y = g.value([8, 8], '[{}, {"b", "c", ?}]')
    s = ew(g, x, y)
    g.propagate(**AGGRESSIVE)
    expect(g, {x: '[{"a", ?}, {"b"}]', y: '[{}, {"b", "c", ?}]', s: '[{"a", ?}, {"b", "c", ?}]'})


def test_real_conflict_within_a_factor():
    g = graph(a=2, b=2, c=2)
    x = g.value([8, 8], '[{"a", ?}, {}]')
    y = g.value([8, 8], '[{"b", ?}, {}]')
    s = ew(g, x, y)
    g.propagate(**AGGRESSIVE)
    expect(g, {s: '[{?}, {?}]'})


def test_real_and_fake_conflicts():
    g = graph(a=2, b=2, c=2)
    x = g.value([8, 8], '[{"a", ?}, {?}]')
    y = g.value([8, 8], '[{"b", ?}, {"a", ?}]')
    s = ew(g, x, y)
    g.propagate(**AGGRESSIVE)
    expect(g, {x: '[{"a", ?}, {?}]', y: '[{"b", ?}, {"a", ?}]', s: '[{?}, {"a", ?}]'})


def test_empty_mesh_replaced_closed_dim_respected():
    g = graph(a=2, b=2)
    g.mesh("empty_mesh")
    x = g.value([8, 8], '[{"a"}, {"b"}]', mesh="mesh")
    y = g.value([8, 8], '[{?}, {}]', mesh="empty_mesh")
    s = ew(g, x, y)
    g.propagate(**AGGRESSIVE)
    expect(g, {y: '[{"a", ?}, {}]', s: '[{"a", ?}, {"b", ?}]'})
    assert g.mesh_of(y) == "mesh"


def test_real_conflict_across_factors_same_tensors_size():
    g = graph(a=2, b=2, c=2)
    x = g.value([8, 8], '[{"a"}, {?}]')
    y = g.value([8, 8], '[{?}, {"a"}]')
    s = ew(g, x, y)
    g.propagate(**AGGRESSIVE)
    expect(g, {x: '[{"a"}, {?}]', y: '[{?}, {"a"}]', s: '[{"a", ?}, {?}]'})


def test_real_conflict_across_factors_diff_tensors_size():
    g = graph(a=2, b=2, c=2)
    x = g.value([8, 4], '[{"a", "b"}, {?}]')
    y = g.value([4, 16], '[{?}, {"a", "c"}]')
    d = dot(g, x, y, DOT)
    g.propagate(**AGGRESSIVE)
    expect(g, {x: '[{"a", "b"}, {?}]', y: '[{?}, {"a", "c"}]', d: '[{?}, {"a", "c", ?}]'})


def test_partial_conflict_across_factors():
    g = graph(a=2, b=2, c=2)
    x = g.value([2, 8, 4], '[{"a"}, {"b"}, {}]')
    y = g.value([2, 4, 16])
    d = dot(g, x, y, BATCH_DOT, out_sharding='[{"a", "b"}, {}, {}]')
    g.propagate(**AGGRESSIVE)
    expect(g, {y: '[{"a", "b", ?}, {?}, {?}]', d: '[{"a", "b"}, {}, {}]'})


def test_multiple_conflicts_across_factors():
    g = graph(a=2, b=2, c=2, d=2)
    x = g.value([2, 8, 4], '[{?}, {"a", "b"}, {?}]')
    y = g.value([2, 4, 16], '[{?}, {"d", "c"}, {"b", "a"}]')
    d = dot(g, x, y, BATCH_DOT, out_sharding='[{"d"}, {?}, {?}]')
    g.propagate(**AGGRESSIVE)
    expect(g, {x: '[{"d", ?}, {"a", "b"}, {?}]', y: '[{?}, {"d", "c"}, {"b", "a"}]', d: '[{"d"}, {?}, {"b", "a", ?}]'})


def _sideways(arg0, result, mesh=dict(a=2, b=2)):
    g = graph(**mesh)
    x = g.value([8], arg0)
    y = g.value([8], "[{?}]")
    s = ew(g, x, y, out_sharding=result)
    g.propagate(**AGGRESSIVE)
    return g.sharding(y), g.sharding(s)


def test_avoid_sideways_propagation_if_result_is_closed_empty():
    assert _sideways('[{"a"}]', "[{}]") == ("[{?}]", "[{}]")


def test_allow_sideways_propagation_if_result_is_open_empty():
    assert _sideways('[{"a", "b"}]', "[{?}]") == ('[{"a", "b", ?}]', '[{"a", "b", ?}]')


def test_avoid_sideways_propagation_if_result_is_closed_sub_axis():
    assert _sideways('[{"a"}]', '[{"a":(1)2}]', dict(a=4)) == ('[{"a":(1)2, ?}]', '[{"a":(1)2}]')


def test_allow_partial_sideways_propagation_if_conflicting_with_result():
    assert _sideways('[{"a", "b"}]', '[{"a"}]') == ('[{"a", ?}]', '[{"a"}]')


def test_allow_sideways_propagation_if_result_fully_matches():
    assert _sideways('[{"a", "b"}]', '[{"a", "b"}]') == ('[{"a", "b", ?}]', '[{"a", "b"}]')


def test_allow_sideways_propagation_if_no_conflicting_with_one_of_multiple_results():
    g = graph(a=2, b=2)
    x = g.value([8], '[{"a"}]')
    y = g.value([8], "[{?}]")
    r0 = g.value([8], "[{}]")
    r1 = g.value([8], "[{?}]")
    g.op("custom_call", "i,i->i,i", [x, y], [r0, r1])
    g.propagate(**AGGRESSIVE)
    expect(g, {y: '[{"a", ?}]', r0: "[{}]", r1: '[{"a", ?}]'})


def test_prefer_most_sharded_factor_elementwise_op():
    # Shardy's prefer_most_sharded_factor_elementwise_op(_op2), our programs: on an elementwise op
    # every tensor is the same size, so the factor whose candidate axes shard most goes first
    # (whichever operand it comes from); checked against the live Shardy
    import pytest
    live = pytest.importorskip("live_shardy_values")
    passes = live.pipeline([("sdy-aggressive-propagate", "propagation-strategy=aggressive")])
    options = dict(aggressive=True, op_priority=False, user_priority=False)
    for lhs, rhs, expected in [('[{}, {"x"}]', '[{"y", "x"}, {}]', '[{"y", "x", ?}, {?}]'),
                               ('[{"x"}, {}]', '[{}, {"x", "z"}]', '[{?}, {"x", "z", ?}]')]:
        text = f"""
sdy.mesh @m = <["x"=2, "y"=2, "z"=2]>
func.func @main(%p: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@m, {lhs}>}},
                %q: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@m, {rhs}>}}) -> tensor<8x8xf32> {{
  %0 = stablehlo.multiply %p, %q : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}}
"""
        compared, differ = live.differences(text, passes, **options)
        assert compared >= 4 and differ == [], differ
        fn = live.ours(text, **options).functions["main"]
        assert str(fn.body.ops[0].results[0].sharding) == f"#sdy.sharding<@m, {expected}>"
