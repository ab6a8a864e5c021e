import sys
import textwrap
from pathlib import Path

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


@pytest.fixture
def load_rules(tmp_path):
    """Loads YAML rule text as the generator loads rules_yaml/FILE (schema and notation checks
    included): load(text, file="ops.yaml") -> specs. Spec errors name `rules_yaml/FILE`."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from codegen.spec import load_specs

    def load(text, file="ops.yaml"):
        d = tmp_path / "rules_yaml"
        d.mkdir(exist_ok=True)
        (d / file).write_text(textwrap.dedent(text))
        return load_specs(d)
    return load


@pytest.fixture
def spec_error():
    """The generator's SpecError class."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from codegen.spec import SpecError
    return SpecError
