"""Exact conversions to and from spmdkit's TensorDistAttr, and the lossy cases refused."""
from hypothesis import HealthCheck, given, settings, strategies as st

import pytest
from sharding_strategies import meshes, valid_shardings

from spmdkit import ProcessMesh, TensorDistAttr
from spmdkit.sharding import (AxisRef, DimSharding, Mesh, ShardingConversionError, ShardingVerifyError,
                              TensorSharding, from_dist_attr, from_process_mesh, parse_mesh, parse_sharding,
                              to_dist_attr, to_process_mesh)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MESH = parse_mesh('<["x"=2, "y"=4, "z"=2]>')


def test_brief_example():
    s = parse_sharding('<@m, [{"x"}, {"z", "y"}], unreduced={}>')
    attr = to_dist_attr(s, MESH)
    assert attr.multi_dims_mapping == [[0], [2, 1]] and attr.partial_status == {}
    assert list(attr.process_mesh.shape) == [2, 4, 2] and list(attr.process_mesh.dim_names) == ["x", "y", "z"]
    assert from_dist_attr(attr, "m") == s


def test_unreduced_becomes_partial_with_its_reduce_type():
    s = TensorSharding("m", [DimSharding(["y"])], unreduced=["x", "z"], reduce_types={"z": "max"})
    attr = to_dist_attr(s, {"m": MESH})
    assert attr.partial_status == {0: "sum", 2: "max"} and attr.dims_mapping == [1]
    assert from_dist_attr(attr, "m") == s


@SETTINGS
@given(st.data())
def test_sharding_to_dist_attr_and_back_is_identity(data):
    mesh = data.draw(meshes(min_axes=1, arbitrary_ids=True))
    ref = data.draw(st.sampled_from(["m", None]))
    s = data.draw(valid_shardings(mesh, mesh_ref=ref, full_axes_only=True, allow_open=False,
                                  allow_replicated=False))
    attr = to_dist_attr(s, {"m": mesh})
    assert from_dist_attr(attr, ref) == s
    assert from_process_mesh(attr.process_mesh) == mesh


@SETTINGS
@given(st.data())
def test_dist_attr_to_sharding_and_back_is_identity(data):
    shape = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    names = [f"d{i}" for i in range(len(shape))]
    n = 1
    for k in shape:
        n *= k
    ids = data.draw(st.permutations(list(range(n))))
    mesh = Mesh(dict(zip(names, shape)), ids)
    rank = data.draw(st.integers(0, 3))
    mapping = [[] for _ in range(rank)]
    partial = {}
    for j in data.draw(st.permutations(list(range(len(shape))))):
        slot = data.draw(st.integers(-2, rank - 1))
        if slot >= 0:
            mapping[slot].append(j)
        elif slot == -1:
            partial[j] = data.draw(st.sampled_from(["sum", "max", "min", "avg", "prod", "any", "all"]))
    attr = TensorDistAttr()
    attr.process_mesh = to_process_mesh(mesh)
    attr.multi_dims_mapping = mapping
    for j, kind in partial.items():
        attr._set_partial_dims([j], kind)
    back = to_dist_attr(from_dist_attr(attr), None)
    assert back.multi_dims_mapping == attr.multi_dims_mapping
    assert back.partial_status == attr.partial_status
    assert list(back.process_mesh.process_ids) == list(attr.process_mesh.process_ids)
    assert list(back.process_mesh.shape) == list(attr.process_mesh.shape)


@pytest.mark.parametrize("text, words, dim, axis", [
    ('<@m, [{"y":(1)2}, {}]>', "sub-axis", 0, '"y":(1)2'),
    ('<@m, [{}, {}], replicated={"y":(2)2}>', "sub-axis", "replicated", '"y":(2)2'),
    ('<@m, [{}, {}], unreduced={"y":(1)2}>', "sub-axis", "unreduced", '"y":(1)2'),
    ('<@m, [{"x"}, {"y", ?}]>', "open dim", 1, None),
    ('<@m, [{"x"}p0, {}]>', "priority p0", 0, None),
    ('<@m, [{"x"}, {}], replicated={"y"}>', "explicitly replicated", "replicated", '"y"'),
])
def test_what_dims_mapping_cannot_say_is_refused(text, words, dim, axis):
    with pytest.raises(ShardingConversionError, match=words) as info:
        to_dist_attr(parse_sharding(text), MESH, name="w")
    assert (info.value.tensor, info.value.dim, info.value.axis) == ("w", dim, axis)
    assert str(info.value).startswith("tensor 'w'")


def test_inexact_mode_drops_open_priority_and_replicated_but_never_sub_axes():
    s = parse_sharding('<@m, [{"x", ?}p2, {?}], replicated={"y"}>')
    attr = to_dist_attr(s, MESH, exact=False)
    assert attr.multi_dims_mapping == [[0], []]
    assert from_dist_attr(attr, "m") == parse_sharding('<@m, [{"x"}, {}]>')
    with pytest.raises(ShardingConversionError, match="sub-axis"):
        to_dist_attr(parse_sharding('<@m, [{"y":(1)2}]>'), MESH, exact=False)


def test_invalid_shardings_are_not_converted():
    with pytest.raises(ShardingVerifyError, match="used twice"):
        to_dist_attr(parse_sharding('<@m, [{"x"}, {"x"}]>'), MESH)


def test_empty_and_maximal_meshes():
    maximal = TensorSharding(Mesh([], [3]), [])  # Shardy: `[]` on a maximal mesh, whatever the rank
    attr = to_dist_attr(maximal, rank=2)
    assert list(attr.process_mesh.process_ids) == [3] and attr.dims_mapping == [-1, -1]
    assert from_dist_attr(attr) == maximal
    assert to_dist_attr(maximal).dims_mapping == []
    with pytest.raises(ShardingVerifyError, match="maximal"):
        to_dist_attr(TensorSharding(Mesh([], [3]), [DimSharding()]))
    with pytest.raises(ShardingConversionError, match="empty mesh"):
        to_dist_attr(TensorSharding(Mesh(), [DimSharding()]))
    assert from_dist_attr(to_dist_attr(TensorSharding(Mesh(), []), exact=False)).mesh == Mesh([], [0])


def test_process_mesh_round_trip_keeps_device_order():
    pm = ProcessMesh([[2, 4, 5], [0, 1, 3]], dim_names=["dp", "mp"])
    mesh = from_process_mesh(pm)
    assert mesh == Mesh({"dp": 2, "mp": 3}, [2, 4, 5, 0, 1, 3])
    back = to_process_mesh(mesh)
    assert list(back.process_ids) == [2, 4, 5, 0, 1, 3] and list(back.dim_names) == ["dp", "mp"]
    # Paddle's pipeline-stage meshes use ids outside 0..n-1
    assert from_process_mesh(ProcessMesh([4, 5, 6, 7], dim_names=["x"])).device_ids == (4, 5, 6, 7)


def test_axis_order_within_a_dim_is_major_to_minor():
    attr = to_dist_attr(parse_sharding('<@m, [{"z", "x"}]>'), MESH)
    assert attr.multi_dims_mapping == [[2, 0]]
    assert from_dist_attr(attr, "m").dims[0].axes == (AxisRef("z"), AxisRef("x"))


@pytest.mark.parametrize("mapping, partial, error, dim", [
    ([0, 0], [], ShardingVerifyError, 1),
    ([0, -1], [0], ShardingVerifyError, "unreduced"),
    ([5, -1], [], ShardingConversionError, 0),
])
def test_dist_attrs_no_sharding_can_mean_are_refused(mapping, partial, error, dim):
    attr = TensorDistAttr()
    attr.process_mesh = ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])
    attr.dims_mapping = mapping
    if partial:
        attr._set_partial_dims(partial, "sum")
    with pytest.raises(error) as info:
        from_dist_attr(attr, name="grad")
    assert info.value.tensor == "grad" and info.value.dim == dim
