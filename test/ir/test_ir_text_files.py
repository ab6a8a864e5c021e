"""The text format on real modules: Shardy-style files and StableHLO that jax 0.10.2 printed.

For each file: parse -> print -> parse gives a structurally equal program, print is a fixed
point, and what we print is exactly what MLIR's own printer makes of the original file (so MLIR
reads it back as the same module). Then what the importer must have understood, checked against
values written by hand from the files.
"""
import glob
import os

import pytest

from ir_text_equality import assert_programs_equal
from spmdkit.ir import MLIRAttr, load, parse, print_program, to_mlir_module
from spmdkit.ir.mlir_context import parse_module, print_module
from spmdkit.sharding import AxisRef, DimSharding, Mesh, TensorSharding

DATA = os.path.join(os.path.dirname(__file__), "data")
FILES = sorted(glob.glob(os.path.join(DATA, "*.mlir")))


def closed(*axes, priority=None):
    return DimSharding(list(axes), is_closed=True, priority=priority)


def open_(*axes, priority=None):
    return DimSharding(list(axes), is_closed=False, priority=priority)


def test_data_files_exist():
    names = {os.path.basename(f) for f in FILES}
    assert {"shardy_compiler_api.mlir", "shardy_representation.mlir", "shardy_control_flow.mlir",
            "shardy_rules_and_reshards.mlir", "jax_control_flow.mlir", "jax_shard_map.mlir",
            "jax_gpt_block_train_step.mlir"} <= names


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_file_round_trips(path):
    original = open(path).read()
    program = load(path)
    text = print_program(program)
    again = parse(text)
    assert_programs_equal(program, again)
    assert print_program(again) == text
    assert str(again) == text
    # MLIR's own reading and printing of the original file gives the same text as ours.
    assert text == print_module(parse_module(original))


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_file_to_mlir_module_verifies(path):
    module = to_mlir_module(load(path))
    assert module.operation.verify()
    assert module.operation.name == "builtin.module"


def walk_names(program):
    return [op.name for op in program.walk()]


def test_compiler_api_constructs():
    p = load(os.path.join(DATA, "shardy_compiler_api.mlir"))
    assert p.name == "compiler_api"
    assert p.meshes == {"grid": Mesh({"rows": 4, "cols": 2}), "line": Mesh({"dev": 8})}
    main = p.main
    x, w = main.args
    assert x.sharding == TensorSharding("grid", [open_("rows"), closed()])
    assert w.sharding is None
    assert main.result_shardings == [TensorSharding("grid", [closed(), closed("cols")]), None]
    ops = {op.name: op for op in main.body.ops}
    assert ops["sdy.sharding_constraint"].attrs == {"sharding": TensorSharding("grid", [closed("rows"), open_()])}
    barriers = [op for op in main.body.ops if op.name == "sdy.propagation_barrier"]
    assert [b.attrs["allowed_direction"] for b in barriers] == ["FORWARD", "NONE"]
    assert barriers[1].operands[0] is barriers[0].result
    mc = ops["sdy.manual_computation"]
    assert mc.attrs["manual_axes"] == ["rows"]
    assert mc.attrs["in_shardings"] == [TensorSharding("grid", [closed("rows"), closed()])]
    assert mc.attrs["out_shardings"] == [TensorSharding("grid", [closed("rows"), closed()])]
    body = mc.regions[0].block
    assert [a.type.shape for a in body.args] == [(4, 32)]  # local: 16 rows over "rows"=4
    assert [o.name for o in body.ops] == ["stablehlo.multiply", "sdy.return"]
    assert body.ops[0].operands == [body.args[0], body.args[0]]
    groups = [op for op in main.body.ops if op.name == "sdy.sharding_group"]
    assert [g.attrs["group_id"] for g in groups] == [7, 7]
    assert groups[0].operands[0] is x and groups[0].results == []
    assert main.body.ops[-1].name == "func.return"
    assert main.body.ops[-1].operands == [mc.result, ops["stablehlo.constant"].result]


def test_representation_constructs():
    p = load(os.path.join(DATA, "shardy_representation.mlir"))
    assert p.name is None
    assert p.meshes["ids"] == Mesh({"a": 2, "b": 2}, device_ids=[3, 2, 1, 0])
    assert p.meshes["one"].axes == ()
    a, b = p.main.args
    assert a.sharding == TensorSharding(
        "m", [closed(AxisRef("x", 1, 2), "y", priority=0), closed(AxisRef("x", 2, 4), priority=2)], replicated=["z"])
    assert b.sharding == TensorSharding("ids", [open_("b"), open_(priority=1)])
    add, neg, barrier, maximum, ret = p.main.body.ops
    assert add.result.sharding == TensorSharding("m", [open_("x"), closed()], replicated=["y"])
    assert neg.result.sharding == TensorSharding("one", [])
    assert [r.sharding for r in barrier.results] == [TensorSharding("m", [closed("x"), closed()]),
                                                     TensorSharding("m", [closed(), closed("y")])]
    assert maximum.operands == barrier.results
    assert "sdy.sharding" not in add.attrs  # it became the result's sharding


def test_control_flow_constructs():
    p = load(os.path.join(DATA, "shardy_control_flow.mlir"))
    assert list(p.functions) == ["main", "scale"]
    assert p.functions["scale"].visibility == "private" and p.main.visibility is None
    main = p.main
    loop = next(op for op in main.body.ops if op.name == "stablehlo.while")
    assert len(loop.regions) == 2 and len(loop.results) == 2
    assert [r.sharding for r in loop.results] == [TensorSharding("mesh", []),
                                                  TensorSharding("mesh", [closed("batch"), closed("model")])]
    cond, body = loop.regions[0].block, loop.regions[1].block
    assert [a.type.shape for a in cond.args] == [(), (8, 16)]
    call = next(op for op in body.ops if op.name == "func.call")
    assert call.attrs == {"callee": "scale"} and call.attr_types == {}
    assert call.operands == [body.args[1]]
    case = next(op for op in main.body.ops if op.name == "stablehlo.case")
    assert len(case.regions) == 2
    relu = case.regions[0].block.ops[0]
    assert relu.name == "relu" and relu.operands == [loop.results[1]]
    t1, t2 = case.regions[1].block.ops[:2]
    # an array of i32 integer attributes has no plain Python form: it stays exact MLIR text
    assert t1.name == "transpose" and t1.attrs["perm"] == MLIRAttr("[1 : i32, 0 : i32]")
    assert t2.attrs["perm"] == [1, 0] and t2.attr_types["perm"] == "array<i32>"
    mm = [op for op in main.body.ops if op.name == "matmul"]
    assert [m.attrs for m in mm] == [{"trans_x": False, "trans_y": True}, {"trans_x": False, "trans_y": False}]
    softmax = next(op for op in main.body.ops if op.name == "softmax")
    assert softmax.attrs == {"axis": -1} and softmax.attr_types == {}


def test_jax_gpt_block_imports():
    p = load(os.path.join(DATA, "jax_gpt_block_train_step.mlir"))
    assert p.name == "jit_step"
    assert p.meshes == {"mesh": Mesh({"data": 2, "model": 2})}
    names = walk_names(p)
    assert len(names) > 400
    for needed in ["stablehlo.dot_general", "stablehlo.reduce", "stablehlo.broadcast_in_dim",
                   "stablehlo.reshape", "stablehlo.transpose", "stablehlo.exponential", "func.return"]:
        assert needed in names
    sharded = [a.sharding for a in p.main.args if a.sharding is not None]
    assert TensorSharding("mesh", [closed(), closed("model")]) in sharded       # column-parallel weights
    assert TensorSharding("mesh", [closed("model"), closed()]) in sharded       # row-parallel weights
    assert TensorSharding("mesh", [closed("data"), closed()]) in sharded        # the token batch
    dot = next(op for op in p.walk() if op.name == "stablehlo.dot_general")
    assert isinstance(dot.attrs["dot_dimension_numbers"], MLIRAttr)
    assert dot.attrs["dot_dimension_numbers"].text.startswith("#stablehlo.dot<")
    assert p.main.result_attrs and all("jax.result_info" in d for d in p.main.result_attrs)


def test_jax_shard_map_imports_as_manual_computation():
    p = load(os.path.join(DATA, "jax_shard_map.mlir"))
    mc = p.main.body.ops[0]
    assert mc.name == "sdy.manual_computation"
    assert mc.attrs["manual_axes"] == ["data", "model"]
    inner = mc.regions[0].block.ops
    assert inner[0].name == "stablehlo.all_reduce" and inner[-1].name == "sdy.return"
    reducer = inner[0].regions[0].block
    assert [o.name for o in reducer.ops] == ["stablehlo.add", "stablehlo.return"]
    assert p.mesh_attrs["mesh"]  # jax's stablehlo.mesh note on the mesh op is kept


def test_locations_print_and_parse_back():
    p = load(os.path.join(DATA, "shardy_compiler_api.mlir"))
    ops = list(p.walk())
    assert ops[0].location == "line 11, column 13"  # where the dot_general stands in the file
    ops[1].location = 'model.py:42 "attention"'
    ops[2].location = None
    text = print_program(p, locations=True)
    again = list(parse(text).walk())
    assert [o.location for o in again] == [o.location for o in ops]
    assert print_program(parse(text), locations=True) == text
    assert "loc(" not in print_program(p)  # off by default


def test_inline_meshes():
    text = """module {
  func.func @f(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=2]>, [{"x"}]>}) -> tensor<8xf32> {
    %0 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<mesh<[], device_ids=[3]>, []>]>} : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}"""
    p = parse(text)
    assert p.meshes == {}
    assert p.main.args[0].sharding == TensorSharding(Mesh({"x": 2}), [closed("x")])
    assert p.main.body.ops[0].result.sharding == TensorSharding(Mesh({}, device_ids=[3]), [])
    assert_programs_equal(p, parse(print_program(p)))


def test_rules_reshards_and_collectives():
    p = load(os.path.join(DATA, "shardy_rules_and_reshards.mlir"))
    call, reshard, gather, slice_, named, ret = p.main.body.ops
    assert call.attrs["call_target_name"] == "my_matmul"
    assert call.attrs["sdy.sharding_rule"].text.startswith("#sdy.op_sharding_rule<([i, k], [k, j])->([i, j])")
    assert call.result.sharding == TensorSharding("mesh", [closed("x"), closed("y")])
    assert reshard.attrs == {"sharding": TensorSharding("mesh", [closed("x", "y"), closed()])}
    assert gather.attrs["out_sharding"] == TensorSharding("mesh", [closed("x"), closed()])
    assert slice_.operands == [gather.result]
    assert named.attrs == {"name": "epilogue"}
    assert [o.name for o in named.regions[0].block.ops] == ["stablehlo.exponential", "sdy.return"]
    assert ret.operands == [named.result]


@pytest.mark.parametrize("mutate", [
    lambda p: p.main.body.ops[0].attrs.update(extra=1),
    lambda p: p.main.body.ops[0].operands.reverse(),
    lambda p: setattr(p.main.body.ops[0].result, "sharding", TensorSharding("grid", [closed(), closed()])),
    lambda p: setattr(p.main.args[1], "sharding", TensorSharding("grid", [closed(), closed("cols")])),
    lambda p: p.main.result_shardings.reverse(),
    lambda p: p.main.body.ops.pop(1),
    lambda p: setattr(p.main.body.ops[0], "name", "stablehlo.dot"),
    lambda p: p.meshes.pop("line"),
    lambda p: setattr(p, "name", None),
    lambda p: p.main.body.ops[4].regions[0].block.ops[0].operands.pop(),
], ids=["attr", "operand order", "result sharding", "arg sharding", "result shardings", "op dropped",
        "op name", "mesh dropped", "module name", "nested operand"])
def test_the_comparison_sees_each_kind_of_difference(mutate):
    """The round-trip tests rest on assert_programs_equal: it must catch a change anywhere."""
    path = os.path.join(DATA, "shardy_compiler_api.mlir")
    a, b = load(path), load(path)
    assert_programs_equal(a, b)
    mutate(b)
    with pytest.raises(AssertionError):
        assert_programs_equal(a, b)
