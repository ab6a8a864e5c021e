import pytest

from spmdkit import core


def dm(attrs):
    return [a.dims_mapping for a in attrs]


@pytest.mark.parametrize("name", ["relu", "exp", "elementwise_unary", "assign", "scale", "tanh"])
def test_unary_passes_through(name, mesh2d, spec):
    ins, outs = core.get_phi_spmd_rule(name).infer_forward(spec(mesh2d, [8, 16, 48], [0, -1, 1]))
    assert dm(ins) == [[0, -1, 1]] and dm(outs) == [[0, -1, 1]]


def test_unary_drops_partial_input(mesh2d, spec):
    ins, outs = core.get_phi_spmd_rule("relu").infer_forward(spec(mesh2d, [8, 16], [0, -1], {1: "sum"}))
    assert not ins[0]._is_partial() and not outs[0]._is_partial()


def test_unary_reverse(mesh2d, spec):
    ins, outs = core.get_phi_spmd_rule("relu").infer_backward(spec(mesh2d, [12, 16], [0, -1]), spec(mesh2d, [12, 16], [1, 0]))
    assert dm(ins) == [[1, 0]] and dm(outs) == [[1, 0]]


def test_binary_broadcast(mesh2d, spec):
    ins, outs = core.get_phi_spmd_rule("add").infer_forward(spec(mesh2d, [4, 8, 16], [0, -1, -1]), spec(mesh2d, [8, 16], [-1, 1]))
    assert dm(ins) == [[0, -1, 1], [-1, 1]] and dm(outs) == [[0, -1, 1]]


def test_binary_size_one_dim_never_split(mesh2d, spec):
    ins, outs = core.get_phi_spmd_rule("multiply").infer_forward(spec(mesh2d, [4, 1], [-1, -1]), spec(mesh2d, [4, 16], [0, 1]))
    assert dm(ins) == [[0, -1], [0, 1]] and dm(outs) == [[0, 1]]


def test_binary_reverse(mesh2d, spec):
    ins, outs = core.get_phi_spmd_rule("add").infer_backward(
        spec(mesh2d, [4, 8, 16], [-1, -1, -1]), spec(mesh2d, [8, 16], [-1, -1]), spec(mesh2d, [4, 8, 16], [0, 1, -1]))
    assert dm(ins) == [[0, 1, -1], [1, -1]] and dm(outs) == [[0, 1, -1]]


def test_gelu_and_its_grad(mesh2d, spec):
    rule = core.get_phi_spmd_rule("gelu")
    ins, outs = rule.infer_forward(spec(mesh2d, [12, 16], [1, 0]), True)
    assert dm(outs) == [[1, 0]]
    # the grad follows out_grad; x is asked to match it
    ins, outs = rule.infer_backward(spec(mesh2d, [12, 16], [1, -1]), spec(mesh2d, [12, 16], [-1, 0]), False)
    assert dm(ins) == [[-1, 0], [-1, 0]] and dm(outs) == [[-1, 0]]


def test_unary_drops_a_split_that_does_not_divide(mesh2d, spec):
    # 16 rows cannot be cut evenly over mesh dim 1 (3 ranks): Paddle 3.3.1 does the same
    ins, outs = core.get_phi_spmd_rule("relu").infer_forward(spec(mesh2d, [16, 6], [1, 0]))
    assert dm(ins) == [[-1, 0]] and dm(outs) == [[-1, 0]]
