"""triu / tril_triu, expand_as, gather, index_select, take_along_axis, conv2d (Paddle-style)."""
from spmdkit import core


def dm(attrs):
    return [a.dims_mapping for a in attrs]


def test_triu_gathers_the_last_two_dims(mesh2d, spec):
    ins, outs = core.get_phi_spmd_rule("triu").infer_forward(spec(mesh2d, [4, 8, 16], [0, 1, -1]), 0)
    assert dm(ins) == [[0, -1, -1]] and dm(outs) == [[0, -1, -1]]
    rule = core.get_phi_spmd_rule("tril_triu")
    ins, outs = rule.infer_forward(spec(mesh2d, [4, 8, 16], [-1, 0, 1]), 1, True)
    assert dm(outs) == [[-1, -1, -1]]
    ins, outs = rule.infer_backward(spec(mesh2d, [4, 8, 16], [-1, -1, -1]), spec(mesh2d, [4, 8, 16], [0, 1, -1]), 0, True)
    assert dm(ins) == [[0, -1, -1]] and dm(outs) == [[0, -1, -1]]


def test_expand_as_follows_y(mesh2d, spec):
    rule = core.get_phi_spmd_rule("expand_as_v2")
    ins, outs = rule.infer_forward(spec(mesh2d, [1, 16], [-1, 1]), spec(mesh2d, [8, 16], [0, -1]), [8, 16])
    assert dm(ins) == [[-1, -1], [0, -1]] and dm(outs) == [[0, -1]]
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 1], [0, -1]), spec(mesh2d, [8, 16], [1, -1]), [8, 16])
    assert dm(ins) == [[1, -1], [1, -1]] and dm(outs) == [[1, -1]]


def test_gather_axis_is_whole_and_output_takes_the_index_split(mesh2d, spec):
    rule = core.get_phi_spmd_rule("gather")
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16, 32], [-1, -1, 1]), spec(mesh2d, [4], [0]), 1)
    assert dm(ins) == [[-1, -1, 1], [0]] and dm(outs) == [[-1, 0, 1]]
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16, 32], [0, 1, -1]), spec(mesh2d, [4], [-1]), 1)
    assert dm(ins) == [[0, -1, -1], [-1]] and dm(outs) == [[0, -1, -1]]
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16, 32], [-1, -1, -1]), spec(mesh2d, [4], [-1]),
                                    spec(mesh2d, [8, 4, 32], [0, 1, -1]), 1)
    assert dm(ins) == [[0, -1, -1], [1]] and dm(outs) == [[0, 1, -1]]


def test_index_select_grad_is_partial_over_a_split_index(mesh2d, spec):
    rule = core.get_phi_spmd_rule("index_select")
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16, 32], [-1, -1, -1]), spec(mesh2d, [4], [0]),
                                    spec(mesh2d, [8, 16, 4], [-1, 0, -1]), 2)
    assert dm(ins) == [[-1, -1, -1], [0], [-1, -1, 0]]
    assert dm(outs) == [[-1, -1, -1]] and outs[0].partial_status == {0: "sum"}


def test_take_along_axis(mesh2d, spec):
    rule = core.get_phi_spmd_rule("take_along_axis")
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16, 32], [0, 1, -1]), spec(mesh2d, [8, 4, 32], [-1, -1, 1]), 1)
    assert dm(ins) == [[0, -1, 1], [0, -1, 1]] and dm(outs) == [[0, -1, 1]]
    # grad: follows out_grad; a split index axis leaves x_grad partial
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16, 32], [0, 1, -1]), spec(mesh2d, [8, 4, 32], [-1, -1, 1]),
                                    spec(mesh2d, [8, 4, 32], [-1, 1, -1]), 1)
    assert dm(ins) == [[-1, -1, -1], [-1, 1, -1], [-1, 1, -1]]
    assert dm(outs) == [[-1, -1, -1]] and outs[0].partial_status == {1: "sum"}


def test_conv2d_contracts_in_channels(mesh2d, spec):
    rule = core.get_phi_spmd_rule("conv2d")
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16, 32, 32], [0, 1, -1, -1]), spec(mesh2d, [32, 16, 3, 3], [-1, 1, -1, -1]))
    assert dm(ins) == [[0, 1, -1, -1], [-1, 1, -1, -1]]
    assert dm(outs) == [[0, -1, -1, -1]] and outs[0].partial_status == {1: "sum"}
    # spatial dims are whole (they need halos)
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16, 32, 32], [0, -1, 1, -1]), spec(mesh2d, [32, 16, 3, 3], [1, -1, -1, -1]))
    assert dm(ins) == [[0, -1, -1, -1], [1, -1, -1, -1]] and dm(outs) == [[0, 1, -1, -1]]
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16, 32, 32], [-1, -1, -1, -1]), spec(mesh2d, [32, 16, 3, 3], [-1, -1, -1, -1]),
                                    spec(mesh2d, [8, 32, 30, 30], [0, -1, 1, -1]))
    assert dm(ins) == [[0, -1, -1, -1], [-1, -1, -1, -1]] and dm(outs) == [[0, -1, -1, -1]]
