"""conv2d, conv3d, depthwise_conv2d, conv2d_transpose, roi_align, default_data_parallel and
replicated (Paddle-style cases, checked by hand), and bad calls naming the op and argument.

Mesh 2x3 (x: 2, y: 3) unless said otherwise; every size below divides what splits it.
"""
import pytest

from spmdkit import core


def dm(attrs):
    return [a.dims_mapping for a in attrs]


def partial(a):
    return dict(a.partial_status)


CONV3D = ([1, 1, 1], [0, 0, 0], "EXPLICIT")   # strides, paddings, padding_algorithm
CONV2D = ([1, 1], [0, 0], "EXPLICIT")


# ---- conv2d (Paddle's registry rule takes no attributes) ------------------------------------
def test_conv2d_reverse_keeps_output_spatial_dims_whole(mesh2d, spec):
    rule = core.get_phi_spmd_rule("conv2d")
    # the output's spatial dims are created by the op: a given split of them is not echoed
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16, 32, 32], [-1] * 4), spec(mesh2d, [30, 16, 3, 3], [-1] * 4),
                                    spec(mesh2d, [8, 30, 30, 30], [-1, 0, 1, -1]))
    assert dm(ins) == [[-1, -1, -1, -1], [0, -1, -1, -1]] and dm(outs) == [[-1, 0, -1, -1]]
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16, 32, 32], [-1] * 4), spec(mesh2d, [30, 16, 3, 3], [-1] * 4),
                                    spec(mesh2d, [8, 30, 30, 30], [0, 1, -1, -1]))
    assert dm(ins) == [[0, -1, -1, -1], [1, -1, -1, -1]] and dm(outs) == [[0, 1, -1, -1]]


def test_conv2d_batch_and_out_channels_on_one_mesh_dim(mesh2d, spec):
    # Paddle's legacy merge: the batch (seen first) keeps mesh dim 0, the filter's rows lose it
    rule = core.get_phi_spmd_rule("conv2d")
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16, 6, 6], [0, -1, -1, -1]), spec(mesh2d, [8, 16, 3, 3], [0, -1, -1, -1]))
    assert dm(ins) == [[0, -1, -1, -1], [-1, -1, -1, -1]] and dm(outs) == [[0, -1, -1, -1]]


# ---- conv3d --------------------------------------------------------------------------------
def conv3d(rule, *tensors, groups=1, data_format="NCDHW", backward=False):
    fn = rule.infer_backward if backward else rule.infer_forward
    return fn(*tensors, *CONV3D, groups, [1, 1, 1], data_format)


def test_conv3d_contracts_in_channels(mesh2d, spec):
    rule = core.get_phi_spmd_rule("conv3d")
    ins, outs = conv3d(rule, spec(mesh2d, [8, 16, 6, 6, 6], [0, 1, -1, -1, -1]), spec(mesh2d, [32, 16, 3, 3, 3], [-1, 1, -1, -1, -1]))
    assert dm(ins) == [[0, 1, -1, -1, -1], [-1, 1, -1, -1, -1]]
    assert dm(outs) == [[0, -1, -1, -1, -1]] and partial(outs[0]) == {1: "sum"}
    # spatial and kernel dims are whole; the filter's rows give the output channels
    ins, outs = conv3d(rule, spec(mesh2d, [8, 16, 6, 6, 6], [-1, -1, 0, -1, 1]), spec(mesh2d, [30, 16, 3, 3, 3], [1, -1, 0, -1, -1]))
    assert dm(ins) == [[-1, -1, -1, -1, -1], [1, -1, -1, -1, -1]] and dm(outs) == [[-1, 1, -1, -1, -1]]
    assert partial(outs[0]) == {}


def test_conv3d_channel_last(mesh2d, spec):
    rule = core.get_phi_spmd_rule("conv3d")
    ins, outs = conv3d(rule, spec(mesh2d, [8, 6, 6, 6, 16], [0, -1, -1, -1, 1]), spec(mesh2d, [32, 16, 3, 3, 3], [-1, 1, -1, -1, -1]),
                       data_format="NDHWC")
    assert dm(ins) == [[0, -1, -1, -1, 1], [-1, 1, -1, -1, -1]]
    assert dm(outs) == [[0, -1, -1, -1, -1]] and partial(outs[0]) == {1: "sum"}
    # the output channels are the last dim of a channel-last output
    ins, outs = conv3d(rule, spec(mesh2d, [8, 6, 6, 6, 16], [0, -1, -1, -1, -1]), spec(mesh2d, [30, 16, 3, 3, 3], [1, -1, -1, -1, -1]),
                       data_format="NDHWC")
    assert dm(outs) == [[0, -1, -1, -1, 1]]


def test_grouped_conv3d_splits_only_the_batch(mesh2d, spec):
    # with groups=2 a rank's channel block would not line up with its groups
    rule = core.get_phi_spmd_rule("conv3d")
    ins, outs = conv3d(rule, spec(mesh2d, [8, 16, 6, 6, 6], [0, 1, -1, -1, -1]), spec(mesh2d, [30, 8, 3, 3, 3], [1, -1, -1, -1, -1]),
                       groups=2)
    assert dm(ins) == [[0, -1, -1, -1, -1], [-1, -1, -1, -1, -1]] and dm(outs) == [[0, -1, -1, -1, -1]]
    assert partial(outs[0]) == {}


def test_conv3d_grad_partials(mesh2d, spec):
    rule = core.get_phi_spmd_rule("conv3d")
    x, w = spec(mesh2d, [8, 16, 6, 6, 6], [-1] * 5), spec(mesh2d, [30, 16, 3, 3, 3], [-1] * 5)
    # out_grad split on the batch (x) and the output channels (y): input_grad sums over the
    # output channels, filter_grad over the batch
    ins, outs = conv3d(rule, x, w, spec(mesh2d, [8, 30, 4, 4, 4], [0, 1, -1, -1, -1]), backward=True)
    assert dm(ins) == [[0, -1, -1, -1, -1], [1, -1, -1, -1, -1], [0, 1, -1, -1, -1]]
    assert dm(outs) == [[0, -1, -1, -1, -1], [1, -1, -1, -1, -1]]
    assert partial(outs[0]) == {1: "sum"} and partial(outs[1]) == {0: "sum"}


def test_conv3d_grad_in_channels_of_input_and_filter_are_independent(mesh2d, spec):
    # input_grad is computed from (filter, out_grad), filter_grad from (input, out_grad): the
    # input's and the filter's in-channels may both use mesh dim 0
    rule = core.get_phi_spmd_rule("conv3d")
    ins, outs = conv3d(rule, spec(mesh2d, [8, 16, 6, 6, 6], [-1, 0, -1, -1, -1]), spec(mesh2d, [30, 16, 3, 3, 3], [-1, 0, -1, -1, -1]),
                       spec(mesh2d, [8, 30, 4, 4, 4], [-1] * 5), backward=True)
    assert dm(ins) == [[-1, 0, -1, -1, -1], [-1, 0, -1, -1, -1], [-1] * 5]
    assert dm(outs) == [[-1, 0, -1, -1, -1], [-1, 0, -1, -1, -1]]
    assert partial(outs[0]) == {} and partial(outs[1]) == {}


# ---- depthwise_conv2d ----------------------------------------------------------------------
def test_depthwise_conv2d(mesh2d, spec):
    rule = core.get_phi_spmd_rule("depthwise_conv2d")
    # groups = in-channels: only the batch may be split
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16, 6, 6], [0, 1, -1, -1]), spec(mesh2d, [48, 1, 3, 3], [1, -1, -1, -1]),
                                   *CONV2D, 16, [1, 1], "NCHW")
    assert dm(ins) == [[0, -1, -1, -1], [-1, -1, -1, -1]] and dm(outs) == [[0, -1, -1, -1]]
    # groups = 1 (one in-channel): an ordinary convolution, the filter's rows give out-channels
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 1, 6, 6], [0, -1, -1, -1]), spec(mesh2d, [48, 1, 3, 3], [1, -1, -1, -1]),
                                   *CONV2D, 1, [1, 1], "NCHW")
    assert dm(outs) == [[0, 1, -1, -1]]
    # grad: filter_grad sums over the split batch
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16, 6, 6], [-1] * 4), spec(mesh2d, [48, 1, 3, 3], [-1] * 4),
                                    spec(mesh2d, [8, 48, 4, 4], [0, 1, -1, -1]), *CONV2D, 16, [1, 1], "NCHW")
    assert dm(ins) == [[0, -1, -1, -1], [-1, -1, -1, -1], [0, -1, -1, -1]]
    assert dm(outs) == [[0, -1, -1, -1], [-1, -1, -1, -1]] and partial(outs[1]) == {0: "sum"}


# ---- conv2d_transpose ----------------------------------------------------------------------
def transpose(rule, *tensors, groups=1, data_format="NCHW", backward=False):
    fn = rule.infer_backward if backward else rule.infer_forward
    return fn(*tensors, [1, 1], [0, 0], [], [], "EXPLICIT", groups, [1, 1], data_format)


def test_conv2d_transpose(mesh2d, spec):
    rule = core.get_phi_spmd_rule("conv2d_transpose")
    # filter [C, M, kh, kw]: dim 0 is contracted with the input channels, dim 1 gives out-channels
    ins, outs = transpose(rule, spec(mesh2d, [8, 16, 6, 6], [0, 1, -1, -1]), spec(mesh2d, [16, 9, 3, 3], [1, -1, -1, -1]))
    assert dm(ins) == [[0, 1, -1, -1], [1, -1, -1, -1]] and dm(outs) == [[0, -1, -1, -1]] and partial(outs[0]) == {1: "sum"}
    ins, outs = transpose(rule, spec(mesh2d, [8, 16, 6, 6], [0, -1, -1, -1]), spec(mesh2d, [16, 9, 3, 3], [-1, 1, -1, -1]))
    assert dm(outs) == [[0, 1, -1, -1]] and partial(outs[0]) == {}
    # channel-last input and output
    ins, outs = transpose(rule, spec(mesh2d, [8, 6, 6, 16], [0, -1, -1, 1]), spec(mesh2d, [16, 9, 3, 3], [1, -1, -1, -1]),
                          data_format="NHWC")
    assert dm(ins) == [[0, -1, -1, 1], [1, -1, -1, -1]] and dm(outs) == [[0, -1, -1, -1]] and partial(outs[0]) == {1: "sum"}
    ins, outs = transpose(rule, spec(mesh2d, [8, 6, 6, 16], [0, -1, -1, -1]), spec(mesh2d, [16, 9, 3, 3], [-1, 1, -1, -1]),
                          data_format="NHWC")
    assert dm(outs) == [[0, -1, -1, 1]]
    # groups 2: channels whole
    ins, outs = transpose(rule, spec(mesh2d, [8, 16, 6, 6], [0, 1, -1, -1]), spec(mesh2d, [16, 9, 3, 3], [1, -1, -1, -1]), groups=2)
    assert dm(ins) == [[0, -1, -1, -1], [-1, -1, -1, -1]] and dm(outs) == [[0, -1, -1, -1]] and partial(outs[0]) == {}


def test_conv2d_transpose_grad(mesh2d, spec):
    rule = core.get_phi_spmd_rule("conv2d_transpose")
    ins, outs = transpose(rule, spec(mesh2d, [8, 16, 6, 6], [-1] * 4), spec(mesh2d, [16, 9, 3, 3], [-1] * 4),
                          spec(mesh2d, [8, 9, 8, 8], [0, 1, -1, -1]), backward=True)
    assert dm(ins) == [[0, -1, -1, -1], [-1, 1, -1, -1], [0, 1, -1, -1]]
    assert dm(outs) == [[0, -1, -1, -1], [-1, 1, -1, -1]]
    assert partial(outs[0]) == {1: "sum"} and partial(outs[1]) == {0: "sum"}


# ---- roi_align -----------------------------------------------------------------------------
ROI = (2, 2, 1.0, -1, True)


def test_roi_align_passes_channels_only(mesh2d, spec):
    rule = core.get_phi_spmd_rule("roi_align")
    ins, outs = rule.infer_forward(spec(mesh2d, [4, 16, 8, 8], [0, 1, -1, -1]), spec(mesh2d, [10, 4], [0, -1]),
                                   spec(mesh2d, [4], [0]), *ROI)
    assert dm(ins) == [[-1, 1, -1, -1], [-1, -1], [-1]] and dm(outs) == [[-1, 1, -1, -1]]
    # an absent boxes_num comes back as a replicated 1-D layout, as Paddle returns it
    ins, outs = rule.infer_forward(spec(mesh2d, [4, 16, 8, 8], [-1, 1, 0, -1]), spec(mesh2d, [10, 4], [-1, -1]), None, *ROI)
    assert dm(ins) == [[-1, 1, -1, -1], [-1, -1], [-1]] and dm(outs) == [[-1, 1, -1, -1]]
    # grad: x_grad is split as the channels are; nothing is summed across ranks
    ins, outs = rule.infer_backward(spec(mesh2d, [4, 16, 8, 8], [-1] * 4), spec(mesh2d, [10, 4], [-1, -1]), spec(mesh2d, [4], [-1]),
                                    spec(mesh2d, [10, 16, 2, 2], [0, 1, -1, -1]), *ROI)
    assert dm(ins) == [[-1, 1, -1, -1], [-1, -1], [-1], [-1, 1, -1, -1]]
    assert dm(outs) == [[-1, 1, -1, -1]] and partial(outs[0]) == {}


# ---- generic rules -------------------------------------------------------------------------
def test_default_data_parallel(mesh2d, spec):
    for name in ("default_data_parallel", "default_"):
        rule = core.get_phi_spmd_rule(name)
        # one layout per tensor (not nested lists), as Paddle returns them
        ins, outs = rule.infer_forward([spec(mesh2d, [8, 16], [-1, 1]), spec(mesh2d, [8, 4], [0, -1])],
                                       [spec(mesh2d, [8, 3], [-1, 1]), spec(mesh2d, [8], [-1])])
        assert dm(ins) == [[0, -1], [0, -1]] and dm(outs) == [[0, -1], [0]]
        ins, outs = rule.infer_backward([spec(mesh2d, [8, 16], [0, 1]), spec(mesh2d, [8, 4, 3], [-1, -1, -1])],
                                        [spec(mesh2d, [8, 3], [1, 0])])
        assert dm(ins) == [[1, -1], [1, -1, -1]] and dm(outs) == [[1, -1]]
    rule = core.get_phi_spmd_rule("default_data_parallel")
    # batch dims split over different mesh dims: the first input's split wins (Paddle raises)
    ins, outs = rule.infer_forward([spec(mesh2d, [6, 2], [0, -1]), spec(mesh2d, [6], [1])], [spec(mesh2d, [6, 5], [-1, -1])])
    assert dm(ins) == [[0, -1], [0]] and dm(outs) == [[0, -1]]
    # a batch dim over both mesh dims is read as its larger one (y, size 3), as Paddle does
    ins, outs = rule.infer_forward([spec(mesh2d, [12, 2], [[0, 1], -1])], [spec(mesh2d, [12], [-1])])
    assert dm(ins) == [[1, -1]] and dm(outs) == [[1]]


def test_replicated(mesh2d, spec):
    rule = core.get_phi_spmd_rule("replicated")
    ins, outs = rule.infer_forward([spec(mesh2d, [8, 16], [-1, 1]), spec(mesh2d, [8, 4], [0, -1], {1: "sum"})],
                                   [spec(mesh2d, [8, 3], [-1, -1]), spec(mesh2d, [2], [0])])
    assert dm(ins) == [[-1, -1], [-1, -1]] and dm(outs) == [[-1, -1], [-1]]
    assert all(partial(a) == {} for a in list(ins) + list(outs))
    ins, outs = rule.infer_backward([spec(mesh2d, [8, 16], [-1, 1])], [spec(mesh2d, [8, 3], [0, 1])])
    assert dm(ins) == [[-1, -1]] and dm(outs) == [[-1, -1]]


# ---- bad calls -----------------------------------------------------------------------------
def test_bad_calls_name_op_argument_and_dim(mesh2d, spec):
    conv2d = core.get_phi_spmd_rule("conv2d")
    with pytest.raises(ValueError, match=r"conv2d: input 'input' has rank 3, but must have rank 4"):
        conv2d.infer_forward(spec(mesh2d, [8, 16, 6], [-1] * 3), spec(mesh2d, [8, 16, 3, 3], [-1] * 4))
    conv3d = core.get_phi_spmd_rule("conv3d")
    with pytest.raises(ValueError, match=r"conv3d: input 'filter': dim 1 has size 8, but the same factor has size 16"):
        conv3d.infer_forward(spec(mesh2d, [8, 16, 6, 6, 6], [-1] * 5), spec(mesh2d, [4, 8, 3, 3, 3], [-1] * 5),
                             *CONV3D, 1, [1, 1, 1], "NCDHW")
    with pytest.raises(TypeError, match=r"conv3d.*groups"):
        conv3d.infer_forward(spec(mesh2d, [8, 16, 6, 6, 6], [-1] * 5), spec(mesh2d, [4, 16, 3, 3, 3], [-1] * 5),
                             *CONV3D, "two", [1, 1, 1], "NCDHW")
    roi = core.get_phi_spmd_rule("roi_align")
    with pytest.raises(ValueError, match=r"roi_align: input 'boxes_num': dim 0 has size 3, but the same factor has size 4"):
        roi.infer_forward(spec(mesh2d, [4, 16, 8, 8], [-1] * 4), spec(mesh2d, [10, 4], [-1, -1]), spec(mesh2d, [3], [-1]), *ROI)
    ddp = core.get_phi_spmd_rule("default_data_parallel")
    with pytest.raises(ValueError, match=r"default_data_parallel: input 'ins\[1\]' has rank 0, but needs at least 1 dims"):
        ddp.infer_forward([spec(mesh2d, [8], [0]), spec(mesh2d, [], [])], [spec(mesh2d, [8], [-1])])
    with pytest.raises(ValueError, match=r"default_data_parallel: output 'outs\[1\]' has rank 0, but the rule gives it rank 1"):
        ddp.infer_forward([spec(mesh2d, [8], [0])], [spec(mesh2d, [8], [-1]), spec(mesh2d, [], [])])
    with pytest.raises(ValueError, match=r"default_data_parallel: output 'outs\[0\]': dim 0 has size 6"):
        ddp.infer_forward([spec(mesh2d, [8], [0])], [spec(mesh2d, [6], [-1])])
    with pytest.raises(ValueError, match=r"conv2d_transpose: input 'input'.*dims_mapping has 3 entries"):
        transpose(core.get_phi_spmd_rule("conv2d_transpose"), spec(mesh2d, [8, 16, 6, 6], [-1] * 3),
                  spec(mesh2d, [16, 9, 3, 3], [-1] * 4))


# ---- the spec keys this family added (depends, '*', forward_outputs, results, absent) and
# `when:` conditions on string attributes -----------------------------------------------------
CONV_SPEC = """
- op: my_conv
  inputs: [x, w]
  outputs: [out]
  attrs: {groups: int = 1, data_format: str = NCHW}
  einsum: "n c h w, o c i j -> n o p q"
  new_dims: [o, p, q]
  replicate: [h, w, i, j]
  when:
    - if: "data_format in [NHWC, NDHWC]"
      einsum: "n h w c, o c i j -> n p q o"
    - if: "groups != 1"
      einsum: "n c h w, o e i j -> n o p q"
      replicate: [h, w, i, j, c, e, o]
"""


def test_when_compares_string_attributes(load_rules):
    pytest.importorskip("jinja2")
    from codegen.emit import render
    cc = render(load_rules(CONV_SPEC))["rules_ops.cc"]
    assert ('const EinsumRule& rule = (groups != 1) ? my_conv_rule_2() : '
            '(data_format == "NHWC" || data_format == "NDHWC") ? my_conv_rule_1() : my_conv_rule();') in cc
    assert "if (groups != 1) {" in cc and "call.replicate_letter('e');" in cc


@pytest.mark.parametrize("bad,message", [
    (CONV_SPEC.replace('"data_format in [NHWC, NDHWC]"', '"data_format in [NHWC, N HWC]"'), "expected ',' or ']' in the list, got 'HWC'"),
    (CONV_SPEC.replace('einsum: "n h w c, o c i j -> n p q o"', 'einsum: "n h w c, o c i j -> n p q z"'),
     "output letter 'z' is in no input"),
    (CONV_SPEC.replace("replicate: [h, w, i, j, c, e, o]", "replicate: [h, w, i, j, c, k]"),
     "'replicate' names 'k', which is in no input pattern"),
    (CONV_SPEC + "  depends: {out_grad: [x]}\n", "'depends' names 'out_grad', which is not an output"),
    (CONV_SPEC + "  depends: {out: [y]}\n", "'depends' names 'y', which is not an input"),
    (CONV_SPEC + "  absent: sometimes\n", "absent: 'sometimes' is not one of"),
    ("""
- op: my_generic
  inputs: ["ins[]"]
  outputs: ["outs[]"]
  einsum: "b _ -> b _"
""", "an output pattern with '_' needs 'forward_outputs: true'"),
])
def test_new_spec_keys_are_checked(load_rules, spec_error, bad, message):
    with pytest.raises(spec_error) as e:
        load_rules(bad)
    assert str(e.value).startswith("rules_yaml/ops.yaml: entry '") and message in str(e.value), str(e.value)
