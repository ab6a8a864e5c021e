"""Shapes whose dims legitimately differ between tensors (issue 11, "factor-size mismatch"), and
the 1-D norm statistics, reduce_base's 4-argument reverse and split's section check (issue 8).

Each case is taken from PaddlePaddle's own test/auto_parallel/spmd_rules/test_*_rule.py. Every
test calls spmdkit and Paddle 3.3.1 with the same arguments (differential) and executes spmdkit's
answer on the numpy simulator (spmdkit.verify). Where Paddle's test itself gives a call no kernel
runs, spmdkit raises a ValueError naming the tensor and dim; KEPT_DIFFERENT lists those test ids
and, for each, a test proves the answer on the consistent call.
"""
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spmdkit.verify import load_specs
from spmdkit.verify.backends import RuleRejected, get_backend
from spmdkit.verify.cases import Case, TensorArg
from spmdkit.verify.placement import Placement
from spmdkit.verify.random_mode import check_call, kernel_spec
from spmdkit.verify.simulate import Execution

SPECS = load_specs()

# Paddle's tests (file::class::method) whose call spmdkit answers otherwise on purpose, and why.
KEPT_DIFFERENT = {
    "test_roi_align_rule.py::TestRoiAlignSPMDRule::test_roi_align_backward":
        "out_grad has 2 channels, x 4: no kernel runs it; spmdkit raises naming out_grad's dim 1",
    "test_conv2d_transpose_rule.py::TestConv2dTransposeSPMDRule::test_conv2d_transpose_nhwc_infer_backward":
        "an NHWC grad given an NCHW-shaped out_grad; spmdkit raises, and on an NHWC out_grad Paddle "
        "reads H_out as the channels (proven wrong below)",
    "test_cummax_rule.py::TestCummaxSPMDRule::test_cummax_backward":
        "out_grad [16, 2, 16] for x [16, 16, 16]: the grad has x's shape; spmdkit raises",
    "test_cummin_rule.py::TestCumminSPMDRule::test_cummin_backward": "as cummax",
    "test_gather_nd_rule.py::TestGatherNdSPMDRule::test_forward_mesh_dim_same_shape":
        "a 1-D index [4] addresses 4 dims of a 1-D x: Paddle's kernel refuses the call too",
    "test_gather_nd_rule.py::TestGatherNdSPMDRule::test_reverse_mesh_dim_same_shape": "as the forward",
    "test_add_n_rule.py::TestAddNSPMDRule::test_infer_forward":
        "its last call splits x over mesh dim 0 and marks it partial on mesh dim 0: no placement "
        "is both; spmdkit raises naming x[0]",
    "test_slice_rule.py::TestSliceSPMDRule::test_slice_infer_forward":
        "decrease_axis [0] names a dim of size 8 (Paddle's kernel: 'Decrease dim should be 1'); spmdkit "
        "raises where that dim is not sliced; Paddle's rule ignores decrease_axis, wrong on a valid call "
        "(proven below)",
    "test_slice_rule.py::TestSliceSPMDRule::test_slice_infer_backward": "as the forward",
    "test_take_along_axis_rule.py::TestTakeAlongAxisSPMDRule::test_reverse_multi_mesh_dim":
        "its second call gives out_grad x's shape, not the index's; on the index's shape both agree "
        "on every layout and spmdkit adds the partial sum Paddle misses (proven below)",
}


MAPPINGS = [[a, b, c] for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)
            if len({a, b, c} - {-1}) == len([m for m in (a, b, c) if m >= 0])]


def paddle():
    pytest.importorskip("paddle")
    return get_backend("paddle")


def ours():
    return get_backend("spmdkit")


def T(shape, dims, partial=None, int_high=None):
    return TensorArg(tuple(shape), Placement.make(dims, partial), int_high)


def run(backend, rule, function, mesh, inputs, outputs, attrs, spec=None, seed=0):
    """(ins, outs, Verdict): the backend's answer, executed on simulated ranks with numpy."""
    kspec = spec or kernel_spec(SPECS[rule], function, SPECS)
    ex = Execution(kspec, tuple(mesh), inputs, list(attrs), np.random.default_rng(seed))
    return check_call(backend, Case(kspec.name, rule, function, tuple(mesh), inputs, outputs, list(attrs)), ex)


def answer(backend, rule, function, mesh, tensors, attrs):
    """The backend's placements for a call the simulator need not run (shapes too large)."""
    from spmdkit.verify.backends import RuleCall
    return backend.infer(RuleCall(rule, function, tuple(mesh), tensors, list(attrs)))


def dims(placements):
    return [[list(map(lambda d: d[0] if d else -1, p.dims)) for p in x] if isinstance(x, list) else
            [d[0] if d else -1 for d in x.dims] for x in placements]


def same_answer(rule, function, mesh, inputs, outputs, attrs):
    """Both backends give the same answer, and the simulator proves spmdkit's."""
    ins, outs, verdict = run(ours(), rule, function, mesh, inputs, outputs, attrs)
    assert verdict, verdict.reason
    p_ins, p_outs, _ = run(paddle(), rule, function, mesh, inputs, outputs, attrs)
    assert (ins, outs) == (p_ins, p_outs)
    return ins, outs


# ---- flash_attention: v's head dim (out's) differs from q's and k's --------------------------
def test_flash_attention_value_head_dim_is_its_own_factor():
    q, k = T([2, 512, 64, 1024], [0, -1, 1, -1]), T([2, 1024, 64, 1024], [0, -1, -1, -1])
    v = T([2, 1024, 64, 512], [0, -1, -1, -1])
    attrs = [0.0, False, False, False]
    ins, outs = answer(ours(), "flash_attention", "forward", (2, 3), [q, k, v, None, None], attrs)
    assert (ins, outs) == answer(paddle(), "flash_attention", "forward", (2, 3), [q, k, v, None, None], attrs)
    assert dims(ins[:3]) == [[0, -1, 1, -1]] * 3 and dims(outs[:1]) == [[0, -1, 1, -1]]
    # reverse from Paddle's test: softmax_lse proposes batch and heads
    rev = [q, k, v, None, None, T([2, 512, 64, 512], [0, -1, 1, -1]), None, T([2, 64, 512], [0, 1, -1]), None]
    ins, outs = answer(ours(), "flash_attention", "reverse", (2, 3), rev, attrs)
    p_ins, p_outs = answer(paddle(), "flash_attention", "reverse", (2, 3), rev, attrs)
    assert ins == p_ins and (outs[0], outs[2]) == (p_outs[0], p_outs[2])  # Paddle echoes the empty ones


@pytest.mark.parametrize("mesh,qd,kd,vd", [((2, 3), [0, -1, 1, -1], [0, -1, -1, -1], [0, -1, -1, -1]),
                                          ((2, 2), [-1, -1, 0, 1], [1, -1, -1, -1], [-1, -1, 0, -1])])
def test_flash_attention_value_head_dim_executes(mesh, qd, kd, vd):
    q, k, v = T([2, 4, 6, 4], qd), T([2, 6, 6, 4], kd), T([2, 6, 6, 3], vd)
    same_answer("flash_attention", "forward", mesh, [q, k, v, None, None], [], [0.0, False, False, False])
    g = [q, k, v, T([2, 4, 6, 3], [0, -1, 1, -1]), T([2, 6, 4], [0, 1, -1]), None, None, T([2, 4, 6, 3], qd)]
    _, _, verdict = run(ours(), "flash_attention_grad", "forward", mesh, g, [], [0.0, False])
    assert verdict, verdict.reason


# ---- take_along_axis: an index shorter than x in another dim --------------------------------
@pytest.mark.parametrize("mesh,axis,xd,idxd,expect", [
    ((4,), 0, [-1, -1, -1], [0, -1, -1], [[-1, -1, -1], [0, -1, -1], [0, -1, -1]]),
    ((4,), 1, [0, -1, -1], [0, -1, -1], [[-1, -1, -1], [-1, -1, -1], [-1, -1, -1]]),
    ((4, 2), 1, [-1, -1, 0], [-1, 1, 0], [[-1, -1, 0], [-1, 1, 0], [-1, 1, 0]]),
    ((4, 2), 1, [0, -1, -1], [0, 1, -1], [[-1, -1, -1], [-1, 1, -1], [-1, 1, -1]]),
])
def test_take_along_axis_shorter_index(mesh, axis, xd, idxd, expect):
    x, index = T([64, 32, 48], xd), T([8, 4, 48], idxd, int_high=[64, 32, 48][axis])
    ins, outs = same_answer("take_along_axis", "forward", mesh, [x, index], [], [axis])
    assert dims(ins + outs) == expect  # Paddle's expectation


def test_take_along_axis_grad_of_a_shorter_index():
    x, index = T([64, 32, 48], [-1, -1, -1]), T([8, 4, 48], [-1, -1, -1], int_high=32)
    og = T([8, 4, 48], [1, 0, -1])
    ins, outs, verdict = run(ours(), "take_along_axis", "grad", (4, 2), [x, index, og], [], [1])
    assert verdict, verdict.reason
    p_ins, p_outs, p_verdict = run(paddle(), "take_along_axis", "grad", (4, 2), [x, index, og], [], [1])
    assert ins == p_ins and outs[0].dims == p_outs[0].dims
    # the index's axis is split, so x_grad sums the ranks' scatters: Paddle misses the partial
    assert outs[0].partial_dict == {0: "sum"} and not p_verdict
    # Paddle's test gives out_grad x's shape (not the index's): spmdkit makes the dims that
    # disagree whole instead of pairing 4 index rows with 32 out_grad rows
    bad = answer(ours(), "take_along_axis", "grad", (4, 2), [x, index, T([64, 32, 48], [1, 0, -1])], [1])
    assert dims(bad[0] + bad[1]) == [[-1, -1, -1]] * 4


# ---- scatter: more update rows than ids -------------------------------------------------------
@pytest.mark.parametrize("mesh,xd,idd,ud", [
    ((4,), [-1, -1, -1], [-1], [-1, 0, -1]),
    ((2, 3), [1, -1, 0], [-1], [-1, 0, -1]),
])
def test_scatter_more_updates_than_ids_agrees(mesh, xd, idd, ud):
    args = [T([64, 32, 48], xd), T([16], idd, int_high=64), T([32, 32, 48], ud)]
    ins, outs = same_answer("scatter", "forward", mesh, args, [], [True])
    assert dims(outs) == [[-1, 0, -1]]


@pytest.mark.parametrize("mesh,idd,ud", [((4,), [-1], [0, -1, -1]), ((2, 3), [0], [-1, 1, -1])])
def test_scatter_rows_stay_whole_where_paddle_pairs_them_wrongly(mesh, idd, ud):
    args = [T([64, 32, 48], [-1, -1, -1]), T([16], idd, int_high=64), T([32, 32, 48], ud)]
    ins, outs, verdict = run(ours(), "scatter", "forward", mesh, args, [], [True])
    assert verdict, verdict.reason
    assert dims(ins)[1:] == [[-1], [-1, ud[1], -1]]
    # Paddle splits 16 ids and 32 update rows alike (4 ids meet 8 rows) and sums the ranks
    _, _, p_verdict = run(paddle(), "scatter", "forward", mesh, args, [], [True])
    assert not p_verdict


# ---- einsum: a label twice in the result; a size-1 dim that broadcasts -------------------------
def test_einsum_repeated_result_label():
    x = [T([2, 4], [0, 1])]
    ins, outs = same_answer("einsum", "forward", (2, 2), [x], [], ["ij->ii"])
    assert dims(ins) == [[[-1, 1]]] and outs[0].partial_dict == {1: "sum"}
    ins, outs = same_answer("einsum", "grad", (2, 2), [x, x, T([2, 2], [-1, -1])], [], ["ij->ii"])
    assert dims(outs) == [[-1, 1]]  # x_grad's elements (the list output comes back flat)


def test_einsum_size_one_label_broadcasts():
    xs = [T([8, 2, 4, 2], [0, -1, -1, 1]), T([1, 2, 4], [-1, 1, -1])]
    ins, outs = same_answer("einsum", "forward", (2, 2), [xs], [], ["nbjk,bkl->bjl"])
    assert outs[0].partial_dict == {0: "sum", 1: "sum"}
    ins, outs = same_answer("einsum", "grad", (2, 2), [xs, xs, T([2, 4, 4], [-1, -1, -1])], [], ["nbjk,bkl->bjl"])
    assert outs[1].partial_dict == {0: "sum"}  # y's grad: n, which y lacks, is split
    # b split by x: y's size-1 b stays whole, and y's grad sums over b (Paddle splits y's one row)
    xs = [T([8, 2, 4, 2], [-1, 0, -1, 1]), T([1, 2, 4], [-1, -1, -1])]
    og = T([2, 4, 4], [0, -1, -1])
    ins, outs, verdict = run(ours(), "einsum", "grad", (2, 2), [xs, xs, og], [], ["nbjk,bkl->bjl"])
    assert verdict, verdict.reason
    assert dims(ins[0]) == [[-1, 0, -1, 1], [-1, 1, -1]] and outs[1].partial_dict == {0: "sum"}
    _, _, p_verdict = run(paddle(), "einsum", "grad", (2, 2), [xs, xs, og], [], ["nbjk,bkl->bjl"])
    assert not p_verdict


# ---- reshape of an input with dynamic (-1) dims ------------------------------------------------
@pytest.mark.parametrize("xd,expect_x,expect_out", [
    ([0, 1, -1], [0, 1, -1], [0, 1, -1, -1]),
    ([0, -1, 1], [0, -1, -1], [0, -1, -1, -1]),
    ([1, -1, 0], [1, -1, 0], [1, -1, 0, -1]),
])
def test_reshape_copies_dynamic_dims(xd, expect_x, expect_out):
    x = T([-1, -1, 3072], xd)
    ins, outs = answer(ours(), "reshape", "forward", (2, 3), [x], [[0, 0, -1, 192]])
    assert (ins, outs) == answer(paddle(), "reshape", "forward", (2, 3), [x], [[0, 0, -1, 192]])
    assert dims(ins + outs) == [expect_x, expect_out]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(MAPPINGS), st.lists(st.sampled_from([1, 2, 3]), min_size=2, max_size=2),
       st.sampled_from([(4, 6), (6, 4), (24,), (2, 12), (2, 3, 4)]))
def test_reshape_dynamic_dims_answer_as_any_size_would(xd, sizes, tail):
    """Dynamic dims copied with 0 are answered as concrete sizes every mesh dim divides would
    be, in both directions, and that answer executes on the simulator."""
    mesh, attr = (2, 3), [[0, 0, *tail]]
    concrete = [6 * s for s in sizes] + [24]
    spelled = [concrete[:2] + list(tail)]  # numpy's reshape (the kernel) does not read 0 as "copy"
    ins, outs, verdict = run(ours(), "reshape", "forward", mesh, [T(concrete, xd)], [], spelled)
    assert verdict, verdict.reason
    assert answer(ours(), "reshape", "forward", mesh, [T([-1, -1, 24], xd)], attr) == (ins, outs)
    out_d = dims(outs)[0]
    r_ins, r_outs, r_verdict = run(ours(), "reshape", "reverse", mesh, [T(concrete, [-1] * 3)],
                                   [T(concrete[:2] + list(tail), out_d)], spelled)
    assert r_verdict, r_verdict.reason
    dynamic = answer(ours(), "reshape", "reverse", mesh, [T([-1, -1, 24], [-1] * 3), T([-1, -1, *tail], out_d)], attr)
    assert dynamic == (r_ins, r_outs)


@pytest.mark.parametrize("rule,shape,xd,attrs", [
    ("unsqueeze", [-1, 4, 6], [0, -1, 1], [[0, 2]]),
    ("squeeze", [-1, 1, 6], [0, -1, 1], [[1]]),
    ("flatten", [-1, 4, 6], [0, -1, 1], [1, 2]),
    ("reshape", [2, -1, 6], [0, 1, -1], [[0, 0, 2, 3]]),
])
def test_dim_trans_dynamic_dims_that_stay_answer_as_a_concrete_size(rule, shape, xd, attrs):
    concrete = [12 if n < 0 else n for n in shape]
    spelled = [[2, 12, 2, 3]] if rule == "reshape" else attrs  # the kernel's own spelling of the shape
    ins, outs, verdict = run(ours(), rule, "forward", (2, 3), [T(concrete, xd)], [], spelled)
    assert verdict, verdict.reason
    assert answer(ours(), rule, "forward", (2, 3), [T(shape, xd)], attrs) == (ins, outs)
    ex = Execution(kernel_spec(SPECS[rule], "forward", SPECS), (2, 3), [T(concrete, xd)], spelled, np.random.default_rng(0))
    out_shape = [-1 if n == 12 else n for n in ex.output_shapes[0]]  # the dynamic dim again
    rev = answer(ours(), rule, "reverse", (2, 3), [T(shape, [-1] * 3), T(out_shape, dims(outs)[0])], attrs)
    assert rev[0] == ins


def raises_value_error(match, *call):
    """spmdkit refuses the call with a ValueError whose message matches."""
    with pytest.raises(RuleRejected, match=match) as info:
        answer(ours(), *call)
    assert isinstance(info.value.__cause__, ValueError)


def test_reshape_dynamic_dims_that_cannot_be_copied_raise():
    raises_value_error(r"reshape: input 'x' has unknown size at dim 0, which attribute 'shape' does not copy",
                       "reshape", "forward", (2, 3), [T([-1, 6], [0, 1])], [[-1]])
    raises_value_error(r"flatten: input 'x' has unknown size at dim 0, which the flatten merges",
                       "flatten", "forward", (2, 3), [T([-1, 4, 6], [0, -1, 1])], [0, 1])


# ---- DimTrans reverse reads only x's shape ------------------------------------------------------
def test_unsqueeze_reverse_ignores_a_stale_x_mapping():
    """Paddle's test changes x's shape but not its dims_mapping before a reverse call."""
    from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core
    mesh = ProcessMesh([[0, 1, 2, 3], [4, 5, 6, 7]])
    a = TensorDistAttr()
    a.process_mesh, a.dims_mapping = mesh, [-1, -1]
    x, out = DistTensorSpec([8, 16], a), DistTensorSpec([8, 16], a)
    x.shape, out.shape = [1, 8, 16], [1, 1, 8, 16]
    out.set_dims_mapping([-1, 0, 1, -1])
    ins, outs = core.get_phi_spmd_rule("unsqueeze").infer_backward(x, out, [0])
    assert (ins[0].dims_mapping, outs[0].dims_mapping) == ([-1, 1, -1], [-1, -1, 1, -1])
    same_answer("unsqueeze", "reverse", (2, 4), [T([1, 8, 16], [-1, -1, -1])], [T([1, 1, 8, 16], [-1, 0, 1, -1])], [[0]])


# ---- issue 8: 1-D norm statistics -----------------------------------------------------------------
def _flat_stats(spec):
    """The spec with a kernel that returns the statistics 1-D, as Paddle's kernels hold them."""
    return replace(spec, kernel=f"(lambda r: (r[0],) + tuple(np.reshape(t, -1) for t in r[1:]))({spec.kernel})")


@pytest.mark.parametrize("mesh,out_d,mean_d,expect_x", [
    ((2, 2), [0, 1, -1], [0], [0, -1, -1]),      # the flattened mean keeps only the leading split
    ((2, 2), [-1, -1, -1], [0], [0, -1, -1]),
    ((2, 3), [1, 0, -1], [1], [1, -1, -1]),
    ((3, 2), [-1, 1, -1], [-1], [-1, -1, -1]),   # a split of the second dim cannot be a block of it
])
def test_layer_norm_reverse_takes_a_1d_mean(mesh, out_d, mean_d, expect_x):
    args = [T([6, 4, 8], [-1, -1, -1]), T([8], [-1]), T([8], [-1])]
    outs = [T([6, 4, 8], out_d), T([24], mean_d), T([24], mean_d)]
    ins, got, verdict = run(ours(), "layer_norm", "reverse", mesh, args, outs, [1e-5, 2],
                            spec=_flat_stats(SPECS["layer_norm"]))
    assert verdict, verdict.reason
    assert dims(ins)[0] == expect_x and [p.ndim for p in got] == [3, 1, 1]
    # Paddle answers a rank-2 layout for the 1-D mean: no tensor of the kernel has that rank
    p_ins, p_got = answer(paddle(), "layer_norm", "reverse", mesh, args + outs, [1e-5, 2])
    assert p_got[1].ndim == 2


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([(2, 2), (2, 3), (3, 2)]), st.lists(st.sampled_from([2, 3, 4, 6]), min_size=2, max_size=2),
       st.sampled_from(MAPPINGS), st.sampled_from([-1, 0, 1]))
def test_layer_norm_reverse_with_a_1d_mean_executes(mesh, lead, out_d, mean_m):
    """Any split of out and of the 1-D mean: the inferred layouts run right on every rank."""
    n = lead[0] * lead[1]
    args = [T(lead + [4], [-1] * 3), T([4], [-1]), T([4], [-1])]
    outs = [T(lead + [4], out_d), T([n], [mean_m]), T([n], [-1])]
    ins, got, verdict = run(ours(), "layer_norm", "reverse", mesh, args, outs, [1e-5, 2],
                            spec=_flat_stats(SPECS["layer_norm"]))
    assert verdict, verdict.reason
    # a block of the flattened mean is a block of x's first dim with the second whole
    assert dims(ins)[0][1] == -1 and dims(got)[1] == dims(got)[2] == [dims(ins)[0][0]]


def test_layer_norm_keeps_paddles_rank_for_a_per_dim_mean():
    args = [T([6, 4, 8], [-1, -1, -1]), T([8], [-1]), T([8], [-1])]
    outs = [T([6, 4, 8], [-1, -1, -1]), T([6, 4], [0, 1]), T([6, 4], [-1, 1])]
    ins, got = same_answer("layer_norm", "reverse", (2, 2), args, outs, [1e-5, 2])
    assert dims(ins)[0] == [0, 1, -1] and dims(got)[1:] == [[0, 1], [0, 1]]  # Paddle's test


@pytest.mark.parametrize("lead,stats,stat_d,expect", [
    ((4, 3), (12,), [0], [0]), ((4, 3), (12,), [1], [1]), ((4, 3), (4, 3), [0, 1], [0, 1]),
    ((3, 4), (12,), [0], [-1]),  # 3 rows over 2 ranks: uneven blocks of x's dim 0 are not blocks of [12]
])
def test_norm_grads_take_1d_statistics(lead, stats, stat_d, expect):
    ln = [T(lead + (8,), [-1] * 3), T([8], [-1]), T([8], [-1]), T(stats, stat_d), T(stats, stat_d), T(lead + (8,), [-1] * 3)]
    ins, outs, verdict = run(ours(), "layer_norm_grad", "forward", (2, 2), ln, [], [1e-5, 2])
    assert verdict, verdict.reason
    assert dims(ins)[3] == expect and dims(ins)[0][:1] == expect[:1]


@pytest.mark.parametrize("nc,stats,expect_x,expect_stats", [
    ((4, 3), (12,), [0, -1], [0]),     # 1-D [N*C]: only N keeps its split, C is made whole
    ((4, 3), (4, 3), [0, 1], [0, 1]),  # Paddle's [N, C]
    ((3, 4), (12,), [-1, -1], [-1]),   # 3 samples over 2 ranks: not blocks of [N*C]
])
def test_instance_norm_grad_takes_1d_statistics(nc, stats, expect_x, expect_stats):
    xs = nc + (5, 5)  # x settles the layout (sources: [x]); the statistics follow
    inn = [T(xs, [0, 1, -1, -1]), T([nc[1]], [-1]), T([nc[1]], [-1]), T(stats, [-1] * len(stats)),
           T(stats, [-1] * len(stats)), T(xs, [-1] * 4)]
    ins, outs, verdict = run(ours(), "instance_norm", "grad", (2, 2), inn, [], [1e-5])
    assert verdict, verdict.reason
    assert dims(ins)[0][:2] == expect_x and dims(ins)[3] == expect_stats
    if len(stats) == 1:  # Paddle's grad rule refuses the 1-D statistics its kernel produces
        with pytest.raises(RuleRejected, match="ndim of saved_mean in instance_norm should be 2"):
            run(paddle(), "instance_norm", "grad", (2, 2), inn, [], [1e-5])
    else:
        p_ins, _, _ = run(paddle(), "instance_norm", "grad", (2, 2), inn, [], [1e-5])
        assert p_ins[3] == ins[3]


# ---- issue 8: reduce_base's reverse takes Paddle's 4 arguments --------------------------------------
def test_reduce_base_reverse_takes_four_arguments():
    from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core
    mesh = ProcessMesh([[0, 1], [2, 3]])

    def spec(shape, mapping):
        a = TensorDistAttr()
        a.process_mesh, a.dims_mapping = mesh, mapping
        return DistTensorSpec(shape, a)
    rule = core.get_phi_spmd_rule("reduce_base")
    four = rule.infer_backward(spec([4, 8, 16], [-1, -1, -1]), spec([4, 16], [0, 1]), [1], False)
    five = rule.infer_backward(spec([4, 8, 16], [-1, -1, -1]), spec([4, 16], [0, 1]), [1], False, 0)
    assert [a.dims_mapping for a in four[0] + four[1]] == [a.dims_mapping for a in five[0] + five[1]] == [[0, -1, 1], [0, 1]]
    # the 5-argument call against Paddle's 4-argument one (the adapter drops reduce_type), executed
    same_answer("reduce_base", "reverse", (2, 2), [T([4, 8, 16], [-1, -1, -1])], [T([4, 16], [0, 1])], [[1], False, 0])


# ---- issue 8: split's sections add up to the axis ---------------------------------------------------
@pytest.mark.parametrize("sections,message", [
    ([2, 3], r"split: attribute 'sections' adds up to 5, but dim 1 \('axis'\) of the input has size 8"),
    ([9, -1], r"adds up to 9 \(and a -1\)"),
    ([3, -1, -1], r"has -1 more than once"),
    ([4, -2, 6], r"has size -2"),
])
def test_split_rejects_sections_that_do_not_add_up(sections, message):
    raises_value_error(message, "split", "forward", (2, 2), [T([4, 8, 16], [0, 1, -1])], [sections, 1])
    # Paddle answers as if they did
    assert answer(paddle(), "split", "forward", (2, 2), [T([4, 8, 16], [0, 1, -1])], [sections, 1])


def test_split_takes_one_inferred_section():
    ins, outs = same_answer("split", "forward", (2, 2), [T([4, 8, 16], [0, 1, -1])], [], [[2, -1], 1])
    assert dims(outs) == [[0, -1, -1], [0, -1, -1]]


# ---- calls Paddle's tests make that no kernel runs: spmdkit raises; the consistent call is proven --
def test_roi_align_grad_channels_must_match():
    x, boxes, num = T([2, 4, 16, 16], [0, 1, -1, -1]), T([6, 6], [-1, 1]), T([2], [-1])
    raises_value_error(r"roi_align_grad: input 'out_grad': dim 1 has size 2, but the same factor has size 4",
                       "roi_align", "grad", (2, 2), [x, boxes, num, T([6, 2, 3, 3], [0, -1, -1, -1])], [3, 3, 0.5, -1, True])
    consistent = [x, T([6, 4], [-1, 1]), num, T([6, 4, 3, 3], [0, -1, -1, -1])]
    ours_ = answer(ours(), "roi_align", "grad", (2, 2), consistent, [3, 3, 0.5, -1, True])
    assert ours_ == answer(paddle(), "roi_align", "grad", (2, 2), consistent, [3, 3, 0.5, -1, True])
    assert dims(ours_[0]) == [[-1, 1, -1, -1], [-1, -1], [-1], [-1, 1, -1, -1]]


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cumext_grad_out_grad_has_x_shape(op):
    from spmdkit.verify.families.elementwise_reduce import _int64
    x = T([16, 16, 16], [0, -1, 1])
    raises_value_error(rf"{op}_grad: input 'out_grad': dim 1 has size 2, but the same factor has size 16",
                       op, "grad", (2, 2), [x, x, T([16, 2, 16], [-1, 1, -1])], [1, _int64()])
    idx = T([16, 16, 16], [0, -1, 1], int_high=16)
    ins, outs = same_answer(op, "grad", (2, 2), [x, idx, T([16, 16, 16], [-1, 1, -1])], [], [1, _int64()])
    assert dims(ins + outs) == [[0, -1, 1]] * 4  # Paddle's expectation


def test_conv2d_transpose_nhwc_grad_reads_out_grad_as_nhwc():
    attrs = [[1, 1], [0, 0], [], [], "EXPLICIT", 1, [1, 1], "NHWC"]
    x, w = T([2, 8, 8, 4], [-1, -1, -1, -1]), T([4, 6, 3, 3], [-1, -1, -1, -1])
    raises_value_error(r"conv2d_transpose_grad: input 'out_grad': dim 3 has size 10, but the same factor has size 6",
                       "conv2d_transpose", "grad", (2, 2, 2), [x, w, T([2, 6, 10, 10], [0, 1, -1, -1])], attrs)
    og = T([2, 10, 10, 6], [0, -1, -1, 1])  # NHWC: the channels are last
    ins, outs, verdict = run(ours(), "conv2d_transpose", "grad", (2, 2, 2), [x, w, og], [], attrs)
    assert verdict, verdict.reason
    assert dims(ins)[1] == [-1, 1, -1, -1] and outs[0].partial_dict == {1: "sum"}
    _, _, p_verdict = run(paddle(), "conv2d_transpose", "grad", (2, 2, 2), [x, w, og], [], attrs)
    assert not p_verdict  # Paddle reads out_grad's dim 1 (H_out) as the channels


def test_gather_nd_index_longer_than_x_rank():
    raises_value_error(r"gather_nd: input 'x' has rank 1, but needs at least 4 dims",
                       "gather_nd", "forward", (2, 4), [T([10], [-1]), T([4], [0], int_high=10)], [])
    ins, outs = same_answer("gather_nd", "forward", (2, 4), [T([10], [-1]), T([8, 1], [0, -1], int_high=10)], [], [])
    assert dims(ins + outs) == [[-1], [0, -1], [0]]


def test_add_n_input_split_and_partial_on_one_mesh_dim():
    from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core
    mesh = ProcessMesh([[0, 1], [2, 3]])
    a, b = TensorDistAttr(), TensorDistAttr()
    a.process_mesh = b.process_mesh = mesh
    a._set_partial_dims([0])
    b._set_partial_dims([1])
    x, y = DistTensorSpec([16, 16, 16], a), DistTensorSpec([16, 16, 16], b)
    x.set_dims_mapping([0, -1, -1])
    y.set_dims_mapping([-1, -1, -1])
    with pytest.raises(ValueError, match=r"add_n: input 'x\[0\]': mesh dim 0 both splits a dim and is partial"):
        core.get_phi_spmd_rule("add_n").infer_forward([x, y])


def test_slice_decrease_axis_names_a_dim_of_size_1():
    """Paddle's tests decrease dim 0 (size 8) of a slice along other axes; its kernel refuses."""
    message = (r"slice: attribute 'decrease_axis' names dim 0 of input 'input', of size 8, which the op leaves "
               r"as it is; only a dim of size 1 can be removed")
    x = T([8, 8, 16, 16], [-1, 0, 1, -1])
    raises_value_error(message, "slice", "forward", (2, 4), [x], [[-1], [4], [8], [0], [0]])
    raises_value_error(message, "slice", "reverse", (2, 4), [x, T([8, 8, 16, 4], [-1, -1, 0, 1])], [[-1], [4], [8], [0], [0]])
    # a sliced dim may be decreased (its size after slicing is the kernel's to check)
    ins, outs, verdict = run(ours(), "slice", "forward", (2, 4), [x], [], [[0, 3], [2, 4], [3, 8], [0], [0]])
    assert verdict, verdict.reason
    assert dims(outs) == [[0, 1, -1]]


def test_slice_decrease_axis_removes_the_dim():
    """A valid decrease (dim 0 sliced to 1): Paddle ignores decrease_axis, answering rank 4 for a
    rank-3 result forward and refusing the rank-3 output in reverse."""
    attrs = [[0, 3], [0, 4], [1, 8], [0], [0]]
    ins, outs, verdict = run(ours(), "slice", "forward", (2, 4), [T([8, 8, 16, 16], [0, -1, 1, -1])], [], attrs)
    assert verdict, verdict.reason
    assert dims(outs) == [[-1, 1, -1]]
    _, _, p_verdict = run(paddle(), "slice", "forward", (2, 4), [T([8, 8, 16, 16], [0, -1, 1, -1])], [], attrs)
    assert not p_verdict
    ins, outs, verdict = run(ours(), "slice", "reverse", (2, 4), [T([8, 8, 16, 16], [-1] * 4)], [T([8, 16, 4], [0, 1, -1])], attrs)
    assert verdict, verdict.reason
    with pytest.raises(RuleRejected, match="rank"):
        run(paddle(), "slice", "reverse", (2, 4), [T([8, 8, 16, 16], [-1] * 4)], [T([8, 16, 4], [0, 1, -1])], attrs)

