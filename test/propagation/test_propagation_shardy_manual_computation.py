"""Shardy's basic_propagation_manual_computation.mlir scenarios (data-flow edges + basic
propagation): free axes cross a manual_computation boundary both ways, manual axes never enter
the body, and in/out shardings grow. `sdy_testonly` custom calls have no rule: modelled as an op
whose factors are all blocked."""
from prop_helpers import expect, ew, graph

BASIC = dict(aggressive=False, op_priority=False, user_priority=False)


def no_rule_op(g, *operands, shape=None):
    """A custom_call without a sharding rule: nothing propagates through it."""
    if not operands:
        return g.value(shape, name="sdy_testonly")
    return g.op("sdy_testonly", "ij->ij", list(operands), [g.shape(operands[0])], blocked="ij")


def mesh():
    return graph(a=2, b=2, c=2, d=2, e=2, f=2, g=2)


def _mc(g, operands, ins, outs, manual, body):
    """Returns (results, in_edge values, out_edge values, body args, body returns)."""
    captured = {}

    def wrapped(g, args):
        captured["args"] = args
        captured["rets"] = body(g, args)
        return captured["rets"]

    res = g.manual_computation(operands, ins, outs, manual, wrapped)
    n = g.num_values
    # the boundary values the builder made, by name
    in_edges = [v for v in range(n) if g.value_name(v).startswith("in_sharding(")]
    out_edges = [v for v in range(n) if g.value_name(v).startswith("out_sharding(")]
    return res, in_edges, out_edges, captured["args"], captured["rets"]


def test_output_sharding_annotation():
    g = mesh()
    x = g.value([32, 32])
    add = {}

    def body(g, args):
        t = no_rule_op(g, args[0])
        add["v"] = ew(g, t, t)
        return add["v"]

    (res,), _, _, _, _ = _mc(g, [x], ["[{?}, {?}]"], ['[{"a", ?}, {?}]'], [], body)
    r = g.func_result(res)
    g.propagate(**BASIC)
    expect(g, {add["v"]: '[{"a", ?}, {?}]', r: '[{"a", ?}, {?}]', x: "[{?}, {?}]"})


def test_output_inside_body_forward_propagation():
    g = mesh()
    x = g.value([32, 32])

    def body(g, args):
        t = no_rule_op(g, args[0])
        return ew(g, t, t, out_sharding='[{"a"}, {}]')

    (res,), _, (out_edge,), _, _ = _mc(g, [x], ["[{?}, {?}]"], ["[{?}, {?}]"], [], body)
    r = g.func_result(res)
    g.propagate(**BASIC)
    expect(g, {out_edge: '[{"a", ?}, {?}]', r: '[{"a", ?}, {?}]', x: "[{?}, {?}]"})


def test_directly_returned_body_arg():
    g = mesh()
    x = g.value([32, 32])
    (res,), (in_edge,), (out_edge,), _, _ = _mc(g, [x], ['[{"a", ?}, {?}]'], ['[{"a", ?}, {?}]'], [], lambda g, a: a[0])
    r = g.func_result(res)
    g.propagate(**BASIC)
    a = '[{"a", ?}, {?}]'
    expect(g, {x: a, in_edge: a, out_edge: a, r: a})


def test_directly_returned_body_arg_conflict():
    g = mesh()
    x = g.value([32, 32])
    (res,), (in_edge,), (out_edge,), _, _ = _mc(g, [x], ['[{"a", ?}, {"c", ?}]'], ['[{"a", "b", ?}, {"d", ?}]'], [],
                                                 lambda g, a: a[0])
    r = g.func_result(res)
    g.propagate(**BASIC)
    expect(g, {x: '[{"a", "b", ?}, {"c", ?}]', in_edge: '[{"a", "b", ?}, {"c", ?}]', out_edge: '[{"a", "b", ?}, {"d", ?}]',
               r: '[{"a", "b", ?}, {"d", ?}]'})


def test_sharding_inside_body_propagation():
    g = mesh()
    x = g.value([32, 32])
    (res,), (in_edge,), (out_edge,), _, _ = _mc(g, [x], ["[{?}, {?}]"], ["[{?}, {?}]"], [],
                                                 lambda g, a: ew(g, a[0], a[0], out_sharding='[{"a"}, {}]'))
    r = g.func_result(res)
    g.propagate(**BASIC)
    a = '[{"a", ?}, {?}]'
    expect(g, {x: a, in_edge: a, out_edge: a, r: a})


def test_append_in_sharding_from_inside():
    g = mesh()
    x = g.value([32, 32])

    def body(g, args):
        return no_rule_op(g, ew(g, args[0], args[0], out_sharding='[{"a", ?}, {?}]'))

    (res,), (in_edge,), (out_edge,), (arg,), _ = _mc(g, [x], ['[{"b", ?}, {?}]'], ['[{"b", ?}, {?}]'], ["b"], body)
    r = g.func_result(res)
    g.propagate(**BASIC)
    expect(g, {x: '[{"b", "a", ?}, {?}]', in_edge: '[{"b", "a", ?}, {?}]', arg: '[{"a", ?}, {?}]',
               out_edge: '[{"b", ?}, {?}]', r: '[{"b", ?}, {?}]'})
    assert g.shape(arg) == [16, 32]


def test_append_out_sharding_from_inside():
    g = mesh()
    x = g.value([32, 32])

    def body(g, args):
        t = no_rule_op(g, args[0])
        return ew(g, t, t, out_sharding='[{"a", ?}, {?}]')

    (res,), (in_edge,), (out_edge,), _, _ = _mc(g, [x], ['[{"b", ?}, {?}]'], ['[{"b", ?}, {?}]'], ["b"], body)
    r = g.func_result(res)
    g.propagate(**BASIC)
    expect(g, {x: '[{"b", ?}, {?}]', in_edge: '[{"b", ?}, {?}]', out_edge: '[{"b", "a", ?}, {?}]', r: '[{"b", "a", ?}, {?}]'})


def test_append_in_sharding_from_outside():
    g = mesh()
    x = g.value([32, 32])
    s = ew(g, x, x, out_sharding='[{"b", "a", ?}, {?}]')
    inner = {}

    def body(g, args):
        inner["add"] = ew(g, args[0], args[0])
        return no_rule_op(g, inner["add"])

    (res,), (in_edge,), (out_edge,), _, _ = _mc(g, [s], ['[{"b", ?}, {?}]'], ['[{"b", ?}, {?}]'], ["b"], body)
    r = g.func_result(res)
    g.propagate(**BASIC)
    expect(g, {x: '[{"b", "a", ?}, {?}]', in_edge: '[{"b", "a", ?}, {?}]', inner["add"]: '[{"a", ?}, {?}]',
               out_edge: '[{"b", ?}, {?}]', r: '[{"b", ?}, {?}]'})


def test_append_in_sharding_from_outside_multiple_operands():
    g = mesh()
    x, y = g.value([32, 32]), g.value([32, 32])
    s = ew(g, y, y, out_sharding='[{"b", "a", ?}, {?}]')
    inner = {}

    def body(g, args):
        inner["add"] = ew(g, args[1], args[1])
        g.op("sdy_testonly", "ij->", [args[0]], [], blocked="ij")
        return inner["add"]

    (res,), in_edges, (out_edge,), args, _ = _mc(g, [x, s], ['[{?}, {?}], replicated={"b"}', '[{"b", ?}, {?}]'],
                                                  ['[{"b", ?}, {?}]'], ["b"], body)
    r = g.func_result(res)
    g.propagate(**BASIC)
    expect(g, {x: "[{?}, {?}]", y: '[{"b", "a", ?}, {?}]', in_edges[0]: "[{?}, {?}]", in_edges[1]: '[{"b", "a", ?}, {?}]',
               inner["add"]: '[{"a", ?}, {?}]', out_edge: '[{"b", "a", ?}, {?}]', r: '[{"b", "a", ?}, {?}]'})
    assert [g.shape(a) for a in args] == [[32, 32], [16, 32]]


def test_append_out_sharding_from_outside():
    g = mesh()
    x = g.value([32, 32])
    inner = {}

    def body(g, args):
        inner["cc"] = g.op("sdy_testonly", "ij->ij", [args[0]], [[16, 32]], blocked="ij")
        inner["add"] = ew(g, inner["cc"], inner["cc"])
        return inner["add"]

    (res,), (in_edge,), (out_edge,), _, _ = _mc(g, [x], ['[{"b", ?}, {?}]'], ['[{"b", ?}, {?}]'], ["b"], body)
    s = ew(g, res, res, out_sharding='[{"b", "a", ?}, {?}]')
    r = g.func_result(s)
    g.propagate(**BASIC)
    expect(g, {x: '[{"b", ?}, {?}]', in_edge: '[{"b", ?}, {?}]', inner["cc"]: '[{"a", ?}, {?}]', inner["add"]: '[{"a", ?}, {?}]',
               out_edge: '[{"b", "a", ?}, {?}]', r: '[{"b", "a", ?}, {?}]'})


def test_append_out_sharding_from_inside_multiple_results():
    g = mesh()
    x = g.value([32, 32])
    inner = {}

    def body(g, args):
        inner["cc1"] = g.op("sdy_testonly", "ij->ij", [args[0]], [[16, 32]], blocked="ij")
        ret1 = ew(g, inner["cc1"], inner["cc1"], out_sharding='[{"a", ?}, {?}]')
        inner["cc0"] = no_rule_op(g, shape=[32, 32])
        inner["ret0"] = ew(g, inner["cc0"], inner["cc0"])
        return [inner["ret0"], ret1]

    res, (in_edge,), out_edges, _, _ = _mc(g, [x], ['[{"b", ?}, {?}]'],
                                            ['[{?}, {?}], replicated={"b"}', '[{"b", ?}, {?}]'], ["b"], body)
    rs = [g.func_result(v) for v in res]
    g.propagate(**BASIC)
    expect(g, {inner["cc1"]: '[{"a", ?}, {?}]', inner["cc0"]: "[{?}, {?}]", inner["ret0"]: "[{?}, {?}]",
               out_edges[0]: "[{?}, {?}]", out_edges[1]: '[{"b", "a", ?}, {?}]', rs[0]: "[{?}, {?}]",
               rs[1]: '[{"b", "a", ?}, {?}]'})


def test_manual_axes_never_enter_the_body():
    # Our own check of the boundary rule: an outer value sharded on the manual axis in another
    # dim gives the body only its free axes.
    g = mesh()
    x = g.value([32, 32], '[{"b"}, {"a", "c"}]')
    (res,), _, _, (arg,), _ = _mc(g, [x], ['[{"b", ?}, {?}]'], ['[{"b", ?}, {?}]'], ["b"], lambda g, a: ew(g, a[0], a[0]))
    g.propagate(**BASIC)
    assert g.sharding(arg) == '[{?}, {"a", "c", ?}]'
    assert all(name != "b" for dim in g.dim_axes(arg) for name, _, _ in dim)


def _one_mc(arg=None, ins='[{"b", ?}, {?}]', outs='[{"b", ?}, {?}]', manual=("b",), body_sharding=None,
            before=False, after=False, result=None, shape=(32, 32), from_inside="both"):
    """x -> [add] -> manual_computation(ins, outs){ [testonly] add(body_sharding) [testonly] } -> [add] -> return."""
    g = mesh()
    x = g.value(list(shape), arg)
    src = ew(g, x, x, name="add_before") if before else x
    inner = {}

    def body(g, args):
        v = args[0]
        if from_inside == "in":  # the body's sharding only flows back to the in_sharding
            inner["add"] = ew(g, v, v, out_sharding=body_sharding)
            return no_rule_op(g, inner["add"])
        if from_inside == "out":
            v = no_rule_op(g, v)
        inner["add"] = ew(g, v, v, out_sharding=body_sharding)
        return inner["add"]

    (res,), (in_edge,), (out_edge,), _, _ = _mc(g, [src], [ins], [outs], list(manual), body)
    tail = ew(g, res, res, name="add_after") if after else res
    r = g.func_result(tail, result)
    g.propagate(**BASIC)
    return g, dict(x=x, src=src, in_edge=in_edge, out_edge=out_edge, res=res, tail=tail, r=r, add=inner["add"])


def test_remove_existing_free_axes_in_shardings():
    g, v = _one_mc(ins='[{"b", "a", ?}, {?}]', body_sharding='[{"a", "c", ?}, {?}]', from_inside="in")
    expect(g, {v["x"]: '[{"b", "a", "c", ?}, {?}]', v["in_edge"]: '[{"b", "a", "c", ?}, {?}]',
               v["out_edge"]: '[{"b", ?}, {?}]', v["r"]: '[{"b", ?}, {?}]'})


def test_remove_existing_free_axes_out_shardings():
    g, v = _one_mc(outs='[{"b", "a", ?}, {?}]', body_sharding='[{"a", "c", ?}, {?}]', from_inside="out")
    expect(g, {v["x"]: '[{"b", ?}, {?}]', v["in_edge"]: '[{"b", ?}, {?}]',
               v["out_edge"]: '[{"b", "a", "c", ?}, {?}]', v["r"]: '[{"b", "a", "c", ?}, {?}]'})


def test_multiple_manual_axes_same_dim():
    g, v = _one_mc(ins='[{"a", "b", ?}, {?}]', outs='[{"b", "a", ?}, {?}]', manual=("a", "b"), body_sharding='[{"c", ?}, {?}]')
    expect(g, {v["x"]: '[{"a", "b", "c", ?}, {?}]', v["in_edge"]: '[{"a", "b", "c", ?}, {?}]',
               v["out_edge"]: '[{"b", "a", "c", ?}, {?}]', v["r"]: '[{"b", "a", "c", ?}, {?}]'})


def test_multiple_manual_axes_different_dim():
    g, v = _one_mc(ins='[{"a", "b", ?}, {"d", ?}], replicated={"c"}', outs='[{"b", "a", ?}, {"c", ?}], replicated={"d"}',
                   manual=("a", "b", "c", "d"), body_sharding='[{"e", ?}, {"f", "g", ?}]')
    expect(g, {v["x"]: '[{"a", "b", "e", ?}, {"d", "f", "g", ?}]', v["in_edge"]: '[{"a", "b", "e", ?}, {"d", "f", "g", ?}]',
               v["out_edge"]: '[{"b", "a", "e", ?}, {"c", "f", "g", ?}]', v["r"]: '[{"b", "a", "e", ?}, {"c", "f", "g", ?}]'})
    assert g.sharding_full(v["in_edge"]).endswith('replicated={"c"}>')
    assert g.shape(g.num_values - 1) == [32, 32] and g.sharding(v["add"]) == '[{"e", ?}, {"f", "g", ?}]'


def test_free_axis_on_own_dim_from_inside():
    g, v = _one_mc(body_sharding='[{?}, {"a", ?}]')
    ba = '[{"b", ?}, {"a", ?}]'
    expect(g, {v["x"]: ba, v["in_edge"]: ba, v["out_edge"]: ba, v["r"]: ba})


def test_free_axis_on_own_dim_from_outside():
    g, v = _one_mc(arg='[{?}, {"a", ?}, {?}]', ins='[{"b", ?}, {?}, {?}]', outs='[{"b", ?}, {?}, {?}]',
                   result='[{?}, {?}, {"c", ?}]', shape=(32, 32, 32))
    bac = '[{"b", ?}, {"a", ?}, {"c", ?}]'
    expect(g, {v["x"]: bac, v["in_edge"]: bac, v["out_edge"]: bac, v["res"]: bac})


def test_replicated_manual_axes():
    g, v = _one_mc(ins='[{"b", ?}, {?}], replicated={"c"}', outs='[{"b", ?}, {?}], replicated={"c"}', manual=("b", "c"),
                   body_sharding='[{"a", ?}, {?}]', before=True, after=True)
    ba = '[{"b", "a", ?}, {?}]'
    expect(g, {v["x"]: ba, v["src"]: ba, v["in_edge"]: ba, v["out_edge"]: ba, v["tail"]: ba, v["r"]: ba})
    assert all(name not in ("b", "c") for dim in g.dim_axes(v["add"]) for name, _, _ in dim)


def test_replicated_manual_axes_directly_used_returned_from_func():
    g, v = _one_mc(ins='[{"b", ?}, {?}], replicated={"c"}', outs='[{"b", ?}, {?}], replicated={"c"}', manual=("b", "c"),
                   body_sharding='[{"a", ?}, {?}]')
    ba = '[{"b", "a", ?}, {?}]'
    expect(g, {v["x"]: ba, v["in_edge"]: ba, v["out_edge"]: ba, v["r"]: ba})


def test_replicated_free_axes():
    g, v = _one_mc(ins='[{"b", ?}, {?}], replicated={"c"}', outs='[{"b", ?}, {?}], replicated={"c"}',
                   body_sharding='[{"a", ?}, {?}]', before=True, after=True)
    ba = '[{"b", "a", ?}, {?}]'
    expect(g, {v["x"]: ba, v["src"]: ba, v["in_edge"]: ba, v["out_edge"]: ba, v["tail"]: ba})
    assert g.sharding_full(v["in_edge"]).endswith('replicated={"c"}>') and "replicated" not in g.sharding_full(v["tail"])


def test_replicated_free_axes_directly_used_returned_from_func():
    g, v = _one_mc(ins='[{"b", ?}, {?}], replicated={"c"}', outs='[{"b", ?}, {?}], replicated={"c"}',
                   body_sharding='[{"a", ?}, {?}]')
    ba = '[{"b", "a", ?}, {?}]'
    expect(g, {v["x"]: ba, v["in_edge"]: ba, v["out_edge"]: ba, v["r"]: ba})


def test_replicated_inside_body():
    g, v = _one_mc(body_sharding='[{"a", ?}, {?}], replicated={"c"}')
    ba = '[{"b", "a", ?}, {?}]'
    expect(g, {v["x"]: ba, v["in_edge"]: ba, v["out_edge"]: ba, v["r"]: ba})
    assert "replicated" not in g.sharding_full(v["in_edge"]) and "replicated" not in g.sharding_full(v["out_edge"])


def test_preserve_untouched_closed_dim():
    g, v = _one_mc(ins='[{"b", ?}, {}]', outs='[{"b", ?}, {}]', body_sharding='[{"a", ?}, {?}]')
    expect(g, {v["x"]: '[{"b", "a", ?}, {?}]', v["in_edge"]: '[{"b", "a", ?}, {}]', v["out_edge"]: '[{"b", "a", ?}, {}]',
               v["r"]: '[{"b", "a", ?}, {?}]'})


def test_dont_propagate_into_closed_dim_from_inside():
    g, v = _one_mc(ins='[{"b"}, {?}]', outs='[{"b"}, {?}]', body_sharding='[{"a", ?}, {?}]')
    expect(g, {v["x"]: '[{"b", ?}, {?}]', v["in_edge"]: '[{"b"}, {?}]', v["out_edge"]: '[{"b"}, {?}]', v["r"]: '[{"b", ?}, {?}]'})


def test_dont_propagate_into_out_sharding_closed_dim_from_outside():
    g = mesh()
    x = g.value([32, 32])
    (res,), (in_edge,), (out_edge,), _, rets = _mc(g, [x], ['[{"b", ?}, {?}]'], ['[{"b"}, {?}]'], ["b"],
                                                   lambda g, a: ew(g, a[0], a[0]))
    s = ew(g, res, res, out_sharding='[{"b", "a", ?}, {?}]', name="add_after")
    r = g.func_result(s)
    g.propagate(**BASIC)
    expect(g, {x: '[{"b", ?}, {?}]', in_edge: '[{"b", ?}, {?}]', out_edge: '[{"b"}, {?}]', rets: "[{?}, {?}]",
               r: '[{"b", "a", ?}, {?}]'})


def test_dont_propagate_into_in_sharding_closed_dim_from_outside():
    g = mesh()
    x = g.value([32, 32])
    s = ew(g, x, x, out_sharding='[{"b", "a", ?}, {?}]', name="add_before")
    (res,), (in_edge,), (out_edge,), _, rets = _mc(g, [s], ['[{"b"}, {?}]'], ['[{"b", ?}, {?}]'], ["b"],
                                                   lambda g, a: ew(g, a[0], a[0]))
    r = g.func_result(res)
    g.propagate(**BASIC)
    expect(g, {x: '[{"b", "a", ?}, {?}]', in_edge: '[{"b"}, {?}]', out_edge: '[{"b", ?}, {?}]', rets: "[{?}, {?}]",
               r: '[{"b", ?}, {?}]'})


def test_manual_computation_with_tokens():
    # the token operand carries no sharding; the tensor operand's free axis enters, "b" stays manual
    g = mesh()
    x = g.value([4, 4], '[{"a"}, {?}]')
    inner = {}

    def body(g, args):
        inner["add"] = ew(g, args[0], args[0])
        return inner["add"]

    (res,), (in_edge,), (out_edge,), (arg,), _ = _mc(g, [x], ['[{?}, {"b"}]'], ['[{?}, {"b"}]'], ["b"], body)
    r = g.func_result(res)
    g.propagate(**BASIC)
    expect(g, {x: '[{"a"}, {"b", ?}]', in_edge: '[{"a", ?}, {"b"}]', out_edge: '[{"a", ?}, {"b"}]',
               inner["add"]: '[{"a", ?}, {?}]', r: '[{"a", ?}, {"b", ?}]'})
    assert g.shape(arg) == [4, 2]


# ---- the same in MLIR: what spmdkit.propagate writes back (our programs, checked against the
# live Shardy run as Shardy's test file runs it: add data-flow edges, propagate, sink them) ----

def _ir_pair(text):
    import pytest
    live = pytest.importorskip("live_shardy_values")
    compared, differ = live.differences(text, live.BASIC_WITH_EDGES, **live.BASIC_OPTIONS)
    assert compared >= 4 and differ == [], differ
    return live.ours(text, **live.BASIC_OPTIONS).functions["main"]


SMALLEST = """
sdy.mesh @m = <["a"=2, "b"=2]>
func.func @main(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %0 = sdy.manual_computation(%x) in_shardings=[<@m, [{?}, {?}]>] out_shardings=[<@m, [{"a", ?}, {?}]>]
      manual_axes={} (%y: tensor<16x8xf32>) {
    %1 = stablehlo.negate %y : tensor<16x8xf32>
    %2 = stablehlo.add %1, %1 : tensor<16x8xf32>
    sdy.return %2 : tensor<16x8xf32>
  } : (tensor<16x8xf32>) -> tensor<16x8xf32>
  %3 = stablehlo.abs %0 : tensor<16x8xf32>
  return %3 : tensor<16x8xf32>
}
"""


def test_in_and_out_shardings_are_written_back_and_results_carry_none():
    # the smallest case: values were written back by list position, which the boundary
    # values of a manual computation shift; its in_shardings were never written back
    fn = _ir_pair(SMALLEST)
    mc, abs_op = fn.body.ops[0], fn.body.ops[1]
    assert str(mc.attrs["in_shardings"][0]) == '#sdy.sharding<@m, [{"a", ?}, {?}]>'
    assert mc.results[0].sharding is None  # out_shardings say it
    negate, add = mc.regions[0].block.ops[:2]
    assert str(negate.results[0].sharding) == str(add.results[0].sharding) == '#sdy.sharding<@m, [{"a", ?}, {?}]>'
    assert str(abs_op.results[0].sharding) == '#sdy.sharding<@m, [{"a", ?}, {?}]>'


REPLICATED_MANUAL_OPERAND = """
sdy.mesh @m = <["a"=2, "b"=2, "c"=2]>
func.func @main(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %0 = stablehlo.multiply %w, %w {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"b", "c", ?}, {?}]>]>} : tensor<16x16xf32>
  %1 = sdy.manual_computation(%x, %0) in_shardings=[<@m, [{?}, {?}], replicated={"b"}>, <@m, [{"b", ?}, {?}]>]
      out_shardings=[<@m, [{"b", ?}, {?}]>] manual_axes={"b"} (%p: tensor<16x16xf32>, %q: tensor<8x16xf32>) {
    %2 = stablehlo.sqrt %q : tensor<8x16xf32>
    stablehlo.custom_call @side(%p) {has_side_effect = true} : (tensor<16x16xf32>) -> ()
    sdy.return %2 : tensor<8x16xf32>
  } : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %1 : tensor<16x16xf32>
}
"""


def test_a_manual_axis_never_lands_inside_the_body():
    # before: a manual axis landed on a body op and MLIR's verifier rejected the printed program
    # ("operates on axis "b" which is already bound by a parent sdy.manual_computation op")
    fn = _ir_pair(REPLICATED_MANUAL_OPERAND)
    mc = fn.body.ops[1]
    sqrt = mc.regions[0].block.ops[0]
    assert str(sqrt.results[0].sharding) == '#sdy.sharding<@m, [{"c", ?}, {?}]>'
    assert str(mc.attrs["in_shardings"][1]) == '#sdy.sharding<@m, [{"b", "c", ?}, {?}]>'
