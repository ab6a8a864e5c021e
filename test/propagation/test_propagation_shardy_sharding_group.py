"""Shardy's sharding_group_propagation.mlir scenarios (sdy-basic-propagate with sharding groups),
re-expressed as graphs. Shardy's file has 6 labelled functions; the two "across function"
functions form one scenario here (a group spanning two disconnected functions)."""
import pytest
from prop_helpers import ew, expect, graph

BASIC = dict(aggressive=False, op_priority=False, user_priority=False)


def test_shard_as_applies_despite_barrier():
    g = graph(a=2, b=2, c=2, d=2)
    x = g.value([8, 8], '[{"a", ?}, {?}]')
    c0, c1 = g.value([8, 8], name="const0"), g.value([8, 8], name="const1")
    t = g.op("tanh", "ij->ij", [x], [[8, 8]])
    b = g.barrier(c1, "none")
    s = ew(g, t, b)
    g.group([c0, s])
    g.func_result(s)
    g.propagate(**BASIC)
    a = '[{"a", ?}, {?}]'
    expect(g, {c0: a, t: a, b: a, s: a, c1: "[{?}, {?}]"})


def test_shard_as_applies_across_functions():
    g = graph(a=2, b=2, c=2, d=2)
    xa = g.value([8, 8], '[{"b", ?}, {?}]')  # function A
    ta = g.op("tanh", "ij->ij", [xa], [[8, 8]])
    g.func_result(ta)
    xb = g.value([8, 8])                     # function B
    sb = ew(g, xb, xb)
    g.func_result(sb)
    g.group([ta, sb])
    g.propagate(**BASIC)
    expect(g, {ta: '[{"b", ?}, {?}]', sb: '[{"b", ?}, {?}]'})


def test_shard_as_reflects_user_priority():
    g = graph(a=2, b=2, c=2, d=2)
    x = g.value([8, 8], '[{"a", ?}p0, {"c", ?}]')
    y = g.value([8, 8], '[{"c", "a", ?}p1, {"b", ?}]')
    s0, s1 = ew(g, x, x, name="add0"), ew(g, y, y, name="add1")
    s2 = ew(g, s0, s1, name="add2")
    g.group([s0, s1, s2])
    g.func_result(s2)
    g.propagate(**BASIC)
    ac = '[{"a", ?}, {"c", ?}]'
    expect(g, {s0: ac, s1: ac, s2: ac})


def test_shard_as_across_dataflow_edge():
    g = graph(a=2, b=2, c=2, d=2)
    x = g.value([16, 16], '[{}, {"d"}]')
    const = g.value([16, 16], name="const")
    counter, one = g.value([]), g.value([])
    # while(%x, %counter): body adds; edges join operand, body arg, body return and result.
    it, it_i = g.value([16, 16], name="iterArg"), g.value([], name="iterArg_2")
    body_add = ew(g, it, it, name="body.add")
    body_inc = g.op("add", ",->", [it_i, one], [[]])
    res, res_i = g.value([16, 16], name="while#0"), g.value([], name="while#1")
    g.data_flow_edge([x, body_add], [res, it])
    g.data_flow_edge([counter, body_inc], [res_i, it_i])
    g.group([body_add, const])
    r = g.func_result(res)
    g.propagate(**BASIC)
    d = '[{?}, {"d", ?}]'
    expect(g, {const: d, body_add: d, res: d, it: d, r: d})


def test_different_group_ids_greater_group_id_first():
    g = graph(a=2, b=2, c=2, d=2)
    a = [g.value([8, 8], s) for s in ('[{"a", ?}, {?}]', None, '[{?}, {"b", ?}]', None)]
    g.group([a[2], a[3]])
    g.group([a[0], a[1]])
    rs = [g.func_result(v) for v in a]
    g.propagate(**BASIC)
    expect(g, {a[1]: '[{"a", ?}, {?}]', a[3]: '[{?}, {"b", ?}]', rs[0]: '[{"a", ?}, {?}]', rs[1]: '[{"a", ?}, {?}]',
               rs[2]: '[{?}, {"b", ?}]', rs[3]: '[{?}, {"b", ?}]'})


def test_conflicting_group_members_are_an_error():
    # Shardy's ShardingGroupImport rejects a group whose members' shardings conflict; so do we.
    g = graph(a=2, b=2)
    x, y = g.value([8, 8], '[{"a"}, {?}]'), g.value([8, 8], '[{"b"}, {?}]')
    g.group([x, y])
    with pytest.raises(ValueError, match="sharding group 0"):
        g.propagate()


def test_groups_sharing_a_value_merge():
    g = graph(a=2, b=2)
    x, y, z = g.value([8, 8], '[{"a", ?}, {?}]'), g.value([8, 8]), g.value([8, 8])
    g.group([x, y])
    g.group([y, z])
    g.propagate()
    expect(g, {y: '[{"a", ?}, {?}]', z: '[{"a", ?}, {?}]'})


def test_conflicting_members_in_mlir_warn_and_go_on_as_shardy_does():
    # In a program (spmdkit.propagate) conflicting members do not raise: like Shardy, each member
    # is read through a new open sharding constraint, the group joins those; checked against the
    # live Shardy value by value (the constraints it inserts included)
    import pytest
    live = pytest.importorskip("live_shardy_values")
    from spmdkit.ir.group_conflicts import ShardingGroupConflictWarning
    text = """
sdy.mesh @m = <["x"=2, "y"=2]>
func.func @main(%p: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{"x"}, {}]>},
                %q: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{"y"}, {}]>},
                %r: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %0 = stablehlo.sine %p : tensor<8x4xf32>
  %1 = stablehlo.cosine %q : tensor<8x4xf32>
  %2 = stablehlo.tanh %r : tensor<8x4xf32>
  sdy.sharding_group %p group_id = 7 : tensor<8x4xf32>
  sdy.sharding_group %q group_id = 7 : tensor<8x4xf32>
  sdy.sharding_group %2 group_id = 7 : tensor<8x4xf32>
  return %0, %1, %2 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}
"""
    with pytest.warns(ShardingGroupConflictWarning, match="group 7"):
        compared, differ = live.differences(text, live.BASIC, **live.BASIC_OPTIONS)
    assert compared >= 9 and differ == [], differ
    with pytest.warns(ShardingGroupConflictWarning):
        fn = live.ours(text, **live.BASIC_OPTIONS).functions["main"]
    names = [op.name for op in fn.body.ops]
    assert names.count("sdy.sharding_constraint") == 3
    assert str(fn.args[0].sharding) == '#sdy.sharding<@m, [{"x"}, {}]>'  # members keep their own
