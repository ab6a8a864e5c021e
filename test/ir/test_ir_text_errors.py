"""Bad input to the text format: typed errors naming line/column, op and value; never a crash."""
import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from spmdkit.ir import (Block, Function, IRError, IRParseError, IRVerifyError, Op, Program,
                        ShardingRankError, TensorType, UnknownAxisError, UnknownMeshError, UnknownOpError,
                        UnsupportedIRError, load, parse, print_program, to_mlir_module)
from spmdkit.ir.errors import AttributeConversionError
from spmdkit.sharding import DimSharding, Mesh, TensorSharding

DATA = os.path.join(os.path.dirname(__file__), "data")

HEAD = 'module {\n  sdy.mesh @m = <["x"=2, "y"=4]>\n'


def body(*lines, args="%a: tensor<8x8xf32>", result="tensor<8x8xf32>"):
    """A module whose main function holds `lines` (line 4 is the first of them)."""
    return HEAD + f"  func.func @main({args}) -> {result} {{\n" + "".join(f"    {l}\n" for l in lines) + "  }\n}\n"


def raises(cls, text, **kw):
    with pytest.raises(cls) as info:
        parse(text, **kw)
    return info.value


def test_malformed_type_names_line_and_column():
    e = raises(IRParseError, body("%0 = stablehlo.add %a, %a : tensor<8x8xf32", "return %0 : tensor<8x8xf32>"))
    assert (e.line, e.column) == (4, 47)
    assert "line 4, column 47" in str(e) and "tensor<8x8xf32" in str(e)


def test_undeclared_value():
    e = raises(IRParseError, body("return %nope : tensor<8x8xf32>"))
    assert e.line == 4 and "undeclared" in e.reason


def test_type_disagreement():
    e = raises(IRParseError, body("%0 = stablehlo.add %a, %a : tensor<4x8xf32>", "return %0 : tensor<4x8xf32>"))
    assert e.line == 4


def test_garbage_and_wrong_input_type():
    e = raises(UnknownOpError, "this is not mlir")  # MLIR reads a custom op named 'this'
    assert (e.line, e.column, e.op) == (1, 1, "this")
    assert raises(IRParseError, "module {").line == 1
    with pytest.raises(TypeError):
        parse(b"module {}")
    with pytest.raises(TypeError):
        parse(None)


def test_empty_text_is_an_empty_program():
    p = parse("")
    assert p.functions == {} and p.meshes == {}
    assert parse(print_program(p)).functions == {}


def test_unknown_mesh_on_an_argument():
    text = body("return %a : tensor<8x8xf32>", args='%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@nowhere, [{"x"}, {}]>}')
    e = raises(UnknownMeshError, text)
    assert e.line == 3 and e.op == "func.func" and "@nowhere" in str(e)


def test_unknown_axis_in_a_constraint():
    e = raises(UnknownAxisError, body('%0 = sdy.sharding_constraint %a <@m, [{"z"}, {}]> : tensor<8x8xf32>',
                                      "return %0 : tensor<8x8xf32>"))
    assert (e.line, e.op) == (4, "sdy.sharding_constraint") and '"z"' in str(e)


def test_rank_mismatch_on_a_constraint_and_on_a_result():
    e = raises(ShardingRankError, body('%0 = sdy.sharding_constraint %a <@m, [{"x"}]> : tensor<8x8xf32>',
                                       "return %0 : tensor<8x8xf32>"))
    assert (e.line, e.op) == (4, "sdy.sharding_constraint")
    e = raises(ShardingRankError, body(
        '%0 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"x"}, {}, {}]>]>} : tensor<8x8xf32>',
        "return %0 : tensor<8x8xf32>"))
    assert (e.line, e.op) == (4, "stablehlo.negate")


def test_unknown_ops():
    e = raises(UnknownOpError, body('%0 = "foo.bar"(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>',
                                    "return %0 : tensor<8x8xf32>"))
    assert (e.line, e.column, e.op) == (4, 10, "foo.bar")
    e = raises(UnknownOpError, body('%0 = "paddle.no_such_rule"(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>',
                                    "return %0 : tensor<8x8xf32>"))
    assert e.op == "paddle.no_such_rule" and "no rule" in e.reason
    e = raises(UnknownOpError, body('%0 = "stablehlo.frobnicate"(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>',
                                    "return %0 : tensor<8x8xf32>"))
    assert e.line == 4 and e.op == "stablehlo.frobnicate"
    # a known rule name parses; strict_ops=False lets any op in
    parse(body('%0 = "paddle.relu"(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>', "return %0 : tensor<8x8xf32>"))
    p = parse(body('%0 = "foo.bar"(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>', "return %0 : tensor<8x8xf32>"),
              strict_ops=False)
    assert p.main.body.ops[0].name == "foo.bar"


def test_tokens_and_dynamic_shapes_parse_but_are_not_partitioned():
    # Shardy leaves such values without a sharding and so does propagation; the partitioner refuses them
    from spmdkit.partition import PartitionError, partition
    for text in (body("return %a : tensor<?x8xf32>", args="%a: tensor<?x8xf32>", result="tensor<?x8xf32>"),
                 body("%t = stablehlo.create_token : !stablehlo.token", "return %a : tensor<8x8xf32>")):
        program = parse(text)
        assert ("?x8" in text) == ("tensor<?x8xf32>" in print_program(program))
        with pytest.raises(PartitionError, match="not partitioned"):
            partition(program)


def test_a_shardy_invariant_only_mlir_checks():
    e = raises(IRVerifyError, body('%0 = sdy.sharding_constraint %a <@m, [{"x"}, {"x"}]> : tensor<8x8xf32>',
                                   "return %0 : tensor<8x8xf32>"))
    assert e.line == 4 and e.op == "sdy.sharding_constraint"


def test_load_names_the_file(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text(body("return %zz : tensor<8x8xf32>"))
    with pytest.raises(IRParseError) as info:
        load(bad)
    assert str(bad) in str(info.value) and info.value.line == 4


# -- programs built in Python ---------------------------------------------------------------
def one_op_program(sharding, op_name="relu", attrs=None, mesh=None):
    p = Program(meshes={"m": mesh or Mesh({"x": 2, "y": 4})})
    fn = p.add_function(Function("main"))
    a = fn.body.add_arg(TensorType((8, 8)))
    op = fn.body.append(Op.create(op_name, [a], [TensorType((8, 8))], attrs=attrs))
    op.result.sharding = sharding
    fn.body.append(Op.create("func.return", [op.result], []))
    fn.result_types = [TensorType((8, 8))]
    return p


def test_python_program_errors_name_op_and_value():
    closed = lambda *a: DimSharding(list(a))
    with pytest.raises(UnknownMeshError) as info:
        print_program(one_op_program(TensorSharding("other", [closed("x"), closed()])))
    assert info.value.op == "relu" and info.value.value == "result 0"
    with pytest.raises(UnknownAxisError) as info:
        print_program(one_op_program(TensorSharding("m", [closed("q"), closed()])))
    assert info.value.op == "relu" and '"q"' in str(info.value)
    with pytest.raises(ShardingRankError) as info:
        to_mlir_module(one_op_program(TensorSharding("m", [closed("x")])))
    assert info.value.op == "relu" and "rank 2" in str(info.value)
    # what only MLIR's verifier sees is mapped back to the op
    with pytest.raises(IRVerifyError) as info:
        print_program(one_op_program(TensorSharding("m", [closed("x"), closed("x")])))
    assert info.value.op == "relu"


@pytest.mark.parametrize("value", [None, object(), {1, 2}, 1j])
def test_attributes_without_mlir_form(value):
    with pytest.raises(AttributeConversionError) as info:
        print_program(one_op_program(None, attrs={"weird": value}))
    assert info.value.op == "relu" and "weird" in str(info.value)


def test_bad_direction_and_undefined_operand():
    p = one_op_program(None, op_name="sdy.propagation_barrier", attrs={"allowed_direction": "SIDEWAYS"})
    with pytest.raises(IRError, match="SIDEWAYS"):
        print_program(p)
    p = one_op_program(None)
    stranger = Block().add_arg(TensorType((8, 8)))
    p.main.body.ops[0].operands = [stranger]
    with pytest.raises(IRError, match="not defined"):
        print_program(p)


# -- fuzz: any mutation of valid text parses or raises an IRError --------------------------
SMALL = open(os.path.join(DATA, "shardy_compiler_api.mlir")).read()
SNIPPETS = ['"', "{", "}", "<", ">", "%", "@", "#sdy.sharding<@grid, [{}]>", "tensor<", ":", "x", "?", "0", "\n"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(SMALL)), st.integers(0, 12), st.sampled_from(SNIPPETS + [""]))
def test_mutated_text_never_crashes(at, cut, insert):
    text = SMALL[:at] + insert + SMALL[at + cut:]
    try:
        p = parse(text)
    except IRError as e:
        assert e.reason
        return
    # whatever parsed must print and parse back
    assert parse(print_program(p)) is not None


def test_manual_computation_body_must_have_local_shapes():
    text = body('%0 = sdy.manual_computation(%a) in_shardings=[<@m, [{"x"}, {}]>] out_shardings=[<@m, [{"x"}, {}]>] '
                'manual_axes={"x"} (%l: tensor<8x8xf32>) {',
                "  sdy.return %l : tensor<8x8xf32>",
                "} : (tensor<8x8xf32>) -> tensor<8x8xf32>",
                "return %0 : tensor<8x8xf32>")
    e = raises(IRVerifyError, text)
    assert e.line == 4 and e.op == "sdy.manual_computation" and "4x8" in str(e)


def test_unknown_op_inside_a_region_names_its_line():
    text = body('%0 = sdy.manual_computation(%a) in_shardings=[<@m, [{"x"}, {}]>] out_shardings=[<@m, [{"x"}, {}]>] '
                'manual_axes={"x"} (%l: tensor<4x8xf32>) {',
                '  %1 = "paddle.not_a_rule"(%l) : (tensor<4x8xf32>) -> tensor<4x8xf32>',
                "  sdy.return %1 : tensor<4x8xf32>",
                "} : (tensor<8x8xf32>) -> tensor<8x8xf32>",
                "return %0 : tensor<8x8xf32>")
    e = raises(UnknownOpError, text)
    assert (e.line, e.column, e.op) == (5, 12, "paddle.not_a_rule")


def test_function_without_terminator_is_named():
    p = one_op_program(None)
    p.main.body.ops.pop()  # drop func.return
    with pytest.raises(IRError) as info:
        print_program(p)
    assert info.value.op == "func.func @main" and "ends with relu" in str(info.value)


@pytest.mark.parametrize("value, pin, error", [
    (2 ** 40, "i32", IRParseError),  # MLIR: out of range for i32
    (2 ** 70, None, IRParseError),
    ("x", "array<i32>", AttributeConversionError),
    (1.5, "i32", AttributeConversionError),
    ([1], "weird", AttributeConversionError),
    (3, "nonsense", AttributeConversionError),
    (True, "f32", AttributeConversionError),
    (["a"], "manual_axes", None),
    ([1], "manual_axes", AttributeConversionError),
])
def test_attribute_pins_that_do_not_fit(value, pin, error):
    p = one_op_program(None, attrs={"k": value})
    if pin:
        p.main.body.ops[0].attr_types = {"k": pin}
    if error is None:
        assert parse(print_program(p)).main.body.ops[0].attrs["k"] == value
        return
    with pytest.raises(error) as info:
        print_program(p)
    assert info.value.op == "relu"


def test_deeply_nested_regions_are_refused_not_crashed():
    depth = 1500
    inner = "%r = stablehlo.negate %a : tensor<8xf32>\nstablehlo.return %r : tensor<8xf32>"
    for k in range(depth):
        inner = (f'%c{k} = "stablehlo.case"(%i) ({{\n' + inner + "\n}) : (tensor<i32>) -> tensor<8xf32>\n"
                 f"stablehlo.return %c{k} : tensor<8xf32>")
    text = ("module {\n func.func @main(%a: tensor<8xf32>, %i: tensor<i32>) -> tensor<8xf32> {\n"
            '  %top = "stablehlo.case"(%i) ({\n' + inner + "\n}) : (tensor<i32>) -> tensor<8xf32>\n"
            "  return %top : tensor<8xf32>\n }\n}\n")
    try:
        program = parse(text)
    except IRError as e:
        assert "nested too deeply" in str(e)
        return
    assert sum(1 for _ in program.walk()) == 2 * depth + 4
    print_program(program)  # if it imported, it prints (an IRError here fails the test loudly)


def test_every_sharding_place_is_checked_before_mlir():
    closed = lambda *a: DimSharding(list(a))
    p = one_op_program(None)
    p.main.args[0].sharding = TensorSharding("m", [closed("x")])
    with pytest.raises(ShardingRankError) as info:
        print_program(p)
    assert (info.value.op, info.value.value) == ("func.func @main", "argument 0")
    p = one_op_program(None)
    p.main.result_shardings = [TensorSharding("gone", [closed(), closed()])]
    with pytest.raises(UnknownMeshError) as info:
        print_program(p)
    assert (info.value.op, info.value.value) == ("func.func @main", "result 0")
    p = one_op_program(None, op_name="sdy.sharding_constraint",
                       attrs={"sharding": TensorSharding("m", [closed("w"), closed()])})
    with pytest.raises(UnknownAxisError) as info:
        print_program(p)
    assert (info.value.op, info.value.value) == ("sdy.sharding_constraint", "attribute sharding")
    p = one_op_program(None)
    p.meshes["bad"] = "not a mesh"
    with pytest.raises(IRError, match="bad"):
        print_program(p)


def test_a_sharding_our_representation_refuses_is_reported_at_its_line(monkeypatch):
    """Shardy's verifier and ours could disagree; then the error still names the op and line."""
    import spmdkit.ir.attributes as attributes
    from spmdkit.sharding import ShardingError

    def refuse(text):
        raise ShardingError(f"refused {text}")
    monkeypatch.setattr(attributes, "_sharding", refuse)
    text = body('%0 = sdy.sharding_constraint %a <@m, [{"x"}, {}]> : tensor<8x8xf32>', "return %0 : tensor<8x8xf32>")
    e = raises(IRVerifyError, text)
    assert (e.line, e.op, e.value) == (4, "sdy.sharding_constraint", "sharding") and "refused" in str(e)
