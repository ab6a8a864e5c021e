"""The Python data types behave like Paddle 3.3.1's."""
import pickle

import pytest

from spmdkit import ProcessMesh, TensorDistAttr, core


def test_process_mesh_from_nested_lists():
    m = ProcessMesh([[0, 1, 2], [3, 4, 5]], dim_names=["x", "y"])
    assert m.shape == [2, 3] and m.process_ids == [0, 1, 2, 3, 4, 5] and m.dim_names == ["x", "y"]
    assert m == ProcessMesh([[0, 1, 2], [3, 4, 5]], ["x", "y"])
    assert ProcessMesh([0, 1, 2, 3]).dim_names == ["d0"]


@pytest.mark.parametrize("mesh,names", [([[0, 1], [2]], None), ([[0, 1], [2, 3]], ["x"]), ([[0, 1], 2], None)])
def test_process_mesh_rejects_bad_shapes(mesh, names):
    with pytest.raises(ValueError):
        ProcessMesh(mesh, names)


def test_dist_attr_partial_api(mesh2d):
    a = TensorDistAttr()
    a.process_mesh = mesh2d
    a.dims_mapping = [0, -1]
    assert not a._is_partial() and a._partial_dims() == set()
    a._set_partial_dims([1])
    assert a._is_partial() and a._partial_dims() == {1} and a.partial_status == {1: "sum"}
    a._set_partial_dims([1], "max")
    assert a.partial_status == {1: "max"}
    a._clean_partial_dims([1])
    assert not a._is_partial()
    a._set_partial_dims([0, 1], "avg")
    a._clean_partial_status()
    assert a.partial_status == {}
    with pytest.raises(ValueError, match="reduce type"):
        a._set_partial_dims([0], "mean")


def test_multi_dims_mapping_round_trip(mesh2d):
    a = TensorDistAttr()
    a.process_mesh = mesh2d
    a.multi_dims_mapping = [[1, 0], []]
    assert a.multi_dims_mapping == [[1, 0], []]
    assert a.dims_mapping == [1, -1]  # Paddle's 1-D view: the outermost mesh dim
    a.dims_mapping = [-1, 1]
    assert a.multi_dims_mapping == [[], [1]]


def test_spec_accessors(mesh2d, spec):
    s = spec(mesh2d, [8, 16], [0, -1])
    assert s.shape == [8, 16] and s.dims_mapping == [0, -1]
    s.set_dims_mapping([-1, 1])
    s.shape = [4, 6]
    assert s.dims_mapping == [-1, 1] and s.shape == [4, 6] and s.dist_attr.dims_mapping == [-1, 1]
    assert s.process_mesh == mesh2d


def test_attr_equality_and_pickle(mesh2d):
    a = TensorDistAttr(mesh2d, [0, -1])
    a._set_partial_dims([1], "min")
    b = pickle.loads(pickle.dumps(a))
    assert a == b and b.partial_status == {1: "min"}
    b._clean_partial_status()
    assert a != b


def test_registry_lists_names_and_aliases():
    names = core.list_spmd_rules()
    for n in ["matmul", "matmul_v2", "add", "relu", "reshape", "reshape2", "layer_norm", "embedding", "lookup_table_v2"]:
        assert n in names and core.contains_spmd_rule(n)
    assert not core.contains_spmd_rule("no_such_op")
    assert core.get_phi_spmd_rule("matmul_v2").op == "matmul"
    assert core.get_phi_spmd_rule("matmul").backward_kind == "reverse"
    assert core.get_phi_spmd_rule("gelu").backward_kind == "grad"
    assert core.get_phi_spmd_rule("gelu").grad_op == "gelu_grad"


def test_attributes_by_name_and_defaults(mesh2d, spec):
    x = spec(mesh2d, [4, 6], [0, 1])
    rule = core.get_phi_spmd_rule("softmax")
    assert rule.infer_forward(x, axis=0)[1][0].dims_mapping == [-1, 1]
    assert rule.infer_forward(x)[1][0].dims_mapping == [0, -1]   # axis defaults to -1
    with pytest.raises(TypeError, match="unexpected keyword argument 'dim'"):
        rule.infer_forward(x, dim=0)
