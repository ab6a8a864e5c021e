"""Shardy's user_priority_propagation.mlir scenarios (user priorities, with op priorities and
aggressive propagation nested inside), re-expressed as graphs."""
from prop_helpers import dot, ew, expect, graph


def _chain(arg0=None, arg1=None, arg2=None, arg3=None, add0=None, add1=None, div=None, result=None):
    """arg0 + arg1 -> add0; add0 + arg2 -> add1; add1 / arg3 -> div; return div."""
    g = graph(a=2, b=2, c=2)
    a = [g.value([8, 8], s, name=f"arg{i}") for i, s in enumerate((arg0, arg1, arg2, arg3))]
    s0 = ew(g, a[0], a[1], out_sharding=add0, name="add0")
    s1 = ew(g, s0, a[2], out_sharding=add1, name="add1")
    d = ew(g, s1, a[3], out_sharding=div, name="divide")
    r = g.func_result(d, result)
    g.propagate()
    return g, a, s0, s1, d, r


def test_no_priorities():
    g = graph(a=2, b=2, c=2)
    x, y, z = g.value([8, 8], '[{"a"}, {"b"}]'), g.value([8, 8]), g.value([8, 8])
    s = ew(g, x, y)
    d = ew(g, s, z, name="divide")
    r = g.func_result(d)
    g.propagate()
    both = '[{"a", ?}, {"b", ?}]'
    expect(g, {y: both, z: both, s: both, d: both, r: both})


def test_skipped_priorities():
    g = graph(a=2, b=2, c=2)
    x, y, z = g.value([8, 8], '[{"a"}, {"b"}p4]'), g.value([8, 8]), g.value([8, 8])
    s = ew(g, x, y)
    d = ew(g, s, z, out_sharding='[{?}, {"c", ?}p1]', name="divide")
    r = g.func_result(d)
    g.propagate()
    ac = '[{"a", ?}, {"c", ?}]'
    expect(g, {x: '[{"a"}, {"b"}]', y: ac, z: ac, s: ac, d: ac, r: ac})


def test_arg_lower_priority_than_return_value():
    g, a, s0, s1, d, r = _chain(arg0='[{"a", ?}p1, {"b"}p1]', div='[{"c"}p0, {?}]')
    cb = '[{"c", ?}, {"b", ?}]'
    expect(g, {a[0]: '[{"a", ?}, {"b"}]', a[1]: cb, a[2]: cb, a[3]: cb, s0: cb, s1: cb, d: '[{"c"}, {"b", ?}]'})


def test_arg_lower_priority_than_return_value_with_replicated():
    g, a, s0, s1, d, r = _chain(arg0='[{"a"}p1, {"b"}p1]', div='[{"c"}p0, {?}], replicated={"b"}')
    cb = '[{"c", ?}, {"b", ?}]'
    expect(g, {a[1]: cb, a[2]: cb, a[3]: '[{"c", ?}, {?}]', s0: cb, s1: cb, d: '[{"c"}, {?}]', r: '[{"c", ?}, {?}]'})


def test_arg_higher_priority_than_return_value():
    g, a, s0, s1, d, r = _chain(arg1='[{"a"}p0, {"b"}p0]', div='[{"c", ?}p1, {?}]')
    ab = '[{"a", ?}, {"b", ?}]'
    expect(g, {a[0]: ab, a[2]: ab, a[3]: '[{?}, {"b", ?}]', s0: ab, s1: ab, d: '[{"c", ?}, {"b", ?}]', r: '[{"c", ?}, {"b", ?}]'})


def test_result_lower_priority_than_arg():
    g, a, s0, s1, d, r = _chain(arg1='[{"c"}p0, {?}]', result='[{"a", ?}p1, {"b"}p1]')
    cb = '[{"c", ?}, {"b", ?}]'
    expect(g, {a[0]: cb, a[1]: '[{"c"}, {"b", ?}]', a[2]: cb, a[3]: cb, s0: cb, s1: cb, d: cb, r: '[{"a", ?}, {"b"}]'})


def test_result_higher_priority_than_arg():
    g, a, s0, s1, d, r = _chain(arg0='[{"c", ?}p1, {?}]', result='[{"a"}p0, {"b"}p0]')
    ab = '[{"a", ?}, {"b", ?}]'
    expect(g, {a[0]: '[{"c", ?}, {"b", ?}]', a[1]: ab, a[2]: ab, a[3]: ab, s0: ab, s1: ab, d: ab, r: '[{"a"}, {"b"}]'})


def test_dim_with_lower_priority_gets_further_sharded_by_higher():
    g = graph(a=2, b=2, c=2)
    a = [g.value([8, 8], '[{"b", ?}p1, {}]' if i == 0 else None, name=f"arg{i}") for i in range(4)]
    s0 = ew(g, a[0], a[1], name="add0")
    s1 = ew(g, a[0], a[2], out_sharding='[{"b", "a", ?}p0, {}]', name="add1")
    d = ew(g, s0, a[3], out_sharding='[{"c", ?}p0, {}]', name="divide")
    g.func_result(s1)
    g.func_result(d)
    g.propagate()
    expect(g, {a[0]: '[{"b", "a", ?}, {}]', a[1]: '[{"c", ?}, {?}]', a[2]: '[{"b", "a", ?}, {?}]',
               a[3]: '[{"c", ?}, {?}]', s0: '[{"c", ?}, {?}]', s1: '[{"b", "a", ?}, {}]', d: '[{"c", ?}, {}]'})


def test_different_priorities_with_closed_empty_dim():
    g, a, s0, s1, d, r = _chain(arg0='[{"a"}p0, {"b"}p0]', add1='[{"c"}p1, {}]')
    expect(g, {a[1]: '[{"a", ?}, {"b", ?}]', a[2]: "[{?}, {?}]", a[3]: '[{"c", ?}, {?}]', s0: '[{"a", ?}, {"b", ?}]',
               s1: '[{"c"}, {}]', d: '[{"c", ?}, {?}]', r: '[{"c", ?}, {?}]'})


def test_open_empty_dim_with_priority():
    g, a, s0, s1, d, r = _chain(arg0='[{"a"}p0, {"b"}p0]', arg3='[{?}, {"c"}p0]', add0='[{?}, {?}p1]')
    ac = '[{"a", ?}, {"c", ?}]'
    expect(g, {a[1]: '[{"a", ?}, {"b", ?}]', a[2]: ac, a[3]: '[{"a", ?}, {"c"}]', s0: '[{"a", ?}, {"b", ?}]',
               s1: ac, d: ac, r: ac})


def test_different_priorities_from_args():
    # batch parallelism (p0) then ZeRO-style weight sharding (p1)
    g = graph(a=2, b=2, c=2)
    x = g.value([8, 8], '[{"a"}p0, {?}]')
    y = g.value([8, 8])
    w = g.value([8, 16], '[{?}, {"a"}p1]')
    s = ew(g, x, y)
    d = dot(g, s, w)
    r = g.func_result(d)
    g.propagate()
    expect(g, {y: '[{"a", ?}, {?}]', w: '[{?}, {"a"}]', s: '[{"a", ?}, {?}]', d: '[{"a", ?}, {?}]', r: '[{"a", ?}, {?}]'})


def test_different_priorities_from_ops():
    g = graph(a=2, b=2, c=2)
    x, y, w = g.value([8, 8]), g.value([8, 8]), g.value([8, 16])
    s0 = ew(g, x, x, out_sharding='[{?}, {"a"}p1]', name="add0")
    s1 = ew(g, s0, y, name="add1")
    d = dot(g, s1, w, out_sharding='[{"a"}p0, {?}]')
    r = g.func_result(d)
    g.propagate()
    expect(g, {x: '[{?}, {"a", ?}]', y: '[{"a", ?}, {?}]', w: "[{?}, {?}]", s0: '[{?}, {"a"}]', s1: '[{"a", ?}, {?}]',
               d: '[{"a"}, {?}]', r: '[{"a", ?}, {?}]'})


def test_different_sharding_constraint_priorities():
    g = graph(a=2, b=2, c=2)
    x, y = g.value([8, 8]), g.value([8, 8])
    c0 = g.constraint(x, '[{"a"}p0, {?}]')
    c1 = g.constraint(y, '[{?}, {"a"}p1]')
    s0 = ew(g, c1, c1, name="add0")
    s1 = ew(g, c0, s0, name="add1")
    r = g.func_result(s1)
    g.propagate()
    expect(g, {x: '[{"a", ?}, {?}]', y: '[{?}, {"a", ?}]', c0: '[{"a"}, {?}]', c1: '[{?}, {"a"}]',
               s0: '[{"a", ?}, {?}]', s1: '[{"a", ?}, {?}]', r: '[{"a", ?}, {?}]'})


REDUCE = "ikj,ikj,,->ij,ij"  # stablehlo.reduce of two inputs (with their scalar inits) over dim 1


def _reduce(g, x, y, shardings=(None, None)):
    init = g.value([])
    outs = [g.value([4, 8], s, name=f"reduce#{i}") for i, s in enumerate(shardings)]
    return g.op("reduce", REDUCE, [x, y, init, init], outs, reduction="k")


def test_propagate_to_multi_result_op_with_priorities():
    g = graph(a=2, b=2, c=2)
    x = g.value([4, 64, 8], '[{}, {}, {"a"}p0]')
    y = g.value([4, 64, 8])
    z = g.value([4, 8], '[{}, {"b"}p1]')
    r0, r1 = _reduce(g, x, y)
    s = ew(g, r1, z)
    g.func_result(r0)
    g.func_result(s)
    g.propagate()
    expect(g, {r0: '[{?}, {"a", ?}]', r1: '[{?}, {"a", ?}]', s: '[{?}, {"a", ?}]', y: '[{?}, {?}, {"a", ?}]'})


def test_propagate_from_multi_result_op_with_priorities():
    g = graph(a=2, b=2, c=2)
    x, y = g.value([4, 64, 8]), g.value([4, 64, 8])
    r0, r1 = _reduce(g, x, y, ('[{?}, {"a"}p1]', '[{?}, {"b"}p0]'))
    s0 = ew(g, r0, r0, name="add0")
    s1 = ew(g, r1, r1, name="add1")
    s2 = ew(g, s0, s1, name="add2")
    g.func_result(s2)
    g.propagate()
    b = '[{?}, {"b", ?}]'
    expect(g, {x: '[{?}, {?}, {"b", ?}]', y: '[{?}, {?}, {"b", ?}]', r0: '[{?}, {"a"}]', r1: '[{?}, {"b"}]',
               s0: b, s1: b, s2: b})


def test_user_based_and_op_based():
    g = graph(a=2, b=2, c=2)
    x = g.value([8, 8], '[{"a", ?}p1, {?}]')
    w = g.value([8, 8], '[{"a", ?}p0, {"b", ?}p0]')
    s0 = ew(g, x, x, name="add0")
    d = dot(g, s0, w)
    s1 = ew(g, d, d, name="add1")
    s2 = ew(g, s1, s1, name="add2")
    r = g.func_result(s2, '[{"b", ?}p0, {?}]')
    g.propagate()
    expect(g, {x: '[{"a", ?}, {?}]', w: '[{"a", ?}, {"b", ?}]', s0: '[{"b", ?}, {"a", ?}]', d: '[{"b", ?}, {?}]',
               s1: '[{"b", ?}, {?}]', s2: '[{"b", ?}, {?}]', r: '[{"b", ?}, {?}]'})


def test_maximal_sharding_no_results():
    # A side-effecting op with no results on a one-device mesh: nothing propagates, nothing breaks.
    g = graph(a=2, b=2, c=2)
    g.mesh("maximal_mesh")
    x = g.value([8, 8])
    g.op("custom_call", "ij->", [x], [])
    r = g.func_result(x)
    g.propagate()
    expect(g, {x: "[{?}, {?}]", r: "[{?}, {?}]"})


def test_manual_computation_shardings_with_priority():
    g = graph(a=2, b=2, c=2)
    x = g.value([32, 32], '[{"c"}p2, {?}]')
    y = g.value([32, 32])
    s0 = ew(g, x, x, name="add0")
    inner = {}

    def body(g, args):
        g.annotate(args[0], '[{"b"}p1, {?}]')  # the body's data-flow edges carry shardings too
        g.annotate(args[1], "[{?}p1, {?}]")
        inner["args"] = args
        inner["add"] = ew(g, args[0], args[1], name="body.add")
        return inner["add"]

    (res,) = g.manual_computation([s0, y], ['[{"a", "b"}p1, {?}]', '[{"a", ?}p1, {?}]'], ['[{"a", ?}, {"b", ?}p0]'], ["a"],
                                  body)
    edge = g.value([32, 32], '[{"a", ?}, {"b", ?}p0]', name="result_edge")
    g.data_flow_edge([res], [edge])
    r = g.func_result(edge)
    g.propagate()
    e1, e2 = inner["args"]
    expect(g, {x: '[{"c"}, {?}]', y: '[{"a", ?}, {"b", ?}]', s0: '[{"a", "b", ?}, {?}]', e1: '[{"b"}, {?}]',
               e2: '[{?}, {"b", ?}]', inner["add"]: '[{?}, {"b", ?}]', edge: '[{"a", ?}, {"b", ?}]', r: '[{"a", ?}, {"b", ?}]'})


def test_maximal_sharding_no_results_in_mlir():
    # Shardy's maximal_sharding_no_results: a result-less op may carry sdy.sharding; it is read,
    # kept as it is, printed back (MLIR's verifier takes it) and propagates nothing
    import pytest
    live = pytest.importorskip("live_shardy_values")
    text = """
sdy.mesh @m = <["a"=2]>
sdy.mesh @one = <[], device_ids=[0]>
func.func @main(%x: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {}]>}) -> tensor<4x4xf32> {
  stablehlo.custom_call @print(%x) {has_side_effect = true, sdy.sharding = #sdy.sharding_per_value<[<@one, []>]>} : (tensor<4x4xf32>) -> ()
  %0 = stablehlo.exponential %x : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
"""
    compared, differ = live.differences(text, live.USER_PRIORITY)
    assert compared >= 3 and differ == [], differ
    fn = live.ours(text).functions["main"]
    assert str(fn.body.ops[0].attrs["sdy.sharding"]) == "#sdy.sharding_per_value<[<@one, []>]>"
