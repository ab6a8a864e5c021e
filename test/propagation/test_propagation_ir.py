"""spmdkit.propagate on spmdkit.ir programs (MLIR text in, propagated MLIR out) and the
`spmdkit propagate` / `spmdkit explain` commands. Needs spmdkit.ir (issue 8); tables come from a
callback here, so the test does not wait for the rules' factors(); the last test uses the
registry's factor tables where this build has them."""
import pytest

ir = pytest.importorskip("spmdkit.ir")

import spmdkit  # noqa: E402
from spmdkit.cli import main as cli_main  # noqa: E402
from spmdkit.propagation.from_ir import propagate_program  # noqa: E402

PROGRAM = """
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>},
                %arg1: tensor<8x8xf32>, %arg2: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = sdy.propagation_barrier %arg2 allowed_direction=NONE : tensor<8x8xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<8x8xf32>
  %3 = sdy.sharding_constraint %2 <@mesh, [{?}, {?}]> : tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}
"""

ELEMENTWISE = {"stablehlo.add", "stablehlo.multiply", "stablehlo.tanh", "stablehlo.subtract"}


def elementwise_tables(op):
    if op.name not in ELEMENTWISE:
        raise LookupError(f"no table for {op.name}")
    d = "abcdefgh"[:len(op.results[0].type.shape)]
    return ",".join([d] * len(op.operands)) + "->" + d


def test_propagate_program_writes_shardings_back():
    program = ir.parse(PROGRAM)
    out = propagate_program(program, elementwise_tables)
    text = ir.print_program(program)
    ab = '[{"a", ?}, {"b", ?}]'
    fn = program.main
    assert str(fn.args[1].sharding).endswith(ab + ">")
    assert fn.args[2].sharding is None  # behind the barrier's NONE
    assert f"sdy.sharding_constraint %2 <@mesh, {ab}>" in text
    assert str(fn.result_shardings[0]).endswith(ab + ">")
    assert out.opaque == []
    # the printed program reads back and propagates to the same text (a fixed point)
    again = ir.parse(text)
    propagate_program(again, elementwise_tables)
    assert ir.print_program(again) == text


def test_spmdkit_propagate_api_returns_the_program():
    program = ir.parse(PROGRAM)
    assert spmdkit.propagate(program, factor_table_of=elementwise_tables) is program
    assert program.main.args[1].sharding is not None


def test_while_and_manual_computation_from_mlir():
    text = """
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"a"}]>}, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{"b", ?}, {?}]>] out_shardings=[<@mesh, [{"b", ?}, {?}]>] manual_axes={"b"} (%arg2: tensor<4x8xf32>) {
    %1 = stablehlo.tanh %arg2 : tensor<4x8xf32>
    sdy.return %1 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = stablehlo.add %0, %arg0 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
"""
    program = ir.parse(text)
    out = propagate_program(program, elementwise_tables)
    mc = program.main.body.ops[0]
    inner = mc.regions[0].block.ops[0].results[0]
    # "a" from arg0 enters the body (a free axis); "b" (manual, on dim 0) never does
    assert str(inner.sharding).endswith('[{?}, {"a", ?}]>'), str(inner.sharding)
    assert str(program.main.args[1].sharding).endswith('[{"b", ?}, {"a", ?}]>')
    assert out.opaque == []


def test_cli_propagate_and_explain(tmp_path, capsys, monkeypatch):
    path = tmp_path / "p.mlir"
    path.write_text(PROGRAM)
    import spmdkit.propagation.from_ir as from_ir
    monkeypatch.setattr(from_ir, "default_factor_table", elementwise_tables)
    assert cli_main(["propagate", str(path)]) == 0
    printed = capsys.readouterr().out
    assert 'stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}, {"b", ?}]>]>}' in printed
    assert cli_main(["explain", str(path), "@main.%0"]) == 0
    why = capsys.readouterr().out
    assert "@main.%0" in why and "stablehlo.add" in why and "@main.%arg0" in why
    assert cli_main(["propagate", str(tmp_path / "missing.mlir")]) == 2


def test_registry_factor_tables_when_available():
    from spmdkit import core
    if not core.contains_spmd_rule("stablehlo.add") or not hasattr(core.get_phi_spmd_rule("stablehlo.add"), "factors"):
        pytest.skip("this build's registry has no stablehlo rules with factors() (jax-rules branch)")
    program = ir.parse(PROGRAM)
    out = propagate_program(program)
    assert out.opaque == []
    assert str(program.main.args[1].sharding).endswith('[{"a", ?}, {"b", ?}]>')


PRESET = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<8x32xf32> {
  %0 = stablehlo.custom_call @my_matmul(%arg0, %arg1) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=32, k=16} reduction={k}>} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}
"""


def test_a_preset_sharding_rule_is_the_ops_table():
    """A custom_call has no registry rule; its `sdy.sharding_rule` attribute (Shardy: a pre-set
    rule always wins) is its factor table, so i and j flow from the operands to the result."""
    program = ir.parse(PRESET)
    spmdkit.propagate(program)
    result = program.main.body.ops[0].results[0]
    assert str(result.sharding) == '#sdy.sharding<@mesh, [{"x", ?}, {"y", ?}]>'


def test_a_preset_rule_that_is_not_a_rule_is_an_error():
    """MLIR's verifier refuses it as the text is read: a typed error naming the line and the op."""
    text = PRESET.replace("#sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=32, k=16} reduction={k}>",
                          '"not a rule"')
    with pytest.raises(ir.IRError, match=r"line 5.*stablehlo.custom_call.*sdy.sharding_rule"):
        ir.parse(text)


def test_priorities_are_applied_and_dropped_in_the_printed_program():
    text = """
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}p1, {"b", ?}p1]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", ?}p0, {?}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = stablehlo.tanh %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
"""
    program = ir.parse(text)
    propagate_program(program, elementwise_tables)
    out = ir.print_program(program)
    # p0 ran first: "b" took dim 0 everywhere it could, so arg0's p1 "b" on dim 1 finds it taken
    assert str(program.main.args[1].sharding).endswith('[{"b", ?}, {?}]>')
    assert str(program.main.result_shardings[0]).endswith('[{"b", ?}, {?}]>')
    assert "}p0" not in out and "}p1" not in out  # applied, then dropped (as Shardy prints it)
    again = ir.parse(out)
    propagate_program(again, elementwise_tables)
    assert ir.print_program(again) == out


def test_a_maximal_sharding_has_no_dims_and_stays_put():
    # Shardy writes a value on a one-device mesh as <@one, []> whatever its rank.
    text = """
sdy.mesh @m = <["x"=2]>
sdy.mesh @one = <[], device_ids=[0]>
func.func @main(%a: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@m, [{"x"}, {}]>}) -> tensor<4x4xf32> {
  %0 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@one, []>]>} : tensor<4x4xf32>
  %1 = stablehlo.tanh %0 : tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
"""
    program = ir.parse(text)
    spmdkit.propagate(program)
    out = ir.print_program(program)
    assert "<@one, []>" in out  # printed as Shardy writes it, not as [{}, {}]
    ops = program.main.body.ops
    assert ops[1].results[0].sharding is None  # nothing crosses from the one device's value


@pytest.mark.parametrize("k", [1, 3, 5])
def test_a_dim_the_op_creates_takes_its_size_from_the_result(k):
    # top_k's k is a factor only its results hold: the rule's table (from the operand) has no size
    # for it; propagation sizes it from the result, and the batch split passes to both results
    import jax
    import jax.numpy as jnp

    from spmdkit.ir import import_jax
    from spmdkit.sharding import Mesh, parse_sharding
    program = import_jax(lambda x: jax.lax.top_k(jnp.tanh(x), k), jnp.ones((8, 4, 16)),
                         arg_shardings=[parse_sharding('#sdy.sharding<@mesh, [{"a"}, {"b"}, {}]>')],
                         meshes={"mesh": Mesh({"a": 2, "b": 2})})
    spmdkit.propagate(program)
    top_k = next(op for op in program.main.body.ops if op.name == "jax.top_k")
    for r in top_k.results:
        assert r.type.shape == (8, 4, k)
        assert [[a.name for a in d.axes] for d in r.sharding.dims] == [["a"], ["b"], []]


CHLO_PROGRAM = """
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}, {}]>})
    -> (tensor<8x4x3xf32>, tensor<8x4x3xi32>) {
  %sq = chlo.square %arg0 : tensor<8x4x16xf32> -> tensor<8x4x16xf32>
  %values, %indices = chlo.top_k(%sq, k = 3) : tensor<8x4x16xf32> -> (tensor<8x4x3xf32>, tensor<8x4x3xi32>)
  return %values, %indices : tensor<8x4x3xf32>, tensor<8x4x3xi32>
}
"""


def test_chlo_ops_shardy_has_no_rule_for_are_opaque_to_propagation():
    # jax.jit lowers x*x to chlo.square and lax.top_k to chlo.top_k; jaxlib's Shardy has no rule
    # for either, so its values stay as Shardy leaves them (test_propagation_vs_live_shardy.py
    # compares this program with the live Shardy)
    program = ir.parse(CHLO_PROGRAM)
    opaque = propagate_program(program).opaque
    assert sorted(name for name, _ in opaque) == ["chlo.square", "chlo.top_k"]
    assert all("Shardy has no sharding rule" in why for _, why in opaque)
    top_k = next(op for op in program.main.body.ops if op.name == "chlo.top_k")
    assert all(r.sharding is None or not any(d.axes for d in r.sharding.dims) for r in top_k.results)


def test_chlo_ops_jax_lowers_to_are_searched_by_auto():
    # the search needs a rule for every op: chlo.top_k has jax.top_k's, chlo.square (what optax's
    # adam lowers to) jax.square's
    from spmdkit.auto import auto_shard
    text = CHLO_PROGRAM
    program = ir.parse(text)
    auto_shard(program)
    op = next(op for op in program.main.body.ops if op.name == "chlo.top_k")
    assert all(r.sharding is not None for r in op.results)
    assert all(not d.axes for r in op.results for d in r.sharding.dims[2:])  # k is never split
