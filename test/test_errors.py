"""Bad input raises a Python exception naming the op, the argument and the dim; it never crashes."""
import pytest
from hypothesis import given, settings, strategies as st

from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core


def test_unknown_op():
    with pytest.raises(KeyError, match="no_such_op"):
        core.get_phi_spmd_rule("no_such_op")


def test_missing_arguments_raise_instead_of_segfault(mesh2d, spec):
    rule = core.get_phi_spmd_rule("matmul")
    with pytest.raises(TypeError, match=r"matmul.infer_forward is missing argument 1 'y'"):
        rule.infer_forward(spec(mesh2d, [4, 4], [0, -1]))
    with pytest.raises(TypeError, match=r"matmul.infer_backward is missing argument 0 'x'"):
        rule.infer_backward()
    with pytest.raises(TypeError, match="takes at most 4 arguments"):
        rule.infer_forward(spec(mesh2d, [4, 4], [0, -1]), spec(mesh2d, [4, 4], [0, -1]), False, False, True)
    with pytest.raises(TypeError, match=r"gelu.infer_forward is missing argument 0 'x'"):
        core.get_phi_spmd_rule("gelu").infer_forward()
    with pytest.raises(TypeError, match=r"layer_norm.infer_backward: argument 4 'mean' must be DistTensorSpec or None"):
        x = spec(mesh2d, [4, 8], [0, -1])
        core.get_phi_spmd_rule("layer_norm").infer_backward(x, x, x, x, 1e-5, 1)


def test_wrong_attribute_type(mesh2d, spec):
    x = spec(mesh2d, [4, 8], [0, -1])
    with pytest.raises(TypeError, match=r"softmax.infer_forward: argument 1 'axis' must be int, got str"):
        core.get_phi_spmd_rule("softmax").infer_forward(x, "last")
    with pytest.raises(TypeError, match=r"'axis' must be list of int, but holds float"):
        core.get_phi_spmd_rule("sum").infer_forward(x, [0.5], False)
    # (a one-element list is read as its tensor, as Paddle's binding does; two are refused)
    with pytest.raises(TypeError, match=r"argument 0 'x' must be DistTensorSpec, got list"):
        core.get_phi_spmd_rule("relu").infer_forward([x, x])
    with pytest.raises(ValueError, match="out of range for int32"):
        core.get_phi_spmd_rule("softmax").infer_forward(x, 2**40)


def test_dims_mapping_length_must_match_rank(mesh2d, spec):
    bad = spec(mesh2d, [4, 8], [0, -1])
    bad.shape = [4, 8, 2]
    with pytest.raises(ValueError, match=r"matmul: input 'x': dims_mapping has 2 entries but the shape has rank 3"):
        core.get_phi_spmd_rule("matmul").infer_forward(bad, spec(mesh2d, [2, 4], [-1, -1]))


def test_mesh_dim_out_of_range(mesh2d, spec):
    with pytest.raises(ValueError, match=r"add: input 'y': dim 1 is mapped to mesh dim 2, but the mesh has 2 dims"):
        core.get_phi_spmd_rule("add").infer_forward(spec(mesh2d, [4, 8], [0, -1]), spec(mesh2d, [4, 8], [-1, 2]))


def test_mesh_dim_used_twice(mesh2d, spec):
    with pytest.raises(ValueError, match=r"relu: input 'x': mesh dim 1 is used twice \(again at tensor dim 2\)"):
        core.get_phi_spmd_rule("relu").infer_forward(spec(mesh2d, [4, 8, 6], [1, -1, 1]))


def test_axis_out_of_range(mesh2d, spec):
    x = spec(mesh2d, [4, 8], [0, -1])
    with pytest.raises(ValueError, match=r"softmax: attribute 'axis' = 2 is out of range for input 'x' of rank 2"):
        core.get_phi_spmd_rule("softmax").infer_forward(x, 2)
    with pytest.raises(ValueError, match=r"sum: attribute 'axis' = -3"):
        core.get_phi_spmd_rule("sum").infer_forward(x, [-3], False)
    with pytest.raises(ValueError, match=r"layer_norm: attribute 'begin_norm_axis' = 3"):
        core.get_phi_spmd_rule("layer_norm").infer_forward(x, None, None, 1e-5, 3)
    with pytest.raises(ValueError, match="unsqueeze: attribute 'axis' = 5"):
        core.get_phi_spmd_rule("unsqueeze").infer_forward(x, [5])


def test_shape_conflict(mesh2d, spec):
    with pytest.raises(ValueError, match=r"add: input 'y': dim 0 has size 5"):
        core.get_phi_spmd_rule("add").infer_forward(spec(mesh2d, [4, 8], [0, -1]), spec(mesh2d, [5, 8], [-1, -1]))


def test_rank_too_small_for_the_pattern(mesh2d, spec):
    with pytest.raises(ValueError, match=r"embedding: input 'weight' has rank 1, but must have rank 2"):
        core.get_phi_spmd_rule("embedding").infer_forward(spec(mesh2d, [4], [0]), spec(mesh2d, [8], [-1]), -1, False)


def test_missing_mesh(spec):
    a = TensorDistAttr()
    a.dims_mapping = [-1, -1]
    with pytest.raises(ValueError, match="relu: input 'x' has no process_mesh"):
        core.get_phi_spmd_rule("relu").infer_forward(DistTensorSpec([4, 4], a))


def test_tensors_on_different_meshes(mesh2d, mesh1d, spec):
    with pytest.raises(ValueError, match="add: input 'y' is on a different process mesh"):
        core.get_phi_spmd_rule("add").infer_forward(spec(mesh2d, [4, 8], [0, -1]), spec(mesh1d, [4, 8], [-1, -1]))


_values = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False), st.text(max_size=3),
                    st.lists(st.integers(-4, 4), max_size=4))


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(core.list_spmd_rules())), backward=st.booleans(),
       n_tensors=st.integers(0, 4), extra=st.lists(_values, max_size=5), rank=st.integers(0, 3),
       mapping=st.lists(st.integers(-1, 2), min_size=3, max_size=3))
def test_random_calls_raise_cleanly_or_succeed(name, backward, n_tensors, extra, rank, mapping):
    mesh = ProcessMesh([[0, 1], [2, 3]])
    tensors = []
    for _ in range(n_tensors):
        a = TensorDistAttr()
        a.process_mesh = mesh
        a.dims_mapping = mapping[:rank]
        tensors.append(DistTensorSpec([4] * rank, a))
    rule = core.get_phi_spmd_rule(name)
    fn = rule.infer_backward if backward else rule.infer_forward
    try:
        ins, outs = fn(*tensors, *extra)
    except (ValueError, TypeError, NotImplementedError) as e:
        assert name in str(e) or rule.op in str(e)
    else:
        assert isinstance(ins, list) and isinstance(outs, list)
