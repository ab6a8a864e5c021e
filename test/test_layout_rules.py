"""softmax, transpose, layer_norm, embedding."""
import pytest

from spmdkit import core


def dm(attrs):
    return [a.dims_mapping for a in attrs]


def test_softmax_axis_is_gathered(mesh2d, spec):
    ins, outs = core.get_phi_spmd_rule("softmax").infer_forward(spec(mesh2d, [8, 16, 32], [0, -1, 1]), -1)
    assert dm(ins) == [[0, -1, -1]] and dm(outs) == [[0, -1, -1]]
    ins, outs = core.get_phi_spmd_rule("log_softmax").infer_forward(spec(mesh2d, [8, 16, 32], [0, 1, -1]), 1)
    assert dm(outs) == [[0, -1, -1]]
    ins, outs = core.get_phi_spmd_rule("softmax").infer_backward(spec(mesh2d, [8, 16, 32], [-1, -1, -1]),
                                                                 spec(mesh2d, [8, 16, 32], [0, 1, -1]), 1)
    assert dm(ins) == [[0, -1, -1]] and dm(outs) == [[0, -1, -1]]


def test_transpose(mesh2d, spec):
    rule = core.get_phi_spmd_rule("transpose")
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 12, 32], [0, 1, -1]), [2, 0, 1])
    assert dm(outs) == [[-1, 0, 1]]
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 12, 32], [0, 1, -1]), [-1, 0, 1])
    assert dm(outs) == [[-1, 0, 1]]
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 12, 48], [-1, -1, -1]), spec(mesh2d, [48, 8, 12], [1, -1, 0]), [2, 0, 1])
    assert dm(ins) == [[-1, 0, 1]]
    with pytest.raises(ValueError, match="perm"):
        rule.infer_forward(spec(mesh2d, [8, 16, 32], [0, 1, -1]), [0, 0, 1])


def test_layer_norm(mesh2d, spec):
    rule = core.get_phi_spmd_rule("layer_norm")
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16, 32], [0, 1, -1]), spec(mesh2d, [32], [-1]),
                                   spec(mesh2d, [32], [-1]), 1e-5, 2)
    assert dm(ins) == [[0, 1, -1], [-1], [-1]] and dm(outs) == [[0, 1, -1], [0, 1], [0, 1]]
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16, 32], [0, 1, -1]), spec(mesh2d, [512], [-1]),
                                   spec(mesh2d, [512], [-1]), 1e-5, 1)
    assert dm(ins) == [[0, -1, -1], [-1], [-1]] and dm(outs) == [[0, -1, -1], [0], [0]]
    # scale and bias are optional
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16, 32], [1, -1, 0]), None, None, 1e-5, 2)
    assert dm(outs) == [[1, -1, -1], [1, -1], [1, -1]]


def test_embedding_row_split_table_gives_partial(mesh2d, spec):
    rule = core.get_phi_spmd_rule("embedding")
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16], [0, -1]), spec(mesh2d, [1024, 64], [1, -1]), -1, False)
    assert dm(ins) == [[0, -1], [1, -1]] and dm(outs) == [[0, -1, -1]] and outs[0].partial_status == {1: "sum"}
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16], [0, -1]), spec(mesh2d, [1024, 64], [-1, 1]), -1, False)
    assert dm(outs) == [[0, -1, 1]] and not outs[0]._is_partial()
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16], [-1, -1]), spec(mesh2d, [1024, 64], [-1, -1]),
                                    spec(mesh2d, [8, 16, 64], [0, -1, 1]), -1, False)
    assert dm(ins) == [[0, -1], [-1, 1]]
