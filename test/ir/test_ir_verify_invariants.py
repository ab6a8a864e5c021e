"""verify_program: each invariant of the compiler API, broken one at a time, gives its typed error
naming the op and the value; valid programs (built, imported, parsed) pass."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spmdkit.ir import (IRVerifyError, Op, ProgramBuilder, ShardingRankError, TensorType,
                        UnknownAxisError, UnknownMeshError, UnknownOpError, parse, verify_program)
from spmdkit.ir.verify import (BarrierDirectionError, DataFlowTypeError, InvalidShardingError,
                               ManualComputationError, ShardingGroupError, TerminatorError, UndefinedValueError)
from spmdkit.sharding import DimSharding, TensorSharding, parse_sharding


def sh(text: str) -> TensorSharding:
    return parse_sharding(f"#sdy.sharding{text}")


def _program(manual_in='<@m, [{"x"}, {}], replicated={"y"}>', manual_out='<@m, [{"x"}, {}], replicated={"y"}>'):
    """One of everything: arg sharding, constraint, group, barrier, manual computation, while, case."""
    pb = ProgramBuilder()
    pb.mesh("m", {"x": 2, "y": 2})
    pb.mesh("n", {"z": 4})
    f = pb.function()
    a = f.arg((8, 4), sharding='<@m, [{"x"}, {}]>', name="a")
    b = f.arg((8, 4), name="b")
    c = f.sharding_constraint(a, '<@m, [{}, {"y"}]>')
    f.sharding_group(c, 0)
    f.sharding_group(b, 0)
    d = f.propagation_barrier(c, "FORWARD")
    e, g = f.optimization_barrier(d, b)
    (m,) = f.manual_computation([e], [manual_in], [manual_out], ["x", "y"], lambda bb, t: [bb.op("jax.neg", [t])])
    i0 = f.constant(np.int32(0))
    n, w = f.while_loop([i0, m], lambda bb, i, v: bb.op("jax.lt", [i, bb.constant(np.int32(2))]),
                        lambda bb, i, v: [bb.op("jax.add", [i, bb.constant(np.int32(1))]), bb.op("jax.add", [v, g])])
    (r,) = f.case(n, [lambda bb: [w], lambda bb: bb.op("jax.neg", [w])])
    f.ret(r, shardings=['<@m, [{"x"}, {}]>'])
    return pb.build(verify=False)


def _ops(program, name):
    return [op for op in program.walk() if op.name == name]


def test_valid_programs_pass():
    program = _program()
    verify_program(program)
    from spmdkit.ir import print_program
    verify_program(parse(print_program(program), strict_ops=False))


def _raises(program, error, match, op=None, value=None):
    with pytest.raises(error, match=match) as info:
        verify_program(program)
    if op is not None:
        assert info.value.op == op, str(info.value)
        assert f"op '{op}'" in str(info.value)
    if value is not None:
        assert value in str(info.value)
    return info.value


# -- shardings ----------------------------------------------------------------------------------
def test_unknown_mesh_axis_rank_and_bad_sharding():
    p = _program()
    p.main.args[0].sharding = sh('<@nope, [{"x"}, {}]>')
    _raises(p, UnknownMeshError, "@nope", op="func.func @main", value="%a")
    p = _program()
    p.main.args[1].sharding = sh('<@m, [{"q"}, {}]>')
    _raises(p, UnknownAxisError, '"q"', value="%b")
    p = _program()
    _ops(p, "sdy.sharding_constraint")[0].attrs["sharding"] = sh('<@m, [{"x"}]>')
    _raises(p, ShardingRankError, "1 dims.*rank 2", op="sdy.sharding_constraint")
    p = _program()
    p.main.result_shardings[0] = sh('<@m, [{"x"}, {"x"}]>')
    _raises(p, InvalidShardingError, "x", value="result 0")
    p = _program()
    _ops(p, "jax.neg")[-1].results[0].sharding = sh('<@n, [{"z"}, {"w"}]>')
    _raises(p, UnknownAxisError, '"w"', op="jax.neg")


# -- manual computation invariants 1-4 -----------------------------------------------------------
def test_manual_invariant_1_one_mesh_sorted_axes():
    p = _program()
    mc = _ops(p, "sdy.manual_computation")[0]
    mc.attrs["out_shardings"] = [sh('<@n, [{}, {}], replicated={"z"}>')]
    _raises(p, ManualComputationError, "different meshes", op="sdy.manual_computation")
    p = _program()
    _ops(p, "sdy.manual_computation")[0].attrs["manual_axes"] = ["y", "x"]
    _raises(p, ManualComputationError, "not sorted in mesh order", op="sdy.manual_computation")
    p = _program()
    _ops(p, "sdy.manual_computation")[0].attrs["manual_axes"] = ["x", "q"]
    _raises(p, ManualComputationError, "'q' is not an axis", op="sdy.manual_computation")


def test_manual_invariant_2_manual_axes_used_explicitly():
    p = _program(manual_in='<@m, [{"x"}, {}]>')
    err = _raises(p, ManualComputationError, "manual axis 'y' is neither", op="sdy.manual_computation")
    assert "in_shardings[0]" in str(err)


def test_manual_invariant_3_free_axes_minor():
    pb = ProgramBuilder()
    pb.mesh("m", {"x": 2, "y": 2})
    f = pb.function()
    a = f.arg((8, 4))
    good = '<@m, [{"x", "y"}, {}]>'  # manual "x" major, free "y" minor
    (r,) = f.manual_computation([a], [good], [good], ["x"], lambda bb, t: [t])
    f.ret(r)
    p = pb.build()
    mc = p.main.body.ops[0]
    mc.attrs["in_shardings"] = [sh('<@m, [{"y", "x"}, {}]>')]
    _raises(p, ManualComputationError, "free axis 'y' is major to manual axis 'x'", op="sdy.manual_computation")


def test_manual_invariant_4_body_is_local():
    p = _program()
    mc = _ops(p, "sdy.manual_computation")[0]
    arg = mc.regions[0].block.args[0]
    arg.type = TensorType((8, 4), "f32")  # the global shape, not the local (4, 4)
    _raises(p, ManualComputationError, "body argument 0 has type tensor<8x4xf32>.*tensor<4x4xf32>",
            op="sdy.manual_computation")
    p = _program()
    mc = _ops(p, "sdy.manual_computation")[0]
    mc.results[0].type = TensorType((16, 4), "f32")
    _raises(p, ManualComputationError, "returns tensor<4x4xf32> for result 0.*tensor<8x4xf32>",
            op="sdy.manual_computation")


def test_manual_isolated_from_above_and_nesting():
    p = _program()
    mc = _ops(p, "sdy.manual_computation")[0]
    neg = mc.regions[0].block.ops[0]
    neg.operands[0] = p.main.args[1]  # reads a value from outside the isolated body
    _raises(p, UndefinedValueError, "operand 0", op="jax.neg", value="%b")
    pb = ProgramBuilder()
    pb.mesh("m", {"x": 2, "y": 2})
    f = pb.function()
    a = f.arg((8, 8))
    s = '<@m, [{"x"}, {}]>'

    def outer(bb, t):
        return bb.manual_computation([t], [s], [s], ["x"], lambda b2, u: [u])
    (r,) = f.manual_computation([a], [s], [s], ["x"], outer)
    f.ret(r)
    _raises(pb.program, ManualComputationError, "reuses manual axes \\['x'\\]", op="sdy.manual_computation")


# -- groups, barriers, data flow, names -----------------------------------------------------------
def test_sharding_group_errors():
    p = _program()
    _ops(p, "sdy.sharding_group")[0].attrs["group_id"] = -1
    _raises(p, ShardingGroupError, "non-negative", op="sdy.sharding_group")
    p = _program()
    scalar = Op.create("stablehlo.constant", [], [TensorType((), "i32")], {"value": np.int32(0)})
    p.main.body.ops.insert(0, scalar)
    _ops(p, "sdy.sharding_group")[1].operands[0] = scalar.results[0]
    _raises(p, ShardingGroupError, "group 0.*shape \\[\\].*shape \\[8, 4\\]", op="sdy.sharding_group")


def test_barrier_direction():
    p = _program()
    _ops(p, "sdy.propagation_barrier")[0].attrs["allowed_direction"] = "UP"
    _raises(p, BarrierDirectionError, "'UP'", op="sdy.propagation_barrier")


def test_data_flow_results_tied_to_operands():
    p = _program()
    _ops(p, "stablehlo.optimization_barrier")[0].results[1].type = TensorType((8, 4), "f16")
    _raises(p, DataFlowTypeError, "f16", op="stablehlo.optimization_barrier")
    p = _program()
    _ops(p, "sdy.propagation_barrier")[0].results[0].type = TensorType((4, 8), "f32")
    _raises(p, DataFlowTypeError, "4x8", op="sdy.propagation_barrier")
    p = _program()
    loop = _ops(p, "stablehlo.while")[0]
    loop.regions[1].block.ops[-1].operands.reverse()
    _raises(p, DataFlowTypeError, "body returns", op="stablehlo.while")
    p = _program()
    case = _ops(p, "stablehlo.case")[0]
    case.regions[1].block.ops[-1].operands[0] = _ops(p, "stablehlo.while")[0].results[0]
    _raises(p, DataFlowTypeError, "branch 1 returns", op="stablehlo.case")
    p = _program()
    p.main.result_types = [TensorType((8, 5), "f32")]
    p.main.result_shardings = [None]
    _raises(p, DataFlowTypeError, "8x5", op="func.return")


def test_undefined_values_terminators_and_unknown_ops():
    p = _program()
    body = p.main.body
    body.ops.insert(0, body.ops.pop(3))  # the barrier now uses its operand before it is defined
    _raises(p, UndefinedValueError, "not defined before", op="sdy.propagation_barrier")
    p = _program()
    p.main.body.ops.pop()
    _raises(p, TerminatorError, "must end in 'func.return'")
    p = _program()
    _ops(p, "jax.neg")[0].name = "jax.no_such_primitive"
    _raises(p, UnknownOpError, "unknown op 'jax.no_such_primitive'", op="jax.no_such_primitive")
    p = _program()
    _ops(p, "jax.neg")[0].name = "frobnicate"
    _raises(p, UnknownOpError, "frobnicate")
    verify_program(p, check_op_names=False)  # names aside, the program is sound


def test_errors_are_value_errors_and_program_type_checked():
    assert issubclass(ManualComputationError, IRVerifyError) and issubclass(IRVerifyError, ValueError)
    with pytest.raises(TypeError, match="Program"):
        verify_program("module {}")


def test_imported_mlir_files_verify():
    text = """
    sdy.mesh @mesh = <["data"=2, "model"=2]>
    func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> tensor<16x32xf32> {
      %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data"}, {"model", ?}]>]
          out_shardings=[<@mesh, [{"data"}, {?}]>] manual_axes={"data"} (%arg1: tensor<8x32xf32>) {
        sdy.return %arg1 : tensor<8x32xf32>
      } : (tensor<16x32xf32>) -> tensor<16x32xf32>
      return %0 : tensor<16x32xf32>
    }"""
    verify_program(parse(text))


# -- property: random valid manual computations pass; swapping two manual axes fails ------------
@settings(max_examples=30, deadline=None)
@given(st.permutations(["p", "q", "r"]), st.integers(1, 3), st.data())
def test_manual_axes_order_property(order, n_manual, data):
    mesh_axes = [("p", 2), ("q", 2), ("r", 2)]
    manual = [a for a, _ in mesh_axes][:n_manual]
    chosen = data.draw(st.lists(st.sampled_from(manual), unique=True))
    dims = [DimSharding(chosen), DimSharding([])]
    s = TensorSharding("m", dims, replicated=[a for a in manual if a not in chosen])
    pb = ProgramBuilder()
    pb.mesh("m", mesh_axes)
    f = pb.function()
    a = f.arg((8, 4))
    (r,) = f.manual_computation([a], [s], [s], manual, lambda bb, t: [t])
    f.ret(r)
    program = pb.build()
    permuted = [x for x in order if x in manual]
    program.main.body.ops[0].attrs["manual_axes"] = permuted
    if permuted == manual:
        verify_program(program)
    else:
        with pytest.raises(ManualComputationError, match="not sorted"):
            verify_program(program)


# -- text from JAX's own lowering ------------------------------------------------------------------
# jax.jit(f).lower(...).as_text() on this machine (jax 0.10.2) for a shard_map with out_specs=P("a")
# over manual axes {"a", "b"}: JAX leaves "b" implicitly replicated in out_shardings.
JAX_SHARD_MAP_TEXT = """
module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func public @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<8x4xf32>) {
    %1 = sdy.sharding_constraint %arg0 <@mesh, [{"a"}, {}]> : tensor<8x8xf32>
    %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{"a"}, {"b"}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a", "b"} (%arg2: tensor<4x4xf32>) {
      %3 = "stablehlo.all_reduce"(%arg2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
      ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
        %4 = stablehlo.add %arg3, %arg4 : tensor<f32>
        stablehlo.return %4 : tensor<f32>
      }) : (tensor<4x4xf32>) -> tensor<4x4xf32>
      sdy.return %3 : tensor<4x4xf32>
    } : (tensor<8x8xf32>) -> tensor<8x4xf32>
    return %2 : tensor<8x4xf32>
  }
}
"""


def test_jax_lowered_shard_map_needs_the_relaxed_invariant_2():
    program = parse(JAX_SHARD_MAP_TEXT)
    with pytest.raises(ManualComputationError, match="manual axis 'b' is neither.*out_shardings\\[0\\]"):
        verify_program(program)
    verify_program(program, explicit_manual_replication=False)
    # the relaxed mode still checks everything else
    program.main.body.ops[1].attrs["manual_axes"] = ["b", "a"]
    with pytest.raises(ManualComputationError, match="not sorted"):
        verify_program(program, explicit_manual_replication=False)


def test_jax_lowered_gpt_step_verifies():
    import jax

    from spmdkit.models import gpt
    cfg = gpt.GPTConfig()
    params = gpt.init_params(jax.random.PRNGKey(0), cfg)
    text = jax.jit(gpt.loss_fn).lower(params, *gpt.example_batch(jax.random.PRNGKey(1), cfg)).as_text()
    program = parse(text)
    assert any(op.name == "stablehlo.dot_general" for op in program.walk())
    verify_program(program)


def test_sharding_group_cannot_cross_a_manual_boundary():
    pb = ProgramBuilder()
    pb.mesh("m", {"x": 2})
    f = pb.function()
    a = f.arg((4, 4))
    s = '<@m, [{}, {}], replicated={"x"}>'  # local shape == global shape, so only the boundary differs
    f.sharding_group(a, 1)

    def body(bb, t):
        bb.sharding_group(t, 1)
        return [t]
    (r,) = f.manual_computation([a], [s], [s], ["x"], body)
    f.ret(r)
    _raises(pb.program, ShardingGroupError, "inside manual axes \\['x'\\].*inside \\[\\]", op="sdy.sharding_group")
