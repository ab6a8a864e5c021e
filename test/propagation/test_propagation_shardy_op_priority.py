"""Shardy's op_priority_propagation.mlir scenarios (pass-through ops first, then the rest;
no user priorities), re-expressed as graphs."""
from prop_helpers import dot, ew, expect, graph

OP_PRIORITY = dict(aggressive=True, op_priority=True, user_priority=False)


def _dot_then_adds(constraint=False):
    g = graph(a=2, b=2)
    x, y = g.value([8, 8], '[{"a", ?}, {?}]'), g.value([8, 8])
    d = dot(g, x, y)
    s1 = ew(g, d, d, name="add1")
    s2 = ew(g, s1, s1, name="add2")
    last = g.constraint(s2, '[{?}, {"a", ?}]') if constraint else s2
    r = g.func_result(last, None if constraint else '[{?}, {"a", ?}]')
    g.propagate(**OP_PRIORITY)
    return g, x, y, d, s1, s2, r


def test_element_wise_over_dot_general():
    g, x, y, d, s1, s2, r = _dot_then_adds()
    a1 = '[{?}, {"a", ?}]'
    expect(g, {x: '[{"a", ?}, {?}]', y: a1, d: a1, s1: a1, s2: a1})


def test_element_wise_over_dot_general_without_op_priority_differs():
    # Without op priorities the dot's lhs sharding wins on dim 0 (the reason for the Shardy test).
    g = graph(a=2, b=2)
    x, y = g.value([8, 8], '[{"a", ?}, {?}]'), g.value([8, 8])
    d = dot(g, x, y)
    s1 = ew(g, d, d, name="add1")
    s2 = ew(g, s1, s1, name="add2")
    g.func_result(s2, '[{?}, {"a", ?}]')
    g.propagate(aggressive=True, op_priority=False, user_priority=False)
    assert g.sharding(d) == '[{"a", ?}, {?}]'


def test_element_wise_over_dot_general_flipped_op_order():
    g = graph(a=2, b=2)
    x, y = g.value([8, 8], '[{"a", ?}, {?}]'), g.value([8, 8])
    s1 = ew(g, x, x, name="add1")
    s2 = ew(g, y, y, name="add2")
    d = dot(g, s1, s2)
    g.func_result(d, '[{?}, {"a", ?}]')
    g.propagate(**OP_PRIORITY)
    a1 = '[{?}, {"a", ?}]'
    expect(g, {x: '[{"a", ?}, {?}]', y: a1, s1: '[{"a", ?}, {?}]', s2: a1, d: a1})


def test_sharding_constraint_propagated():
    g, x, y, d, s1, s2, r = _dot_then_adds(constraint=True)
    a1 = '[{?}, {"a", ?}]'
    expect(g, {x: '[{"a", ?}, {?}]', y: a1, d: a1, s1: a1, s2: a1, r: a1})


def test_chained_dot_generals():
    g = graph(a=2, b=2)
    x, y = g.value([8, 8], '[{"a", ?}, {?}]'), g.value([8, 8])
    d1 = dot(g, x, y)
    d2 = dot(g, d1, d1)
    s1 = ew(g, d2, d2, name="add1")
    s2 = ew(g, s1, s1, name="add2")
    g.func_result(s2, '[{?}, {"a", ?}]')
    g.propagate(**OP_PRIORITY)
    a1 = '[{?}, {"a", ?}]'
    expect(g, {y: "[{?}, {?}]", d1: '[{"a", ?}, {?}]', d2: a1, s1: a1, s2: a1})


def test_unknown_op():
    # concatenate along dim 1: the concatenated dim is a different factor per operand
    g = graph(a=2, b=2)
    xs = [g.value([4, 1, 256], '[{"a", ?}, {?}, {?}]' if i == 0 else None) for i in range(3)]
    out = g.value([4, 3, 256], name="concatenate")
    g.op("concatenate", "iak,ibk,ick->idk", xs, [out])
    r = g.func_result(out)
    g.propagate(**OP_PRIORITY)
    a0 = '[{"a", ?}, {?}, {?}]'
    expect(g, {xs[1]: a0, xs[2]: a0, out: a0, r: a0})


def test_data_flow_edge():
    g = graph(a=2, b=2)
    x, y = g.value([32, 96], '[{"a", ?}, {?}]'), g.value([32, 96])
    s = ew(g, x, x)
    o0, o1 = g.value([32, 96], name="opt_barrier#0"), g.value([32, 96], name="opt_barrier#1")
    g.data_flow_edge([s], [o0])
    g.data_flow_edge([y], [o1])
    r0 = g.func_result(o0, '[{?}, {"b", ?}]')
    r1 = g.func_result(o1)
    g.propagate(**OP_PRIORITY)
    ab = '[{"a", ?}, {"b", ?}]'
    expect(g, {x: ab, s: ab, o0: ab, r0: ab, y: "[{?}, {?}]", r1: "[{?}, {?}]"})


def test_manual_computation():
    g = graph(a=2, b=2)
    x, y = g.value([32, 32], '[{"a", ?}, {?}]'), g.value([32, 32])
    inner = {}

    def body(g, args):
        inner["args"] = args
        inner["dot"] = dot(g, args[0], args[1])
        inner["add"] = ew(g, inner["dot"], inner["dot"])
        return inner["add"]

    (res,) = g.manual_computation([x, y], ["[{?}, {?}]", "[{?}, {?}]"], ['[{"a", ?}, {?}]'], [], body)
    r = g.func_result(res, '[{?}, {"b", ?}]')
    g.propagate(**OP_PRIORITY)
    ab = '[{"a", ?}, {"b", ?}]'
    e1, e2 = inner["args"]
    expect(g, {x: '[{"a", ?}, {?}]', y: '[{?}, {"b", ?}]', e1: '[{"a", ?}, {?}]', e2: '[{?}, {"b", ?}]',
               inner["dot"]: ab, inner["add"]: ab, res: ab, r: ab})


def test_pass_through_factor_higher_priority_than_reduction_factor():
    g = graph(a=2, b=2)
    x = g.value([32, 1024])
    w = g.value([1024, 16], '[{"a", ?}, {"b", ?}]')
    d = dot(g, x, w)
    r = g.func_result(d, '[{"a", ?}, {"b", ?}]')
    g.propagate(**OP_PRIORITY)
    expect(g, {x: '[{"a", ?}, {?}]', d: '[{"a", ?}, {"b", ?}]', r: '[{"a", ?}, {"b", ?}]'})


def test_broadcast_forward_higher_priority_than_backwards():
    g = graph(a=2, b=2)
    x = g.value([32], '[{"a"}]')
    b1 = g.op("broadcast_in_dim", "i->ij", [x], [[32, 16]])
    b2 = g.op("broadcast_in_dim", "ij->ijk", [b1], [[32, 16, 8]])
    g.func_result(b2, '[{}, {"a"}, {}]')
    g.propagate(**OP_PRIORITY)
    expect(g, {b1: '[{?}, {"a", ?}]', b2: '[{?}, {"a", ?}, {?}]'})


def test_dot_lhs_from_broadcast_and_large_rhs_in_mlir():
    # propagation_pipeline.mlir's dot_lhs_from_broadcast_and_large_rhs, our program: every op
    # but a broadcast propagates (step 2) before the broadcast may go forward (step 3), so the
    # large operand's split of the contracted dim reaches the broadcast first, and the small
    # operand's split of the batch dim then has nowhere to go; checked against the live Shardy
    import pytest
    live = pytest.importorskip("live_shardy_values")
    text = """
sdy.mesh @m = <["x"=2, "y"=2]>
func.func @main(%v: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"x", ?}]>},
                %w: tensor<512x256xf32> {sdy.sharding = #sdy.sharding<@m, [{"x", ?}, {?}]>}) -> tensor<8x256xf32> {
  %0 = stablehlo.broadcast_in_dim %v, dims = [0] : (tensor<8xf32>) -> tensor<8x512xf32>
  %1 = stablehlo.dot %0, %w : (tensor<8x512xf32>, tensor<512x256xf32>) -> tensor<8x256xf32>
  %2 = stablehlo.exponential %1 : tensor<8x256xf32>
  return %2 : tensor<8x256xf32>
}
"""
    compared, differ = live.differences(text, live.USER_PRIORITY)
    assert compared >= 5 and differ == [], differ
    fn = live.ours(text).functions["main"]
    assert str(fn.body.ops[0].results[0].sharding) == '#sdy.sharding<@m, [{?}, {"x", ?}]>'
    assert fn.body.ops[1].results[0].sharding is None


def test_move_to_host_moves_with_the_elementwise_ops():
    # Shardy treats MoveToHost/MoveToDevice custom calls as pass-through ops (op-priority step
    # 0), so the result's sharding reaches the dot through them before the dot's own operands
    # do; our program, checked against the live Shardy
    import pytest
    live = pytest.importorskip("live_shardy_values")
    for target in ("MoveToHost", "MoveToDevice"):
        text = f"""
sdy.mesh @m = <["x"=2, "y"=2]>
func.func @main(%a: tensor<16x8xf32> {{sdy.sharding = #sdy.sharding<@m, [{{"y", ?}}, {{?}}]>}}, %b: tensor<8x16xf32>)
    -> (tensor<16x16xf32> {{sdy.sharding = #sdy.sharding<@m, [{{?}}, {{"y", ?}}]>}}) {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  %1 = stablehlo.custom_call @{target}(%0) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %2 = stablehlo.sqrt %1 : tensor<16x16xf32>
  return %2 : tensor<16x16xf32>
}}
"""
        compared, differ = live.differences(text, live.USER_PRIORITY)
        assert compared >= 6 and differ == [], (target, differ)
        fn = live.ours(text).functions["main"]
        assert str(fn.body.ops[0].results[0].sharding) == '#sdy.sharding<@m, [{?}, {"y", ?}]>'


def test_dynamic_slice_moves_forward_from_the_first_step():
    # Shardy's op priorities move a dynamic_slice forward already with the elementwise ops
    # (step 0), so the operand's split reaches the slice before a later op's result sharding
    # comes back to it; a dynamic_update_slice moves with the other ops (the result's sharding
    # wins there). Our programs, checked against the live Shardy
    import pytest
    live = pytest.importorskip("live_shardy_values")
    slice_ = """%0 = stablehlo.dynamic_slice %a, %i, %i, sizes = [16, 8] : (tensor<16x8xf32>, tensor<i32>, tensor<i32>) -> tensor<16x8xf32>"""
    update = """%0 = stablehlo.dynamic_update_slice %a, %a, %i, %i : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<i32>, tensor<i32>) -> tensor<16x8xf32>"""
    for op, expected in ((slice_, '[{?}, {"y", ?}]'), (update, '[{"y", ?}, {?}]')):
        text = f"""
sdy.mesh @m = <["x"=2, "y"=2]>
func.func @main(%a: tensor<16x8xf32> {{sdy.sharding = #sdy.sharding<@m, [{{?}}, {{"y", ?}}]>}}, %i: tensor<i32>)
    -> (tensor<16x8xf32> {{sdy.sharding = #sdy.sharding<@m, [{{"y", ?}}, {{?}}]>}}) {{
  {op}
  %1 = stablehlo.negate %0 : tensor<16x8xf32>
  return %1 : tensor<16x8xf32>
}}
"""
        compared, differ = live.differences(text, live.USER_PRIORITY)
        assert compared >= 4 and differ == [], differ
        fn = live.ours(text).functions["main"]
        assert str(fn.body.ops[0].results[0].sharding) == f"#sdy.sharding<@m, {expected}>"
