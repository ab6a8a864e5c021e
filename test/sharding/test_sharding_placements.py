"""Placements (Shard/Replicate/Partial per mesh axis): round trips, Paddle as an oracle, refusals."""
from hypothesis import HealthCheck, given, settings, strategies as st

import pytest
from sharding_strategies import meshes, valid_shardings

from spmdkit.sharding import (Partial, Replicate, Shard, ShardingConversionError, TensorSharding, from_placements,
                              parse_mesh, parse_sharding, to_dist_attr, to_placements)

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MESH = parse_mesh('<["x"=2, "y"=4, "z"=2]>')


def test_examples_and_the_co_shard_order():
    s = parse_sharding('<@m, [{"x"}, {"z", "y"}], unreduced_max={}>')
    p = to_placements(s, MESH)
    # "z" is the major axis of dim 1 although it comes after "y" in the mesh
    assert p == [Shard(0), Shard(1, shard_order=1), Shard(1, shard_order=0)]
    assert from_placements(p, "m", 2, meshes={"m": MESH}) == s
    # without orders a co-sharded dim is split in mesh order (DTensor's convention)
    assert from_placements([Shard(0), Shard(0), Replicate()], MESH, 1).dims[0].axes == \
        parse_sharding('<@m, [{"x", "y"}]>').dims[0].axes
    partial = to_placements(parse_sharding('<@m, [{}], unreduced={"x"}, unreduced_min={"z"}>'), MESH)
    assert partial == [Partial(), Replicate(), Partial("min")]
    assert repr(partial) == "[Partial(), Replicate(), Partial('min')]"


@SETTINGS
@given(st.data())
def test_sharding_to_placements_and_back_is_identity(data):
    mesh = data.draw(meshes(arbitrary_ids=True))
    ref = data.draw(st.sampled_from(["m", None]))
    s = data.draw(valid_shardings(mesh, mesh_ref=ref, full_axes_only=True, allow_open=False,
                                  allow_replicated=False))
    p = to_placements(s, {"m": mesh})
    assert len(p) == len(mesh.axes)
    assert from_placements(p, ref if ref else mesh, s.rank, meshes={"m": mesh}) == s


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_paddle_reads_our_placements_as_our_dist_attr_says(data):
    """Paddle's own placements -> dims_mapping conversion agrees with ours, co-shard order included."""
    pt = pytest.importorskip("paddle.distributed.auto_parallel.placement_type")
    from spmdkit.sharding.paddle_placements import from_paddle_placements, to_paddle_placements
    mesh = data.draw(meshes(min_axes=1))
    s = data.draw(valid_shardings(mesh, full_axes_only=True, allow_open=False, allow_replicated=False))
    ours = to_placements(s)
    theirs = to_paddle_placements(ours)
    dims_mapping, partial = pt.placemetns_to_dist_status(theirs, s.rank)
    attr = to_dist_attr(s)
    assert dims_mapping == attr.multi_dims_mapping
    assert {k: v.name for k, v in partial.items()} == \
        {k: "kRed" + v.capitalize() for k, v in attr.partial_status.items()}
    assert from_placements(from_paddle_placements(theirs), mesh, s.rank) == s


def test_paddle_default_orders_fall_back_to_mesh_order():
    dist = pytest.importorskip("paddle.distributed")
    from spmdkit.sharding.paddle_placements import from_paddle_placements
    ours = from_paddle_placements([dist.Shard(0), dist.Replicate(), dist.Shard(0)])
    assert ours == [Shard(0, 0), Replicate(), Shard(0, 1)]
    assert str(from_placements(ours, MESH, 1)) == str(TensorSharding(MESH, [parse_sharding('<@m, [{"x", "z"}]>').dims[0]]))


@pytest.mark.parametrize("text, words, dim", [
    ('<@m, [{"y":(1)2}, {}]>', "sub-axis", 0),
    ('<@m, [{}, {}], unreduced={"y":(2)2}>', "sub-axis", "unreduced"),
    ('<@m, [{"x", ?}, {}]>', "open dim", 0),
    ('<@m, [{}, {"x"}p1]>', "priority", 1),
    ('<@m, [{"x"}, {}], replicated={"z"}>', "explicitly replicated", "replicated"),
])
def test_what_placements_cannot_say_is_refused(text, words, dim):
    with pytest.raises(ShardingConversionError, match=words) as info:
        to_placements(parse_sharding(text), MESH, name="w")
    assert info.value.tensor == "w" and info.value.dim == dim


@pytest.mark.parametrize("placements, rank, words", [
    ([Shard(0), Replicate()], 1, "2 placements for a mesh with 3 axes"),
    ([Shard(2), Replicate(), Replicate()], 2, "outside a tensor of rank 2"),
    ([Shard(0, 0), Shard(0), Replicate()], 1, "on every Shard"),
    ([Shard(0, 1), Shard(0, 1), Replicate()], 1, "same shard_order"),
    (["S0", Replicate(), Replicate()], 1, "not Shard, Replicate or Partial"),
])
def test_bad_placements_are_refused_with_the_axis_named(placements, rank, words):
    with pytest.raises(ShardingConversionError, match=words) as info:
        from_placements(placements, MESH, rank, name="act")
    assert info.value.tensor == "act"


def test_placement_constructors_check_their_arguments():
    with pytest.raises(ShardingConversionError, match="reduce type"):
        Partial("mean")
    with pytest.raises(ShardingConversionError, match="non-negative"):
        Shard(-1)
    with pytest.raises(ShardingConversionError, match="unknown mesh"):
        from_placements([Replicate()], "nowhere", 1)
