"""einsum, fused_gemm_epilogue, linear_v2, fused_linear_param_grad_add, the norms, the c_softmax
losses, rotary embedding and the training-step grads (Paddle-style: dims mappings and partial
status checked by reasoning about the op; mesh2d is 2 x 3)."""
import pytest

from spmdkit import core


def dm(attrs):
    return [[dm(x) for x in a] if isinstance(a, list) else a.dims_mapping for a in attrs] \
        if isinstance(attrs, (list, tuple)) else attrs.dims_mapping


def partial(a):
    return dict(a.partial_status)


def empty(mesh, spec):
    return spec(mesh, [], [])


# ---- einsum ---------------------------------------------------------------------------------
def test_einsum_contraction_is_partial(mesh2d, spec):
    rule = core.get_phi_spmd_rule("einsum")
    x, y = spec(mesh2d, [8, 12], [0, 1]), spec(mesh2d, [12, 6], [1, -1])
    for eq in ("ij,jk->ik", "ij,jk", " i j , j k -> i k", "iJ,Jk->ik"):
        ins, outs = rule.infer_forward([x, y], eq)
        assert dm(ins) == [[[0, 1], [1, -1]]], eq
        assert dm(outs) == [[0, -1]] and partial(outs[0]) == {1: "sum"}, eq  # j (mesh 1) is summed
    # implicit result: the labels used once, in character order ("ba" is a transpose)
    ins, outs = rule.infer_forward([spec(mesh2d, [8, 12], [0, 1])], "ba")
    assert dm(outs) == [[1, 0]] and not outs[0]._is_partial()


def test_einsum_ellipsis_broadcasts_batch_dims(mesh2d, spec):
    rule = core.get_phi_spmd_rule("einsum")
    x, y = spec(mesh2d, [4, 8, 6], [0, -1, 1]), spec(mesh2d, [6, 12], [1, -1])
    ins, outs = rule.infer_forward([x, y], "...ij,...jk->...ik")
    assert dm(ins) == [[[0, -1, 1], [1, -1]]]
    assert dm(outs) == [[0, -1, -1]] and partial(outs[0]) == {1: "sum"}


def test_einsum_diagonal_labels_are_never_split(mesh2d, spec):
    rule = core.get_phi_spmd_rule("einsum")
    ins, outs = rule.infer_forward([spec(mesh2d, [6, 6], [0, 1])], "ii->i")
    assert dm(ins) == [[[-1, -1]]] and dm(outs) == [[-1]] and not outs[0]._is_partial()
    # the trace sums nothing split: not partial (Paddle's rule marks it partial over the split rows)
    ins, outs = rule.infer_forward([spec(mesh2d, [6, 6], [0, -1])], "ii->")
    assert dm(outs) == [[]] and not outs[0]._is_partial()


def test_einsum_outer_product_keeps_the_first_split_operand(mesh2d, spec):
    rule = core.get_phi_spmd_rule("einsum")
    ins, outs = rule.infer_forward([spec(mesh2d, [8], [0]), spec(mesh2d, [6], [1])], "i,j->ij")
    assert dm(ins) == [[[0], [-1]]] and dm(outs) == [[0, -1]]  # y is kept whole, as Paddle does
    ins, outs = rule.infer_forward([spec(mesh2d, [8], [-1]), spec(mesh2d, [6], [1])], "i,j->ji")
    assert dm(ins) == [[[-1], [1]]] and dm(outs) == [[1, -1]]


def test_einsum_takes_more_than_two_operands(mesh2d, spec):
    rule = core.get_phi_spmd_rule("einsum")
    xs = [spec(mesh2d, [8, 6], [0, -1]), spec(mesh2d, [6, 4], [-1, -1]), spec(mesh2d, [4, 9], [-1, 1])]
    ins, outs = rule.infer_forward(xs, "ij,jk,kl->il")
    assert dm(outs) == [[0, 1]] and not outs[0]._is_partial()


def test_einsum_grad(mesh2d, spec):
    rule = core.get_phi_spmd_rule("einsum")
    assert rule.backward_kind == "grad"
    x, y = spec(mesh2d, [8, 12], [0, 1]), spec(mesh2d, [12, 6], [1, -1])
    cache = [empty(mesh2d, spec), empty(mesh2d, spec)]
    ins, outs = rule.infer_backward([x, y], cache, spec(mesh2d, [8, 6], [-1, 1]), "ij,jk->ik")
    # inner_cache is not read and not returned (Paddle's convention); out_grad follows x and y
    assert dm(ins) == [[[0, 1], [1, -1]], [0, -1]]
    (x_grad, y_grad), = outs
    # dx = dout @ y^T sums over k (whole): not partial; dy = x^T @ dout sums over i (mesh 0)
    assert dm(x_grad) == [0, 1] and not x_grad._is_partial()
    assert dm(y_grad) == [1, -1] and partial(y_grad) == {0: "sum"}
    # one operand: out_grad proposes too; the grad is out_grad broadcast, never partial
    ins, outs = rule.infer_backward([spec(mesh2d, [8, 12], [-1, 1])], [empty(mesh2d, spec)],
                                    spec(mesh2d, [8], [0]), "ij->i")
    assert dm(ins) == [[[0, 1]], [0]] and dm(outs) == [[[0, 1]]] and not outs[0][0]._is_partial()


def test_einsum_bad_equations(mesh2d, spec):
    rule = core.get_phi_spmd_rule("einsum")
    x, y = spec(mesh2d, [8, 12], [0, 1]), spec(mesh2d, [12, 6], [1, -1])
    with pytest.raises(ValueError, match=r"einsum: attribute 'equation' = \"ij,jk->iq\": label 'q' of the result is in no operand"):
        rule.infer_forward([x, y], "ij,jk->iq")
    with pytest.raises(ValueError, match=r"einsum: .* has 1 operands, but input 'x' holds 2 tensors"):
        rule.infer_forward([x, y], "ij->i")
    with pytest.raises(ValueError, match=r"einsum: input 'x\[1\]' has rank 2, but must have rank 3"):
        rule.infer_forward([x, y], "ij,jkl->ikl")
    with pytest.raises(ValueError, match=r"einsum: input 'x\[1\]': dim 0 has size 12, but the same factor has size 8"):
        rule.infer_forward([x, y], "ij,ik->jk")
    with pytest.raises(ValueError, match=r"bad character '#'"):
        rule.infer_forward([x], "i#->i")
    with pytest.raises(TypeError, match=r"einsum.infer_forward: argument 1 'equation' must be str"):
        rule.infer_forward([x], 3)


# ---- matmul-like --------------------------------------------------------------------------
def test_fused_gemm_epilogue_is_never_partial(mesh2d, spec):
    rule = core.get_phi_spmd_rule("fused_gemm_epilogue")
    assert rule.backward_kind is None
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 12], [0, 1]), spec(mesh2d, [12, 6], [1, -1]),
                                   spec(mesh2d, [6], [-1]), False, False)
    # k (mesh 1) split would leave the product partial before the bias and the activation:
    # m, k and n are made whole instead (Paddle's current rule and unit test)
    assert dm(ins) == [[-1, -1], [-1, -1], [-1]] and not ins[2]._is_partial()
    assert dm(outs[0]) == [-1, -1] and not outs[0]._is_partial()
    assert dm(outs[1]) == [] and not outs[1]._is_partial()  # reserve_space: a workspace
    # batch dims keep their splits
    ins, outs = rule.infer_forward(spec(mesh2d, [4, 8, 12], [0, -1, 1]), spec(mesh2d, [12, 6], [-1, -1]),
                                   spec(mesh2d, [6], [-1]), False, False)
    assert dm(ins) == [[0, -1, -1], [-1, -1], [-1]] and dm(outs[0]) == [0, -1, -1] and not outs[0]._is_partial()
    # n split: the bias follows the output's last dim; transposed x ([k, m])
    ins, outs = rule.infer_forward(spec(mesh2d, [12, 8], [-1, 0]), spec(mesh2d, [12, 6], [-1, 1]),
                                   spec(mesh2d, [6], [-1]), True, False)
    assert dm(ins) == [[-1, 0], [-1, 1], [1]] and dm(outs[0]) == [0, 1] and not ins[2]._is_partial()
    with pytest.raises(ValueError, match=r"fused_gemm_epilogue: input 'bias': dim 0 has size 7, but the same factor has size 6"):
        rule.infer_forward(spec(mesh2d, [8, 12], [0, 1]), spec(mesh2d, [12, 6], [1, -1]), spec(mesh2d, [7], [-1]),
                           False, False)


def test_linear_v2_is_never_partial(mesh2d, spec):
    rule = core.get_phi_spmd_rule("linear_v2")
    # k split: m, k and n are made whole instead of leaving the output partial; batch dims keep theirs
    ins, outs = rule.infer_forward(spec(mesh2d, [4, 8, 12], [0, -1, 1]), spec(mesh2d, [12, 6], [1, -1]),
                                   spec(mesh2d, [6], [-1]), False)
    assert dm(ins) == [[0, -1, -1], [-1, -1], [-1]] and dm(outs[0]) == [0, -1, -1]
    assert not outs[0]._is_partial()
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 12], [0, -1]), spec(mesh2d, [12, 6], [-1, 1]),
                                   spec(mesh2d, [6], [-1]), False)
    assert dm(ins) == [[0, -1], [-1, 1], [1]] and dm(outs[0]) == [0, 1]
    # a transposed weight [n, k] and no bias (Paddle rejects both)
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 12], [0, -1]), spec(mesh2d, [6, 12], [1, -1]), None, True)
    assert dm(ins) == [[0, -1], [1, -1], []] and dm(outs[0]) == [0, 1]
    with pytest.raises(ValueError, match=r"linear_v2: input 'weight' has rank 3, but must have rank 2"):
        rule.infer_forward(spec(mesh2d, [8, 12], [0, -1]), spec(mesh2d, [2, 12, 6], [-1, -1, -1]), None, False)


def test_fused_linear_param_grad_add(mesh2d, spec):
    rule = core.get_phi_spmd_rule("fused_linear_param_grad_add")
    x, dout = spec(mesh2d, [4, 6, 12], [0, -1, 1]), spec(mesh2d, [4, 6, 9], [-1, 1, -1])
    ins, outs = rule.infer_forward(x, dout, None, None, True, True)
    # batch follows x (mesh 0); x's columns (m) keep mesh 1, so dout's rows (k) lose it
    assert dm(ins) == [[0, -1, 1], [0, -1, -1], [], []]
    # dweight sums over the batch (mesh 0): partial; dbias too, and it does not depend on x's columns
    assert dm(outs) == [[1, -1], [-1]]
    assert partial(outs[0]) == {0: "sum"} and partial(outs[1]) == {0: "sum"}
    # a given dweight / dbias is added into the grads: it takes their layout, partial status included
    ins, outs = rule.infer_forward(x, dout, spec(mesh2d, [12, 9], [-1, -1]), spec(mesh2d, [9], [0]), True, True)
    assert dm(ins[2:]) == [[1, -1], [-1]] and partial(ins[2]) == {0: "sum"} and partial(ins[3]) == {0: "sum"}
    # no bias: dbias_out is absent
    ins, outs = rule.infer_forward(x, dout, None, None, True, False)
    assert dm(outs[1]) == [] and not outs[1]._is_partial()
    # the reverse rule infers nothing (Paddle's FakeReverse)
    assert rule.backward_kind == "reverse"
    assert rule.infer_backward() == ([], [])
    assert rule.infer_backward(x, dout, None, None, spec(mesh2d, [12, 9], [-1, -1]), spec(mesh2d, [9], [-1])) == ([], [])


def test_bmm_and_matmul_grads_are_partial_over_what_they_lack(mesh2d, spec):
    bmm = core.get_phi_spmd_rule("bmm")
    x, y = spec(mesh2d, [4, 8, 6], [0, 1, -1]), spec(mesh2d, [4, 6, 12], [-1, -1, 1])
    ins, outs = bmm.infer_backward(x, y, spec(mesh2d, [4, 8, 12], [-1, -1, -1]))
    # m and n both want mesh 1: the larger (n = 12) keeps it; out_grad follows x and y
    assert dm(ins) == [[0, -1, -1], [0, -1, 1], [0, -1, 1]]
    assert dm(outs) == [[0, -1, -1], [0, -1, 1]]
    assert partial(outs[0]) == {1: "sum"} and not outs[1]._is_partial()  # dx sums over n
    mm = core.get_phi_spmd_rule("matmul_grad")
    # x broadcasts over y's batch dim (mesh 1): x_grad sums over it; y_grad sums over m (mesh 0)
    ins, outs = mm.infer_forward(spec(mesh2d, [8, 6], [0, -1]), spec(mesh2d, [6, 6, 12], [1, -1, -1]),
                                 spec(mesh2d, [6, 8, 12], [-1, -1, -1]), False, False)
    assert dm(ins) == [[0, -1], [1, -1, -1], [1, 0, -1]]
    assert dm(outs) == [[0, -1], [1, -1, -1]]
    assert partial(outs[0]) == {1: "sum"} and partial(outs[1]) == {0: "sum"}


# ---- norms ----------------------------------------------------------------------------------
def test_batch_norm_splits_only_channels(mesh2d, spec):
    rule = core.get_phi_spmd_rule("batch_norm")
    c = [spec(mesh2d, [6], [-1]) for _ in range(4)]
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6, 4, 4], [0, 1, -1, -1]), *c)
    assert dm(ins) == [[-1, 1, -1, -1], [1], [1], [1], [1]]  # scale and bias follow C too
    assert dm(outs) == [[-1, 1, -1, -1], [1], [1], [1], [1], [-1]]
    with pytest.raises(ValueError, match=r"batch_norm: input 'scale' has rank 0, but must have rank 1"):
        rule.infer_forward(spec(mesh2d, [8, 6], [0, 1]), c[0], c[1], empty(mesh2d, spec), c[3])


def test_group_norm_splits_only_samples(mesh2d, spec):
    rule = core.get_phi_spmd_rule("group_norm")
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6, 4, 4], [0, 1, -1, -1]), spec(mesh2d, [6], [1]), None)
    assert dm(ins) == [[0, -1, -1, -1], [-1], []]
    assert dm(outs) == [[0, -1, -1, -1], [0, -1], [0, -1]]  # mean, variance: [N, groups]


def test_instance_norm_and_grad(mesh2d, spec):
    rule = core.get_phi_spmd_rule("instance_norm")
    x = spec(mesh2d, [8, 6, 4, 4], [0, 1, -1, -1])
    ins, outs = rule.infer_forward(x, spec(mesh2d, [6], [-1]), spec(mesh2d, [6], [-1]), 1e-5)
    assert dm(ins) == [[0, 1, -1, -1], [1], [1]] and dm(outs) == [[0, 1, -1, -1], [0, 1], [0, 1]]
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6, 4, 4], [-1, -1, 0, 1]), spec(mesh2d, [6], [-1]), None, 1e-5)
    assert dm(ins) == [[-1, -1, -1, -1], [-1], []]  # spatial dims are whole
    assert rule.backward_kind == "grad"
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 6, 4, 4], [0, -1, -1, -1]), spec(mesh2d, [6], [-1]),
                                    spec(mesh2d, [6], [-1]), spec(mesh2d, [8, 6], [-1, 1]), spec(mesh2d, [8, 6], [-1, -1]),
                                    spec(mesh2d, [8, 6, 4, 4], [1, -1, 0, -1]), 1e-5)
    # x settles the layout; bias is taken but not returned (Paddle's convention)
    assert dm(ins) == [[0, -1, -1, -1], [-1], [0, -1], [0, -1], [0, -1, -1, -1]]
    # scale_grad and bias_grad sum over the samples (mesh 0)
    assert dm(outs) == [[0, -1, -1, -1], [-1], [-1]]
    assert partial(outs[1]) == {0: "sum"} and partial(outs[2]) == {0: "sum"} and not outs[0]._is_partial()
    with pytest.raises(ValueError, match=r"instance_norm: input 'x' has rank 1, but needs at least 2 dims"):
        rule.infer_forward(spec(mesh2d, [8], [0]), None, None, 1e-5)


def test_layer_norm_and_rms_norm_grads(mesh2d, spec):
    ln = core.get_phi_spmd_rule("layer_norm_grad")
    x = spec(mesh2d, [4, 6, 8], [0, 1, -1])
    n = spec(mesh2d, [8], [-1])
    ins, outs = ln.infer_forward(x, n, n, spec(mesh2d, [4, 6], [-1, -1]), spec(mesh2d, [4, 6], [-1, -1]),
                                 spec(mesh2d, [4, 6, 8], [-1, -1, 0]), 1e-5, 2)
    assert dm(ins) == [[0, 1, -1], [-1], [-1], [0, 1], [0, 1], [0, 1, -1]]
    assert dm(outs) == [[0, 1, -1], [-1], [-1]]
    assert not outs[0]._is_partial() and partial(outs[1]) == {0: "sum", 1: "sum"} == partial(outs[2])
    rms = core.get_phi_spmd_rule("fused_rms_norm_grad")
    ins, outs = rms.infer_forward(spec(mesh2d, [4, 8], [0, 1]), spec(mesh2d, [8], [1]), spec(mesh2d, [4], [-1]),
                                  spec(mesh2d, [4, 8], [-1, -1]), 1e-5)
    assert dm(ins) == [[0, -1], [-1], [0], [0, -1]]
    assert dm(outs) == [[0, -1], [-1]] and partial(outs[1]) == {0: "sum"}


# ---- losses ---------------------------------------------------------------------------------
def test_c_softmax_with_cross_entropy_keeps_the_class_axis_split(mesh2d, spec):
    rule = core.get_phi_spmd_rule("c_softmax_with_cross_entropy")
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 12], [0, 1]), spec(mesh2d, [8, 1], [-1, -1]), -100, 0, 3)
    assert dm(ins) == [[0, 1], [0, -1]] and dm(outs) == [[0, 1], [0, -1]]
    # x's class axis and the label's rows both want mesh 1: x's claim comes first
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 12], [-1, 1]), spec(mesh2d, [8, 1], [1, -1]), -100, 0, 3)
    assert dm(ins) == [[-1, 1], [-1, -1]]
    with pytest.raises(ValueError, match=r"c_softmax_with_cross_entropy: input 'x' has rank 0, but needs at least 1 dims"):
        rule.infer_forward(spec(mesh2d, [], []), spec(mesh2d, [8, 1], [-1, -1]), -100, 0, 3)


def test_c_softmax_with_multi_label_cross_entropy(mesh2d, spec):
    rule = core.get_phi_spmd_rule("c_softmax_with_multi_label_cross_entropy")
    x, label, w = spec(mesh2d, [8, 12], [0, -1]), spec(mesh2d, [8, 3], [-1, 1]), spec(mesh2d, [8, 3], [-1, 1])
    ins, outs = rule.infer_forward(x, label, w, -100, True, 0, 1)
    assert dm(ins) == [[0, -1], [0, 1], [0, 1]]
    # summed over a split label axis: the loss is partial; the softmax does not read the labels
    assert dm(outs) == [[0, -1], [0, -1]] and partial(outs[1]) == {1: "sum"} and not outs[0]._is_partial()
    ins, outs = rule.infer_forward(x, label, w, -100, False, 0, 1)
    assert dm(outs) == [[0, -1], [0, 1]] and not outs[1]._is_partial()


# ---- attention ------------------------------------------------------------------------------
def test_fused_rotary_position_embedding(mesh2d, spec):
    rule = core.get_phi_spmd_rule("fused_rotary_position_embedding")
    q = spec(mesh2d, [2, 6, 4, 8], [0, 1, -1, -1])
    k = spec(mesh2d, [2, 6, 4, 8], [-1, -1, -1, -1])
    sin, cos = spec(mesh2d, [6, 8], [-1, -1]), spec(mesh2d, [6, 8], [-1, -1])
    # sin/cos given row by row: the sequence may stay split, sin/cos follow it
    ins, outs = rule.infer_forward(q, k, None, sin, cos, None, True, False, 10000.0)
    assert dm(ins) == [[0, 1, -1, -1], [0, 1, -1, -1], [], [1, -1], [1, -1], []]
    assert dm(outs) == [[0, 1, -1, -1], [0, 1, -1, -1], []]  # no v: no out_v
    # angles computed from positions 0..s-1: the sequence is whole
    ins, outs = rule.infer_forward(q, k, None, None, None, None, True, False, 10000.0)
    assert dm(outs) == [[0, -1, -1, -1], [0, -1, -1, -1], []]
    # rows looked up by position_ids: the sequence is whole, position_ids follow the batch
    ids = spec(mesh2d, [2, 6], [-1, 1])
    table = spec(mesh2d, [16, 8], [-1, -1])
    ins, outs = rule.infer_forward(q, k, None, table, table, ids, True, False, 10000.0)
    assert dm(ins) == [[0, -1, -1, -1], [0, -1, -1, -1], [], [-1, -1], [-1, -1], [0, -1]]
    # the head dim is whole, but Paddle merges first: d claims mesh 1 before heads can
    ins, outs = rule.infer_forward(spec(mesh2d, [2, 6, 4, 8], [-1, -1, -1, 1]),
                                   spec(mesh2d, [2, 6, 4, 8], [-1, -1, 1, -1]), None, None, None, None, True, False, 1e4)
    assert dm(outs) == [[-1, -1, -1, -1], [-1, -1, -1, -1], []]
    # time major: [s, b, h, d]
    ins, outs = rule.infer_forward(spec(mesh2d, [6, 2, 4, 8], [1, 0, -1, -1]), None, None, sin, cos, None, True, True, 1e4)
    assert dm(ins) == [[1, 0, -1, -1], [], [], [1, -1], [1, -1], []]
    # reverse: from the outputs
    ins, outs = rule.infer_backward(q, k, None, sin, cos, None, spec(mesh2d, [2, 6, 4, 8], [-1, 1, 0, -1]),
                                    spec(mesh2d, [2, 6, 4, 8], [-1, -1, -1, -1]), None, True, False, 1e4)
    assert dm(ins) == [[-1, 1, 0, -1], [-1, 1, 0, -1], [], [1, -1], [1, -1], []]
    with pytest.raises(ValueError, match=r"fused_rotary_position_embedding: input 'k': dim 1 has size 5"):
        rule.infer_forward(q, spec(mesh2d, [2, 5, 4, 8], [-1, -1, -1, -1]), None, None, None, None, True, False, 1e4)


def test_flash_attention_grad(mesh2d, spec):
    rule = core.get_phi_spmd_rule("flash_attention_grad")
    t = lambda m: spec(mesh2d, [2, 6, 3, 8], m)  # noqa: E731
    lse = spec(mesh2d, [2, 3, 6], [-1, -1, 1])
    ins, outs = rule.infer_forward(t([0, 1, -1, -1]), t([-1, -1, 1, -1]), t([-1, -1, -1, -1]), t([-1, -1, -1, -1]),
                                   lse, None, None, t([-1, -1, -1, -1]), 0.0, False)
    # batch (mesh 0) and heads (mesh 1) stay split, the sequences and the head dim are whole
    assert dm(ins) == [[0, -1, 1, -1]] * 4 + [[0, 1, -1], [], [], [0, -1, 1, -1]]
    assert dm(outs) == [[0, -1, 1, -1]] * 3 and not any(o._is_partial() for o in outs)


# ---- the spec-language keys these rules use: errors name the file, the entry and the key ----

@pytest.mark.parametrize("body, message", [
    ('  einsum: "* -> @"', "pattern '\\*' needs 'equation'"),
    ('  equation: eq\n  einsum: "*i -> @"', "'\\*' and '@' must be a whole pattern"),
    ('  equation: n\n  einsum: "* -> @"', "'equation' needs 'n' of type str, it is int"),
    ('  einsum: "i -> i"\n  when:\n    - {if: "n", replicate: [i]}', "'n' is a int attribute; a bare name must be a bool"),
    ('  einsum: "i -> i"\n  when:\n    - {if: "flag &", replicate: [i]}', "expected more, got the end"),
    ('  einsum: "i -> i"\n  when:\n    - {if: "len(x) == 1", replicate: [i]}', "len\\(\\) takes a list input"),
    ('  einsum: "i -> i"\n  like: {out: y}', "'like' names 'y', which is not an input"),
    ('  einsum: "i -> i"\n  accumulate: {x: nope}', "'accumulate' names 'nope', which is not an output"),
    ('  einsum: "i -> i"\n  no_partial: [k]', "'no_partial' names 'k', which is in no input pattern"),
    ('  einsum: "i -> i"\n  depends: {out: [z]}', "'depends' names 'z', which is not an input"),
    ('  einsum: "i -> i"\n  reverse_sources: [x]', "'reverse_sources' names 'x', which is not an output"),
])
def test_spec_errors_of_the_new_keys(load_rules, spec_error, body, message):
    text = ("- op: probe\n  inputs: [x]\n  outputs: [out]\n  attrs: {n: int = 0, eq: str = \"i->i\", flag: bool = false}\n"
            + body + "\n")
    with pytest.raises(spec_error, match="rules_yaml/ops.yaml: entry 'probe': .*" + message):
        load_rules(text)


def test_variant_conditions_compile_to_cpp(load_rules):
    from codegen.emit import render
    specs = load_rules("""
        - op: probe
          inputs: ["xs[]", "k?"]
          outputs: [out]
          attrs: {flag: bool = false}
          einsum: "i, i -> i"
          when:
            - if: "!flag & (k | len(xs) == 2)"
              sources: [xs]
        """)
    cc = render(specs)["rules_ops.cc"]
    assert "(!flag && (!is_absent(k) || xs.size() == 2u)) ? probe_rule_1() : probe_rule()" in cc
    assert "static const EinsumRule& probe_rule_1()" in cc
