"""One mesh syntax for every command and the Python API: `2x2` or `dp=2,mp=2`, strict."""
from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spmdkit.cli import parse_mesh as infer_mesh
from spmdkit.distributed import DistError, as_process_mesh
from spmdkit.reshard.layout import MeshSpec, ReshardError
from spmdkit.sharding.mesh_text import MeshText, MeshTextError, format_mesh, parse_mesh_text

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,5}", fullmatch=True)


@st.composite
def meshes(draw):
    sizes = tuple(draw(st.lists(st.integers(1, 4096), min_size=1, max_size=6)))
    names = None
    if draw(st.booleans()):
        names = tuple(draw(st.lists(NAMES, min_size=len(sizes), max_size=len(sizes), unique=True)))
    return MeshText(sizes, names)


@settings(max_examples=150, deadline=None)
@given(meshes())
def test_a_printed_mesh_parses_back(mesh):
    assert parse_mesh_text(str(mesh)) == mesh
    assert parse_mesh_text(format_mesh(mesh.sizes, mesh.names)) == mesh


@pytest.mark.parametrize("text, words", [
    ("2xx2", "has 'xx'"), ("2x", "ends with 'x'"), ("x2", "starts with 'x'"), ("foo", "'foo' is not a size"),
    ("0x2", "size 0"), ("x=0", "size 0"), ("x=2,x=2", "named twice"), ("", "empty"), ("  ", "empty"),
    ("2x-2", "is not a size"), ("2.0", "is not a size"), ("dp=2,", "'' is not NAME=SIZE"),
    ("=2", "'' is not an identifier"), ("1e3", "is not a size"), ("dp=2,4", "'4' is not NAME=SIZE"),
    ("2 x 2x", "ends with 'x'"), ("dp=two", "'two' is not a size"), ("a-b=2", "not an identifier"),
])
def test_junk_is_refused_saying_what_is_wrong(text, words):
    with pytest.raises(MeshTextError) as e:
        parse_mesh_text(text)
    assert words in str(e.value) and isinstance(e.value, ValueError)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=string.digits + "xX=,_ab -.", max_size=12))
def test_any_string_parses_to_a_mesh_that_prints_back_or_raises(text):
    try:
        mesh = parse_mesh_text(text)
    except MeshTextError:
        return
    assert all(s >= 1 for s in mesh.sizes)
    assert parse_mesh_text(str(mesh)) == mesh
    assert mesh.names is None or len(set(mesh.names)) == len(mesh.names) == len(mesh.sizes)


def test_every_user_of_mesh_text_reads_both_forms_and_refuses_the_same_junk():
    assert infer_mesh("dp=2,mp=4").dim_names == ["dp", "mp"] and infer_mesh("2x4").shape == [2, 4]
    assert MeshSpec.make("2x4") == MeshSpec.make("x=2,y=4")
    pm = as_process_mesh("dp=2,mp=2")
    assert pm.dim_names == ["dp", "mp"] and pm.shape == [2, 2]
    assert as_process_mesh("2x2").dim_names == ["dp", "mp"]
    for junk in ("2xx2", "2x", "foo", "0x2", "x=0", "x=2,x=2"):
        with pytest.raises(MeshTextError):
            infer_mesh(junk)
        with pytest.raises(ReshardError):
            MeshSpec.make(junk)
        with pytest.raises(DistError):
            as_process_mesh(junk)


def test_sizes_only_meshes_name_their_axes_x_y_z_w_then_d():
    assert parse_mesh_text("2x3").axes() == [("x", 2), ("y", 3)]
    assert [n for n, _ in parse_mesh_text("1x1x1x1x1").axes()] == ["d0", "d1", "d2", "d3", "d4"]
    assert parse_mesh_text(" dp = 2 , mp = 4 ").axes() == [("dp", 2), ("mp", 4)]
