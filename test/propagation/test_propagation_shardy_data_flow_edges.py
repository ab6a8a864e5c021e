"""Shardy's basic_propagation_data_flow_edges.mlir scenarios: a case/while result is joined to
every branch's returned value by a data-flow edge (one identity table over all of them)."""
from prop_helpers import ew, expect, graph

BASIC = dict(aggressive=False, op_priority=False, user_priority=False)


def _case(mesh, branch_shardings, shape=(8,), result_shardings=None):
    """branch_shardings[b][r]: sharding of the value branch b returns as result r."""
    g = graph(**mesh)
    n_results = len(branch_shardings[0])
    returned = [[g.value(list(shape), s, name=f"arg{b}_{r}") for r, s in enumerate(row)] for b, row in enumerate(branch_shardings)]
    results = []
    for r in range(n_results):
        res = g.value(list(shape), (result_shardings or [None] * n_results)[r], name=f"case#{r}")
        g.data_flow_edge([returned[b][r] for b in range(len(returned))], [res])
        results.append(res)
    fr = [g.func_result(v) for v in results]
    g.propagate(**BASIC)
    return g, returned, results, fr


def test_case_single_result_func_args_single_sharding():
    g, ret, res, fr = _case(dict(a=2, b=2), [['[{"a"}]'], [None]])
    expect(g, {ret[1][0]: '[{"a", ?}]', res[0]: '[{"a", ?}]', fr[0]: '[{"a", ?}]'})


def test_case_token_result_skipped():
    # tokens carry no sharding: only the tensor result has an edge
    g, ret, res, fr = _case(dict(a=2, b=2), [['[{"a"}]'], [None]])
    expect(g, {ret[1][0]: '[{"a", ?}]', fr[0]: '[{"a", ?}]'})


def test_case_scalars():
    g, ret, res, fr = _case(dict(a=2, b=2), [['[], replicated={"a"}'], [None]], shape=())
    expect(g, {ret[1][0]: "[]", res[0]: "[]"})


def test_case_single_result_func_args_conflict():
    g, ret, res, fr = _case(dict(a=2, b=2, c=2), [['[{"a", "b"}]'], ['[{"a", "c"}]']])
    expect(g, {res[0]: '[{"a", ?}]', fr[0]: '[{"a", ?}]'})


def test_case_single_result_func_first_sharding_best_ignored():
    g, ret, res, fr = _case(dict(a=2, b=2, c=2), [['[{"a", "b", "c"}]'], ['[{"c"}]']])
    expect(g, {res[0]: "[{?}]"})


def test_case_multiple_results_different_sharding():
    g, ret, res, fr = _case(dict(a=2, b=2, c=2), [['[{"a", ?}]', '[{"c", ?}]'], ['[{"a", "b", ?}]', '[{"c", ?}]']])
    expect(g, {ret[0][0]: '[{"a", "b", ?}]', res[0]: '[{"a", "b", ?}]', res[1]: '[{"c", ?}]', fr[1]: '[{"c", ?}]'})


def test_case_multiple_dim_most_compatible():
    g, ret, res, fr = _case(dict(a=2, b=2, c=2), [['[{?}, {"b", ?}]'], ['[{"a", "b", ?}, {?}]']], shape=(8, 8))
    expect(g, {ret[0][0]: '[{"a", ?}, {"b", ?}]', res[0]: '[{"a", ?}, {?}]'})


def test_case_multiple_results_different_sharding_conflicts():
    g, ret, res, fr = _case(dict(a=2, b=2, c=2), [['[{"a", ?}]', '[{"b", ?}]'], ['[{"a", "b", ?}]', '[{"a", ?}]']])
    expect(g, {ret[0][0]: '[{"a", "b", ?}]', res[0]: '[{"a", "b", ?}]', res[1]: "[{?}]", fr[1]: "[{?}]"})


def test_case_closed_sharding():
    g, ret, res, fr = _case(dict(a=2, b=2, c=2), [['[{"a"}]'], ['[{"a", "b"}]']])
    expect(g, {res[0]: '[{"a", ?}]', fr[0]: '[{"a", ?}]'})


def test_case_not_func_args_or_directly_returned():
    g = graph(a=2, b=2, c=2)
    x, y = g.value([8], '[{"a"}]'), g.value([8], '[{"a", "b"}]')
    s0, s1 = ew(g, x, x, name="add0"), ew(g, y, y, name="add1")
    res = g.value([8], name="case")
    g.data_flow_edge([s0, s1], [res])
    s2 = ew(g, res, res, name="add2")
    r = g.func_result(s2)
    g.propagate(**BASIC)
    ab = '[{"a", "b", ?}]'
    expect(g, {s0: ab, s1: ab, res: ab, s2: ab, r: ab})


def test_case_propagate_from_func_result():
    g = graph(a=2, b=2)
    x, y = g.value([8]), g.value([8], '[{"a", ?}]')
    res = g.value([8], name="case")
    g.data_flow_edge([x, y], [res])
    g.func_result(res, '[{"a", "b", ?}]')
    g.propagate(**BASIC)
    ab = '[{"a", "b", ?}]'
    expect(g, {x: ab, y: ab, res: ab})


def test_case_propagate_from_data_flow_edge_op_result():
    g, ret, res, fr = _case(dict(a=2, b=2), [[None], ['[{"a", ?}]']], result_shardings=['[{"a", "b", ?}]'])
    ab = '[{"a", "b", ?}]'
    expect(g, {ret[0][0]: ab, ret[1][0]: ab, res[0]: ab, fr[0]: ab})


def test_while_loop_edges_carry_sharding_around_the_loop():
    # while: edge i joins the operand, the body's returned value, the result and the body arg.
    g = graph(a=2, b=2)
    x = g.value([8, 8], '[{"a"}, {?}]')
    body_arg, res = g.value([8, 8], name="body_arg"), g.value([8, 8], name="while#0")
    body = ew(g, body_arg, body_arg, out_sharding='[{?}, {"b", ?}]', name="body.add")
    g.data_flow_edge([x, body], [res, body_arg])
    g.propagate(**BASIC)
    expect(g, {body_arg: '[{"a", ?}, {"b", ?}]', res: '[{"a", ?}, {"b", ?}]', body: '[{"a", ?}, {"b", ?}]'})


def test_case_propagate_mulitple_uses():
    g = graph(a=2, b=2)
    x, y = g.value([8]), g.value([8], '[{"a", "b", ?}]')
    res = g.value([8], name="case")
    g.data_flow_edge([x, y], [res])
    s0, s1 = ew(g, res, res, name="add"), ew(g, res, res, name="subtract")
    d = ew(g, s1, s0, name="divide")
    r = g.func_result(d)
    g.propagate(**BASIC)
    ab = '[{"a", "b", ?}]'
    expect(g, {x: ab, res: ab, s0: ab, s1: ab, d: ab, r: ab})


def test_optimization_barrier():
    g = graph(a=2, b=2)
    x, y = g.value([32, 96], '[{"a"}, {?}]'), g.value([32, 96])
    s = ew(g, x, x)
    o0, o1 = g.value([32, 96], name="opt#0"), g.value([32, 96], name="opt#1")
    g.data_flow_edge([s], [o0])
    g.data_flow_edge([y], [o1])
    g.func_result(o0, '[{?}, {"b"}]')
    g.func_result(o1, '[{"b"}, {?}]')
    g.propagate(**BASIC)
    expect(g, {x: '[{"a"}, {"b", ?}]', y: '[{"b", ?}, {?}]', s: '[{"a", ?}, {"b", ?}]', o0: '[{"a", ?}, {"b", ?}]',
               o1: '[{"b", ?}, {?}]'})


def _while(g, operand, body, result_sharding=None):
    """while(operand): body(g, iter_arg) -> returned; edges join operand, return, result, iter arg."""
    it = g.value(g.shape(operand), name="iterArg")
    ret = body(g, it)
    res = g.value(g.shape(operand), name="while#0")
    g.data_flow_edge([operand, ret], [res, it])
    return it, res


def no_rule(g, v):
    return g.op("sdy_testonly", "ij->ij", [v], [g.shape(v)], blocked="ij")


AB_OPEN = '[{"a", ?}, {"b", ?}]'


def test_while_func_return():
    g = graph(a=2, b=2)
    x = g.value([32, 96])
    inner = {}
    it, res = _while(g, x, lambda g, it: inner.setdefault("add", ew(g, it, it)))
    g.func_result(res, '[{"a"}, {"b"}]')
    g.propagate(**BASIC)
    expect(g, {x: AB_OPEN, inner["add"]: AB_OPEN, res: AB_OPEN, it: AB_OPEN})


def test_while_func_return_directly_on_func_operand():
    g = graph(a=2, b=2)
    x = g.value([32, 96], '[{"a", ?}, {?}]')
    inner = {}
    it, res = _while(g, x, lambda g, it: inner.setdefault("add", ew(g, it, it)))
    r = g.func_result(res, '[{?}, {"b", ?}]')
    g.propagate(**BASIC)
    expect(g, {x: AB_OPEN, inner["add"]: AB_OPEN, res: AB_OPEN, r: AB_OPEN})


def test_while_result_use():
    g = graph(a=2, b=2)
    x = g.value([32, 96])
    inner = {}
    it, res = _while(g, x, lambda g, it: inner.setdefault("add", ew(g, it, it)))
    s = ew(g, res, res, out_sharding='[{"a"}, {"b"}]')
    r = g.func_result(s)
    g.propagate(**BASIC)
    expect(g, {x: AB_OPEN, inner["add"]: AB_OPEN, res: AB_OPEN, r: AB_OPEN})


def test_while_body_propagate_block_arg():
    g = graph(a=2, b=2)
    x = g.value([32, 96])
    inner = {}

    def body(g, it):
        inner["add"] = ew(g, it, it, out_sharding='[{"a"}, {"b"}]')
        return no_rule(g, inner["add"])  # blocks forward flow in the body

    it, res = _while(g, x, body)
    r = g.func_result(res)
    g.propagate(**BASIC)
    expect(g, {x: AB_OPEN, it: AB_OPEN, res: AB_OPEN, r: AB_OPEN, inner["add"]: '[{"a"}, {"b"}]'})


def test_while_body_propagate_return_op():
    g = graph(a=2, b=2)
    x = g.value([32, 96])
    inner = {}

    def body(g, it):
        cc = no_rule(g, it)  # blocks backward flow to the iter arg inside the body
        inner["add"] = ew(g, cc, cc, out_sharding='[{"a"}, {"b"}]')
        return inner["add"]

    it, res = _while(g, x, body)
    r = g.func_result(res)
    g.propagate(**BASIC)
    expect(g, {x: AB_OPEN, it: AB_OPEN, res: AB_OPEN, r: AB_OPEN})


def test_while_body_non_func_operand_result_use():
    g = graph(a=2, b=2)
    x = g.value([32, 96])
    s = ew(g, x, x, name="add_before")
    inner = {}
    it, res = _while(g, s, lambda g, it: inner.setdefault("add", ew(g, it, it, out_sharding='[{"a"}, {"b"}]')))
    s2 = ew(g, res, res, name="add_after")
    r = g.func_result(s2)
    g.propagate(**BASIC)
    expect(g, {x: AB_OPEN, s: AB_OPEN, res: AB_OPEN, s2: AB_OPEN, r: AB_OPEN})


def test_while_func_operand():
    g = graph(a=2, b=2)
    x = g.value([32, 96], '[{"a"}, {"b"}]')
    inner = {}
    it, res = _while(g, x, lambda g, it: inner.setdefault("add", ew(g, it, it)))
    r = g.func_result(res)
    g.propagate(**BASIC)
    expect(g, {inner["add"]: AB_OPEN, res: AB_OPEN, it: AB_OPEN, r: AB_OPEN})


def _named_computation(g, operand, body):
    """sdy.named_computation: edges operand -> body arg and body return -> result."""
    arg = g.value(g.shape(operand), name="nc_arg")
    g.data_flow_edge([operand], [arg])
    ret = body(g, arg)
    res = g.value(g.shape(operand), name="nc_result")
    g.data_flow_edge([ret], [res])
    return arg, res


def test_named_computation_argument_sharding_propagation():
    g = graph(a=2, b=2)
    x = g.value([8, 2], '[{"a"}, {}]')
    s = ew(g, x, x)
    arg, res = _named_computation(g, s, lambda g, a: a)
    r = g.func_result(res)
    g.propagate(**BASIC)
    a = '[{"a", ?}, {?}]'
    expect(g, {s: a, arg: a, res: a, r: a})


def test_named_computation_result_sharding_propagation():
    g = graph(a=2, b=2)
    x = g.value([8, 2])
    s = ew(g, x, x)
    inner = {}
    arg, res = _named_computation(g, s, lambda g, a: inner.setdefault("sub", ew(g, a, a, name="subtract")))
    g.func_result(res, '[{"a"}, {}]')
    g.propagate(**BASIC)
    a = '[{"a", ?}, {?}]'
    expect(g, {x: a, s: a, arg: a, inner["sub"]: a, res: a})


def test_named_computation_inside_out_propagation():
    g = graph(a=2, b=2)
    x = g.value([8, 2])
    s = ew(g, x, x)

    def body(g, a):
        return g.constraint(g.constraint(a, '[{"a"}, {}]'), '[{"b"}, {}]')

    arg, res = _named_computation(g, s, body)
    r = g.func_result(res)
    g.propagate(**BASIC)
    expect(g, {x: '[{"a", ?}, {?}]', s: '[{"a", ?}, {?}]', arg: '[{"a", ?}, {?}]', res: '[{"b", ?}, {?}]', r: '[{"b", ?}, {?}]'})


def _mc_edges(arg, out_result, body_first_no_rule):
    g = graph(a=2, b=2, c=2)
    x = g.value([32, 32], arg)
    inner = {}

    def body(g, args):
        v = args[0]
        if body_first_no_rule:
            inner["cc"] = no_rule(g, v)
            v = inner["cc"]
        inner["add"] = ew(g, v, v, out_sharding='[{"a", ?}, {?}]')
        return inner["add"] if body_first_no_rule else no_rule(g, inner["add"])

    (res,) = g.manual_computation([x], ['[{"b", ?}, {?}]'], ['[{"b", ?}, {?}]'], ["b"], body)
    out = g.value([32, 32], out_result, name="edge")
    g.data_flow_edge([res], [out])
    g.func_result(out)
    g.propagate(**BASIC)
    return g, x, inner, res, out


def test_manual_computation_update_in_sharding_edge():
    # Shardy keeps the in_sharding attribute and grows the edge inside; our in_sharding value is
    # that edge, so it shows the grown sharding: operand, body and results match Shardy's.
    g, x, inner, res, out = _mc_edges('[{?}, {"c", ?}]', None, body_first_no_rule=False)
    expect(g, {x: '[{"b", "a", ?}, {"c", ?}]', inner["add"]: '[{"a", ?}, {"c", ?}]', out: '[{"b", ?}, {?}]'})


def test_manual_computation_update_out_sharding_edge():
    g, x, inner, res, out = _mc_edges(None, '[{?}, {"c", ?}]', body_first_no_rule=True)
    expect(g, {x: '[{"b", ?}, {?}]', inner["cc"]: '[{"a", ?}, {"c", ?}]', inner["add"]: '[{"a", ?}, {"c", ?}]',
               out: '[{"b", "a", ?}, {"c", ?}]'})


# ---- explicit sdy.data_flow_edge ops in MLIR (our programs, checked against the live Shardy) ----
# In Shardy's form an edge's owner (a case/while/barrier result, a region argument) carries no
# sharding: the `sdy.data_flow_edge` op reading it does, and grows as propagation goes.

def _ir_pair(text, passes=None, **options):
    import pytest
    live = pytest.importorskip("live_shardy_values")
    compared, differ = live.differences(text, passes or live.BASIC, **(options or live.BASIC_OPTIONS))
    assert compared >= 4 and differ == [], differ
    return live.ours(text, **(options or live.BASIC_OPTIONS)).functions["main"]


CASE_WITH_EDGE = """
sdy.mesh @m = <["x"=2, "y"=4]>
func.func @main(%p: tensor<i32>, %a: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"y"}, {}]>},
                %b: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %0 = "stablehlo.case"(%p) ({
    stablehlo.return %a : tensor<16x8xf32>
  }, {
    stablehlo.return %b : tensor<16x8xf32>
  }) : (tensor<i32>) -> tensor<16x8xf32>
  %1 = sdy.data_flow_edge %0 : tensor<16x8xf32>
  %2 = stablehlo.negate %1 : tensor<16x8xf32>
  return %2 : tensor<16x8xf32>
}
"""


def test_explicit_edge_on_a_case_carries_the_owners_sharding():
    fn = _ir_pair(CASE_WITH_EDGE)
    case, edge, negate = fn.body.ops[:3]
    assert case.results[0].sharding is None  # the owner carries none
    assert str(edge.attrs["sharding"]) == '#sdy.sharding<@m, [{"y", ?}, {?}]>'
    assert str(fn.args[2].sharding) == '#sdy.sharding<@m, [{"y", ?}, {?}]>'  # back through the edge
    assert str(negate.results[0].sharding) == '#sdy.sharding<@m, [{"y", ?}, {?}]>'


WHILE_AND_NAMED = """
sdy.mesh @m = <["x"=2, "y"=2]>
func.func @main(%a: tensor<8x4xf32>) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {"x"}]>}) {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%it = %a, %i = %c) : tensor<8x4xf32>, tensor<i32>
    cond {
    %p = stablehlo.compare LT, %i, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %s = stablehlo.sine %it : tensor<8x4xf32>
    stablehlo.return %s, %i : tensor<8x4xf32>, tensor<i32>
  }
  %1 = sdy.data_flow_edge %0#0 : tensor<8x4xf32>
  %2 = sdy.named_computation<"f">(%1) (%arg1: tensor<8x4xf32>) {
    %3 = sdy.data_flow_edge %arg1 : tensor<8x4xf32>
    %4 = stablehlo.abs %3 : tensor<8x4xf32>
    sdy.return %4 : tensor<8x4xf32>
  } : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %5 = sdy.data_flow_edge %2 : tensor<8x4xf32>
  return %5 : tensor<8x4xf32>
}
"""


def test_explicit_edges_of_a_while_and_a_named_computation_carry_a_result_sharding_back():
    fn = _ir_pair(WHILE_AND_NAMED)
    assert str(fn.args[0].sharding) == '#sdy.sharding<@m, [{?}, {"x", ?}]>'
    while_op = fn.body.ops[1]
    assert all(r.sharding is None for r in while_op.results)
    named = fn.body.ops[3]
    assert str(named.regions[0].block.ops[0].attrs["sharding"]) == '#sdy.sharding<@m, [{?}, {"x", ?}]>'


MANUAL_WITH_EDGES = """
sdy.mesh @m = <["x"=2, "y"=2, "z"=2]>
func.func @main(%a: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@m, [{?}, {"z", ?}]>}) -> tensor<16x8xf32> {
  %0 = sdy.manual_computation(%a) in_shardings=[<@m, [{"x", ?}, {?}]>] out_shardings=[<@m, [{"x", ?}, {?}]>]
      manual_axes={"x"} (%b: tensor<8x8xf32>) {
    %1 = sdy.data_flow_edge %b sharding=<@m, [{?}, {?}]> : tensor<8x8xf32>
    %2 = stablehlo.cosine %1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"y", ?}, {?}]>]>} : tensor<8x8xf32>
    sdy.return %2 : tensor<8x8xf32>
  } : (tensor<16x8xf32>) -> tensor<16x8xf32>
  %3 = sdy.data_flow_edge %0 sharding=<@m, [{"x", ?}, {?}]> : tensor<16x8xf32>
  return %3 : tensor<16x8xf32>
}
"""


def test_explicit_edges_of_a_manual_computation_grow_and_its_in_shardings_stay():
    # Shardy's manual_computation_update_in_sharding_edge: the in-sharding edge inside the body
    # grows, the in_shardings attribute does not; manual "x" never enters the body
    fn = _ir_pair(MANUAL_WITH_EDGES)
    mc = fn.body.ops[0]
    assert str(mc.attrs["in_shardings"][0]) == '#sdy.sharding<@m, [{"x", ?}, {?}]>'
    inner = mc.regions[0].block.ops[0].attrs["sharding"]
    assert str(inner) == '#sdy.sharding<@m, [{"y", ?}, {"z", ?}]>'
    assert str(fn.args[0].sharding) == '#sdy.sharding<@m, [{"x", "y", ?}, {"z", ?}]>'
