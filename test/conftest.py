import pytest

from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr


def make_spec(mesh, shape, mapping, partial=None):
    """A DistTensorSpec; `mapping` entries may be lists (a dim over several mesh dims)."""
    attr = TensorDistAttr()
    attr.process_mesh = mesh
    if any(isinstance(m, list) for m in mapping):
        attr.multi_dims_mapping = [m if isinstance(m, list) else ([] if m == -1 else [m]) for m in mapping]
    else:
        attr.dims_mapping = list(mapping)
    for dim, kind in (partial or {}).items():
        attr._set_partial_dims([dim], kind)
    return DistTensorSpec(list(shape), attr)


@pytest.fixture
def mesh2d():
    return ProcessMesh([[0, 1, 2], [3, 4, 5]], dim_names=["x", "y"])


@pytest.fixture
def mesh1d():
    return ProcessMesh([0, 1, 2, 3], dim_names=["x"])


@pytest.fixture
def mesh3d():
    return ProcessMesh([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], dim_names=["x", "y", "z"])


@pytest.fixture
def spec():
    return make_spec
