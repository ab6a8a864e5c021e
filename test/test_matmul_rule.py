"""matmul: Paddle-style cases. Comments give the einsum trace (letters and their mesh dims)."""
import pytest

from spmdkit import core


@pytest.fixture
def rule():
    return core.get_phi_spmd_rule("matmul")


def dm(attrs):
    return [a.dims_mapping for a in attrs]


def test_contracted_k_split_gives_partial(rule, mesh2d, spec):
    # mk[1,0], kn[0,-1] -> m=1, k=0 -> out mn[1,-1], partial on mesh dim 0
    ins, outs = rule.infer_forward(spec(mesh2d, [64, 32], [1, 0]), spec(mesh2d, [32, 48], [0, -1]), False, False)
    assert dm(ins) == [[1, 0], [0, -1]]
    assert outs[0].dims_mapping == [1, -1] and outs[0]._partial_dims() == {0}
    assert outs[0].partial_status == {0: "sum"}


def test_replicated_k_is_not_partial(rule, mesh2d, spec):
    ins, outs = rule.infer_forward(spec(mesh2d, [64, 32], [0, -1]), spec(mesh2d, [32, 48], [-1, 1]), False, False)
    assert dm(ins) == [[0, -1], [-1, 1]] and outs[0].dims_mapping == [0, 1] and not outs[0]._is_partial()


def test_k_from_y_fills_x(rule, mesh2d, spec):
    ins, outs = rule.infer_forward(spec(mesh2d, [64, 48], [-1, -1]), spec(mesh2d, [48, 48], [1, -1]), False, False)
    assert dm(ins) == [[-1, 1], [1, -1]] and outs[0].dims_mapping == [-1, -1] and outs[0]._partial_dims() == {1}


def test_trans_x_trans_y(rule, mesh2d, spec):
    # x is km (trans_x), y is nk (trans_y): x[k=0, m=1], y[n=-1, k=0]
    ins, outs = rule.infer_forward(spec(mesh2d, [32, 64], [0, 1]), spec(mesh2d, [48, 32], [-1, 0]), True, True)
    assert dm(ins) == [[0, 1], [-1, 0]]
    assert outs[0].dims_mapping == [1, -1] and outs[0]._partial_dims() == {0}


def test_batched_broadcast(rule, mesh2d, spec):
    # x: b m k = [0,-1,-1], y: k n; out b m n
    ins, outs = rule.infer_forward(spec(mesh2d, [4, 64, 32], [0, -1, -1]), spec(mesh2d, [32, 48], [-1, 1]), False, False)
    assert dm(ins) == [[0, -1, -1], [-1, 1]] and outs[0].dims_mapping == [0, -1, 1]
    # size-1 batch dim of x broadcasts against y's: never split
    ins, outs = rule.infer_forward(spec(mesh2d, [1, 8, 64, 32], [-1, 0, -1, -1]),
                                   spec(mesh2d, [6, 1, 32, 48], [1, -1, -1, -1]), False, False)
    assert dm(ins) == [[-1, 0, -1, -1], [1, -1, -1, -1]] and outs[0].dims_mapping == [1, 0, -1, -1]


def test_one_dim_operands(rule, mesh2d, spec):
    ins, outs = rule.infer_forward(spec(mesh2d, [32], [0]), spec(mesh2d, [32], [-1]), False, False)
    assert dm(ins) == [[0], [0]] and outs[0].dims_mapping == [] and outs[0]._partial_dims() == {0}
    ins, outs = rule.infer_forward(spec(mesh2d, [32], [-1]), spec(mesh2d, [6, 32, 48], [1, -1, 0]), False, False)
    assert dm(ins) == [[-1], [1, -1, 0]] and outs[0].dims_mapping == [1, 0]
    ins, outs = rule.infer_forward(spec(mesh2d, [6, 64, 32], [1, 0, -1]), spec(mesh2d, [32], [-1]), False, False)
    assert outs[0].dims_mapping == [1, 0]


def test_same_mesh_dim_on_m_and_n_keeps_first(rule, mesh2d, spec):
    ins, outs = rule.infer_forward(spec(mesh2d, [64, 32], [0, -1]), spec(mesh2d, [32, 48], [-1, 0]), False, False)
    assert dm(ins) == [[0, -1], [-1, -1]] and outs[0].dims_mapping == [0, -1]


def test_reverse_infers_inputs_from_output_only(rule, mesh2d, spec):
    x, y = spec(mesh2d, [48, 36], [0, 1]), spec(mesh2d, [36, 48], [1, 0])   # ignored going in reverse
    ins, outs = rule.infer_backward(x, y, spec(mesh2d, [48, 48], [1, 0]), False, False)
    assert dm(ins) == [[1, -1], [-1, 0]] and outs[0].dims_mapping == [1, 0]
    ins, outs = rule.infer_backward(spec(mesh2d, [2, 48, 32], [-1, -1, -1]), spec(mesh2d, [32, 48], [-1, -1]),
                                    spec(mesh2d, [2, 48, 48], [0, 1, -1]), False, False)
    assert dm(ins) == [[0, 1, -1], [-1, -1]]


def test_co_sharded_input_dim(rule, mesh2d, spec):
    ins, outs = rule.infer_forward(spec(mesh2d, [12, 32], [[0, 1], -1]), spec(mesh2d, [32, 48], [-1, -1]), False, False)
    assert ins[0].multi_dims_mapping == [[0, 1], []] and outs[0].multi_dims_mapping == [[0, 1], []]
