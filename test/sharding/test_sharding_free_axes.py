"""free_axes: what a sharding leaves for propagation to use."""
from math import prod

from hypothesis import HealthCheck, given, settings, strategies as st

from sharding_strategies import meshes, valid_shardings

from spmdkit.sharding import AxisRef, Mesh, canonicalize, free_axes, parse_sharding, verify

MESH = Mesh({"x": 2, "y": 8, "z": 2})


def test_examples():
    # the seed: "y" explicitly replicated cannot shard the open dim, "z" implicitly replicated can
    assert free_axes(parse_sharding('<@m, [{"x"}, {?}], replicated={"y"}>'), MESH) == (AxisRef("z"),)
    # "y":(2)2 used: the major "y":(1)2 and the minor "y":(4)2 are free
    assert free_axes(parse_sharding('<@m, [{"x"}, {"y":(2)2}]>'), MESH) == \
        (AxisRef("y", 1, 2), AxisRef("y", 4, 2), AxisRef("z"))
    assert free_axes(parse_sharding('<@m, [{}, {}], unreduced={"x", "y", "z"}>'), MESH) == ()
    assert free_axes(parse_sharding('<@m, []>'), MESH) == (AxisRef("x"), AxisRef("y"), AxisRef("z"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_free_and_used_axes_tile_every_axis(data):
    mesh = data.draw(meshes())
    s = data.draw(valid_shardings(mesh))
    free = free_axes(s, mesh)
    for axis in mesh.axes:
        pieces = [a for a in s.axes_used() + free if a.name == axis.name]
        assert prod(a.size_on(mesh) for a in pieces) == axis.size
    # marking every free axis replicated still verifies: nothing overlaps what is used
    closed = canonicalize(s.replace(replicated=tuple(s.replicated) + free), mesh)
    verify(closed, mesh)
    assert free_axes(closed, mesh) == ()
