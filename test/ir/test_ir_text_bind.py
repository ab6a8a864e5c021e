"""Binding ops read from text to registry rules: decoded StableHLO attributes, grouped operands,
and real rule calls made with what the binding gives."""
import os

import pytest

from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr
from spmdkit.ir import IRError, load, parse
from spmdkit.ir.bind_jax import RuleBindingError, has_rule
from spmdkit.ir.bind_stablehlo import bind, bind_all, decode_attributes

DATA = os.path.join(os.path.dirname(__file__), "data")

STABLEHLO = """
module {
  func.func @main(%a: tensor<2x8x16xf32>, %b: tensor<2x16x4xf32>, %t: tensor<64x32xf32>, %i: tensor<4x6xi32>,
                  %u: tensor<4x6x32xf32>, %s: tensor<f32>) -> tensor<2x8x4xf32> {
    %dot = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x8x16xf32>, tensor<2x16x4xf32>) -> tensor<2x8x4xf32>
    %cmp = stablehlo.compare GE, %a, %a, FLOAT : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xi1>
    %cmp2 = stablehlo.compare EQ, %i, %i : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
    %g = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 32>}> : (tensor<64x32xf32>, tensor<4x6xi32>) -> tensor<4x6x32xf32>
    %sc = "stablehlo.scatter"(%t, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %sum = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %sum : tensor<f32>
    }) : (tensor<64x32xf32>, tensor<4x6xi32>, tensor<4x6x32xf32>) -> tensor<64x32xf32>
    %mx = stablehlo.reduce(%a init: %s) applies stablehlo.maximum across dimensions = [2] : (tensor<2x8x16xf32>, tensor<f32>) -> tensor<2x8xf32>
    %bc = stablehlo.broadcast_in_dim %mx, dims = [0, 1] : (tensor<2x8xf32>) -> tensor<2x8x5xf32>
    %rs = stablehlo.reshape %a : (tensor<2x8x16xf32>) -> tensor<16x16xf32>
    %io = stablehlo.iota dim = 1 : tensor<3x7xi32>
    %cv = stablehlo.convert %a : (tensor<2x8x16xf32>) -> tensor<2x8x16xbf16>
    %cc = stablehlo.concatenate %a, %a, %a, dim = 1 : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x24x16xf32>
    %tr = stablehlo.transpose %a, dims = [2, 0, 1] : (tensor<2x8x16xf32>) -> tensor<16x2x8xf32>
    %sl = stablehlo.slice %a [0:2, 1:8:2, 0:16] : (tensor<2x8x16xf32>) -> tensor<2x4x16xf32>
    return %dot : tensor<2x8x4xf32>
  }
}
"""


def by_name(program, name, index=0):
    return [op for op in program.walk() if op.name == name][index]


@pytest.fixture(scope="module")
def program():
    return parse(STABLEHLO)


def test_dot_general_dimension_numbers(program):
    d = decode_attributes(by_name(program, "stablehlo.dot_general"))
    assert d == {"lhs_batching_dimensions": [0], "rhs_batching_dimensions": [0],
                 "lhs_contracting_dimensions": [2], "rhs_contracting_dimensions": [1]}


def test_compare_direction_and_type(program):
    assert decode_attributes(by_name(program, "stablehlo.compare")) == {
        "comparison_direction": "GE", "compare_type": "FLOAT"}
    assert decode_attributes(by_name(program, "stablehlo.compare", 1)) == {
        "comparison_direction": "EQ", "compare_type": ""}


def test_gather_and_scatter_dimension_numbers(program):
    g = decode_attributes(by_name(program, "stablehlo.gather"))
    assert g == {"slice_sizes": [1, 32], "offset_dims": [2], "collapsed_slice_dims": [0], "start_index_map": [0],
                 "operand_batching_dims": [], "start_indices_batching_dims": [], "index_vector_dim": 2}
    s = decode_attributes(by_name(program, "stablehlo.scatter"))
    assert s == {"update_window_dims": [2], "inserted_window_dims": [0], "scatter_dims_to_operand_dims": [0],
                 "input_batching_dims": [], "scatter_indices_batching_dims": [], "index_vector_dim": 2}


def test_values_kept_in_types_and_regions(program):
    assert decode_attributes(by_name(program, "stablehlo.reduce")) == {"dimensions": [2], "body": "max"}
    assert decode_attributes(by_name(program, "stablehlo.broadcast_in_dim")) == {
        "broadcast_dimensions": [0, 1], "shape": [2, 8, 5]}
    assert decode_attributes(by_name(program, "stablehlo.reshape")) == {"shape": [16, 16]}
    assert decode_attributes(by_name(program, "stablehlo.iota")) == {"dimension": 1, "shape": [3, 7]}
    assert decode_attributes(by_name(program, "stablehlo.convert")) == {"new_dtype": "bf16"}
    assert decode_attributes(by_name(program, "stablehlo.concatenate")) == {"dimension": 1}
    assert decode_attributes(by_name(program, "stablehlo.transpose")) == {"permutation": [2, 0, 1]}
    assert decode_attributes(by_name(program, "stablehlo.slice")) == {
        "start_indices": [0, 1, 0], "limit_indices": [2, 8, 16], "strides": [1, 2, 1]}


def test_reduce_body_must_be_one_reduction():
    text = """
module {
  func.func @main(%a: tensor<8xf32>, %s: tensor<f32>) -> tensor<f32> {
    %r = stablehlo.reduce(%a init: %s) across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
     reducer(%x: tensor<f32>, %y: tensor<f32>) {
      %d = stablehlo.subtract %x, %y : tensor<f32>
      stablehlo.return %d : tensor<f32>
    }
    return %r : tensor<f32>
  }
}"""
    op = parse(text).main.body.ops[0]
    with pytest.raises(IRError, match="subtract"):
        decode_attributes(op)


def mesh_spec(shape, mapping, mesh=ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])):
    attr = TensorDistAttr()
    attr.process_mesh = mesh
    attr.dims_mapping = mapping
    return DistTensorSpec(shape, attr)


def shape_of(value_or_list):
    if value_or_list is None:
        return None
    if isinstance(value_or_list, list):
        return [list(v.type.shape) for v in value_or_list]
    return list(value_or_list.type.shape)


def test_bound_paddle_ops_call_their_rules():
    p = load(os.path.join(DATA, "shardy_control_flow.mlir"))
    mm = by_name(p, "matmul")
    b = bind(mm)
    assert b.rule_name == "matmul" and b.op is mm
    assert [shape_of(v) for v in b.inputs] == [[8, 16], [8, 16]]
    assert b.attrs == {"trans_x": False, "trans_y": True}
    mappings = {id(mm.operands[0]): [0, -1]}
    _, (out,) = b.infer_forward(lambda v: mesh_spec(list(v.type.shape), mappings.get(id(v), [-1, -1])))
    # x rows split over mesh dim 0; y transposed is replicated: the result's rows stay split
    assert out.dims_mapping == [0, -1]


def test_tensor_lists_and_optional_tensors():
    text = """
module {
  func.func @main(%a: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<12x8xf32> {
    %c = "paddle.concat"(%a, %a, %a) {axis = 0 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<12x8xf32>
    %n = "paddle.layer_norm"(%a) {epsilon = 1.0e-05 : f32, begin_norm_axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %m = "paddle.layer_norm"(%a, %g) {operand_segment_sizes = array<i64: 1, 0, 1>} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    return %c : tensor<12x8xf32>
  }
}"""
    p = parse(text)
    a, g = p.main.args
    concat, ln, ln_bias = p.main.body.ops[:3]
    b = bind(concat)
    assert b.inputs == [[a, a, a]] and b.attrs == {"axis": 0}
    b = bind(ln)
    assert b.inputs == [a, None, None] and b.attrs["begin_norm_axis"] == 1
    assert b.attrs["epsilon"] == pytest.approx(1e-5)
    # without operand_segment_sizes the second operand would be the scale; with it, the bias
    assert bind(ln_bias).inputs == [a, None, g]
    _, outs = bind(concat).infer_forward(lambda v: mesh_spec([4, 8], [-1, 1]))
    assert outs[0].dims_mapping == [-1, 1]


def test_ops_without_rules():
    p = load(os.path.join(DATA, "shardy_control_flow.mlir"))
    ret = p.main.body.ops[-1]
    assert not has_rule(ret.name)
    with pytest.raises(RuleBindingError, match="func.return"):
        bind(ret)
    bound, unbound = bind_all(p)
    assert sorted(b.rule_name for b in bound if "." not in b.rule_name) == [
        "matmul", "matmul", "relu", "softmax", "transpose", "transpose"]
    assert all(op.name.startswith(("func.", "stablehlo.")) for op in unbound)


def test_wrong_operand_counts_are_errors():
    text = """
module {
  func.func @main(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %m = "paddle.matmul"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %n = "paddle.layer_norm"(%a, %a) {operand_segment_sizes = array<i64: 1, 2>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    return %m : tensor<4x8xf32>
  }
}"""
    m, n = parse(text).main.body.ops[:2]
    with pytest.raises(IRError, match="1 operands"):
        bind(m)
    with pytest.raises(RuleBindingError, match="operand_segment_sizes"):
        bind(n)


@pytest.mark.skipif(not has_rule("stablehlo.dot_general"),
                    reason="the jax/stablehlo rule family is not in this build's registry")
def test_gpt_block_ops_bind_and_infer():
    p = load(os.path.join(DATA, "jax_gpt_block_train_step.mlir"))
    bound, _ = bind_all(p)
    assert any(b.rule_name == "stablehlo.dot_general" for b in bound)
    for b in bound:
        b.infer_forward(lambda v: mesh_spec(list(v.type.shape), [-1] * v.type.rank))


@pytest.mark.skipif(not has_rule("stablehlo.dot_general"),
                    reason="the jax/stablehlo rule family is not in this build's registry")
def test_decoded_dimension_numbers_drive_the_rule(program):
    """batching [0]x[0], contracting [2]x[1]: a split batch stays split, a split contraction is partial."""
    dot = by_name(program, "stablehlo.dot_general")
    lhs, rhs = dot.operands
    call = bind(dot)
    _, (out,) = call.infer_forward(lambda v: mesh_spec(list(v.type.shape), [0, -1, -1]))
    assert out.dims_mapping == [0, -1, -1] and not out.partial_status
    maps = {id(lhs): [-1, -1, 1], id(rhs): [-1, 1, -1]}
    _, (out,) = call.infer_forward(lambda v: mesh_spec(list(v.type.shape), maps[id(v)]))
    assert out.dims_mapping == [-1, -1, -1] and list(out.partial_status) == [1]


@pytest.mark.skipif(not has_rule("stablehlo.reduce"),
                    reason="the jax/stablehlo rule family is not in this build's registry")
def test_decoded_reduce_body_drives_the_rule(program):
    """reduce max over dim 2 of a tensor split on dim 2: the result is partial under max."""
    red = by_name(program, "stablehlo.reduce")
    call = bind(red)
    assert call.attrs["body"] == "max"
    _, (out,) = call.infer_forward(lambda v: mesh_spec(list(v.type.shape), [-1, -1, 1] if v.type.rank == 3 else []))
    assert out.dims_mapping == [-1, -1]
    assert out.partial_status == {1: "max"}
