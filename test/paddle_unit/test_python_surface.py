"""The Python surface Paddle's rule tests use, checked against Paddle 3.3.1's objects: both
implementations must behave alike on each call below."""
import pytest

from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core

from .notation import Api


@pytest.fixture(scope="module")
def both():
    pytest.importorskip("paddle")
    from paddle.distributed import ProcessMesh as PMesh
    from paddle.distributed.auto_parallel.static.dist_attribute import DistTensorSpec as PSpec, TensorDistAttr as PAttr
    from paddle.framework import core as pcore
    return [Api(core, ProcessMesh, TensorDistAttr, DistTensorSpec), Api(pcore, PMesh, PAttr, PSpec)]


def test_process_mesh_queries_agree(both):
    for api in both:
        mesh = api.ProcessMesh([[0, 1, 2], [3, 4, 5]], dim_names=["x", "y"])
        assert (mesh.size, mesh.ndim, list(mesh.shape), list(mesh.process_ids)) == (6, 2, [2, 3], [0, 1, 2, 3, 4, 5])
        assert [mesh.get_dim_size("y"), mesh.get_dim_size(1), mesh.dim_size("x")] == [3, 3, 2]
        assert mesh.contains(4) and not mesh.contains(7) and not mesh.empty()
        assert [list(row) for row in mesh.mesh] == [[0, 1, 2], [3, 4, 5]]


def test_spmdkit_mesh_refuses_unknown_dims():
    mesh = ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])
    with pytest.raises(ValueError, match="no mesh dim named 'z'"):
        mesh.get_dim_size("z")
    with pytest.raises(ValueError, match="mesh dim 2 out of range"):
        mesh.dim_size(2)


def test_spec_copy_shape_setter_and_set_dims_mapping_agree(both):
    for api in both:
        mesh = api.mesh((2, 2))
        spec = api.tensor("[8,6]{0,-1}", mesh)
        copy = api.DistTensorSpec(spec)
        copy.shape = [8, 6, 4]
        copy.set_dims_mapping([-1, 1, 0])
        assert list(spec.shape) == [8, 6] and list(copy.shape) == [8, 6, 4]
        rule = api.core.get_phi_spmd_rule("relu")
        assert list(rule.infer_forward(spec)[0][0].dims_mapping) == [0, -1]
        assert list(rule.infer_forward(copy)[1][0].dims_mapping) == [-1, 1, 0]


def test_a_spec_without_a_mapping_is_read_as_replicated():
    """spmdkit fills the mapping of a spec built from an attr that never had one (Paddle's tests
    build output specs so; Paddle's generic rules read them by rank)."""
    attr = TensorDistAttr()
    attr.process_mesh = ProcessMesh([0, 1])
    assert DistTensorSpec([4, 6], attr).dims_mapping == [-1, -1]
    assert DistTensorSpec([], attr).dims_mapping == []
    assert DistTensorSpec().shape == [] and DistTensorSpec().dims_mapping == []


def test_one_element_list_for_one_tensor_agrees(both):
    for api in both:
        mesh = api.mesh((2, 2))
        out = api.core.get_phi_spmd_rule("pad").infer_forward([api.tensor("[8,16,16]{0,1,-1}", mesh)], [0, 0, 0, 1, 2, 3], 0)
        assert list(out[1][0].dims_mapping) == [0, -1, -1]
    with pytest.raises(TypeError, match="must be DistTensorSpec, got list"):
        core.get_phi_spmd_rule("pad").infer_forward([], [0, 0], 0)


def test_an_optional_input_without_a_mesh_is_absent():
    mesh = ProcessMesh([[0, 1], [2, 3]])
    api = Api(core, ProcessMesh, TensorDistAttr, DistTensorSpec)
    x, scale = api.tensor("[4,8,16]{0,-1,-1}", mesh), api.tensor("[16]{-1}", mesh)
    with_none = core.get_phi_spmd_rule("layer_norm").infer_forward(x, scale, None, 1e-5, 2)
    with_bare = core.get_phi_spmd_rule("layer_norm").infer_forward(x, scale, DistTensorSpec([0], TensorDistAttr()), 1e-5, 2)
    assert [list(a.dims_mapping) for a in with_none[0]] == [list(a.dims_mapping) for a in with_bare[0]] == [[0, -1, -1], [-1], [-1]]


def test_paddle_argument_counts_are_taken(both):
    """The trailing attributes Paddle 3.3.1's binding takes (and ignores) are taken."""
    for api in both:
        mesh = api.mesh((2, 2))
        api.core.get_phi_spmd_rule("c_embedding").infer_backward(
            api.tensor("[16,8]{1,-1}", mesh), api.tensor("[4,6]{-1,-1}", mesh), api.tensor("[4,6,8]{-1,-1,-1}", mesh), 0, -1)
        api.core.get_phi_spmd_rule("c_softmax_with_cross_entropy").infer_forward(
            api.tensor("[4,6,8]{-1,-1,1}", mesh), api.tensor("[4,6,1]{-1,-1,-1}", mesh), -1, 0, 0, 2)
    with pytest.raises(TypeError, match="takes at most 6 arguments"):
        core.get_phi_spmd_rule("c_softmax_with_cross_entropy").infer_forward(
            *[SPEC_ARGS[0], SPEC_ARGS[1]], -1, 0, 0, 2, 1, 1)


_MESH = ProcessMesh([[0, 1], [2, 3]])
SPEC_ARGS = [Api(core, ProcessMesh, TensorDistAttr, DistTensorSpec).tensor(t, _MESH)
             for t in ("[4,6,8]{-1,-1,1}", "[4,6,1]{-1,-1,-1}")]
