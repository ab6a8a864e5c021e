"""The fine mesh (spmdkit/partition/fine_mesh.py): a program whose shardings use sub-axes is
partitioned on its mesh cut at every sub-axis bound, where each sub-axis is a whole axis.

Proofs here (one process, no devices): for random meshes (explicit, permuted device ids too) and
random valid shardings with sub-axis chains, the sharding's Layout on the fine mesh places on
every device exactly the slices the sharding places there on the user's mesh (device_slices of
both), and to_sharding gives the sharding back; bounds that do not nest are a PartitionError; a
ProgramMesh that was not refined says so with a PartitionError naming the value. Running such a
program (GQA attention, 2x4 mesh, equal to one device, fewer bytes than XLA) is in
test_partition_slices_bytes.py."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spmdkit.partition.errors import PartitionError
from spmdkit.partition.fine_mesh import fine_mesh
from spmdkit.partition.layouts import ProgramMesh, layout_of_sharding, to_sharding
from spmdkit.sharding import AxisRef, DimSharding, Mesh, MeshAxis, TensorSharding
from spmdkit.sharding.layout import device_slices

sys.path.insert(0, str(Path(__file__).parents[1] / "sharding"))
from sharding_strategies import meshes, valid_shardings  # noqa: E402


def _cuts(sharding, mesh) -> dict:
    cuts: dict = {}
    for ref in sharding.axes_used():
        if ref.is_sub_axis:
            cuts.setdefault(ref.name, set()).update(ref.interval(mesh))
    return cuts


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_a_layout_on_the_fine_mesh_places_what_the_sharding_places(data):
    mesh = data.draw(meshes(min_axes=1))
    s = data.draw(valid_shardings(mesh, allow_open=False, allow_replicated=False, reduce_types=["sum"]))
    shape = tuple(data.draw(st.lists(st.sampled_from([1, 2, 4, 6, 8, 12, 24]), min_size=s.rank, max_size=s.rank)))
    pm = ProgramMesh("m", mesh, _cuts(s, mesh))
    layout = layout_of_sharding(s.replace(mesh="m"), s.rank, pm, "x")
    fine = TensorSharding(pm.mesh, [DimSharding(axes) for axes in layout.dims])
    assert device_slices(fine, shape, pm.mesh) == device_slices(s.replace(unreduced=()), shape, mesh)
    back = to_sharding(layout, pm)
    assert [d.axes for d in back.dims] == [d.axes for d in s.dims]
    assert back.unreduced == s.unreduced and back.mesh == "m"


def test_a_sub_axis_is_one_fine_axis_and_a_whole_axis_the_run_of_its_pieces():
    mesh = Mesh([MeshAxis("dp", 2), MeshAxis("mp", 8)], device_ids=[3, 1, 0, 2, 7, 6, 5, 4, 8, 9, 10, 11, 12, 13, 14, 15])
    s = TensorSharding("m", [DimSharding([AxisRef("mp", 2, 2)]), DimSharding(["dp", AxisRef("mp", 4, 2)])],
                       unreduced=[AxisRef("mp", 1, 2)])
    pm = ProgramMesh("m", mesh, _cuts(s, mesh))
    assert [(a.name, a.size) for a in pm.mesh.axes] == [("dp", 2), ("mp(1)2", 2), ("mp(2)2", 2), ("mp(4)2", 2)]
    assert list(pm.mesh.device_ids) == list(mesh.device_ids)
    layout = layout_of_sharding(s, 2, pm, "x")
    assert layout.dims == (("mp(2)2",), ("dp", "mp(4)2")) and layout.partial == ("mp(1)2",)
    assert str(to_sharding(layout, pm)) == str(s)
    whole = layout_of_sharding(TensorSharding("m", [DimSharding(["mp"]), DimSharding([])]), 2, pm, "y")
    assert whole.dims == (("mp(1)2", "mp(2)2", "mp(4)2"), ())  # a whole axis: its pieces, major first


def test_sub_axes_that_do_not_nest_are_refused():
    with pytest.raises(PartitionError, match="do not nest"):
        fine_mesh(Mesh([MeshAxis("x", 6)]), {"x": {2, 3}})


def test_without_refining_a_sub_axis_is_a_partition_error_naming_the_value():
    mesh = Mesh([MeshAxis("x", 4)])
    s = TensorSharding("m", [DimSharding([AxisRef("x", 1, 2)])])
    with pytest.raises(PartitionError, match="sub-axis") as info:
        layout_of_sharding(s, 1, ProgramMesh("m", mesh), "%w")
    assert info.value.value == "%w"
