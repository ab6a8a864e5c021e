"""The object model: immutability, hashing, helpers and constructor errors."""
import pytest

from spmdkit.sharding import (AxisRef, DimSharding, Mesh, ShardingError, TensorSharding, parse_mesh,
                              parse_sharding)

MESH = parse_mesh('<["x"=2, "y"=4, "z"=2]>')


def test_replicated_is_a_factory_on_the_class_and_a_field_on_instances():
    s = TensorSharding.replicated("m", 3)
    assert s == TensorSharding("m", [DimSharding()] * 3) and s.replicated == ()
    assert str(TensorSharding.replicated(MESH, 1, closed=False)) == \
        '#sdy.sharding<mesh<["x"=2, "y"=4, "z"=2]>, [{?}]>'
    assert TensorSharding.fully_replicated("m", 0) == TensorSharding("m", [])
    assert parse_sharding('<@m, [{}], replicated={"x"}>').replicated == (AxisRef("x"),)


def test_shardings_are_immutable_hashable_values():
    a = parse_sharding('<@m, [{"x"}, {"y", ?}p1], replicated={"z"}>')
    b = parse_sharding('#sdy.sharding<@m, [{"x"}, {"y", ?}p1], replicated={"z"}>')
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != a.replace(replicated=()) and a != parse_sharding('<@n, [{"x"}, {"y", ?}p1], replicated={"z"}>')
    for obj, field in ((a, "dims"), (a.dims[0], "axes"), (MESH, "foo")):
        with pytest.raises(AttributeError):
            setattr(obj, field, ())
    with pytest.raises(Exception):
        AxisRef("x").name = "y"


def test_helpers():
    s = parse_sharding('<@m, [{"x"}, {"z", ?}], replicated={"y":(1)2}, unreduced={"y":(2)2}>')
    assert s.rank == 2 and s.mesh_name == "m" and not s.is_closed
    assert s.axes_used() == (AxisRef("x"), AxisRef("z"), AxisRef("y", 1, 2), AxisRef("y", 2, 2))
    assert not s.is_fully_replicated
    assert parse_sharding('<@m, [{?}, {}], replicated={"x"}>').is_fully_replicated
    assert not parse_sharding('<@m, [{}], unreduced={"x"}>').is_fully_replicated
    assert s.resolve_mesh({"m": MESH}) is MESH and s.resolve_mesh(MESH) is MESH
    dropped = parse_sharding('<@m, [], unreduced={"x"}, unreduced_max={"y"}>').replace(unreduced=["y"])
    assert dropped.reduce_type("y") == "max"
    with pytest.raises(ShardingError, match="not unreduced"):
        s.reduce_type("x")
    assert DimSharding(["x", "z"]).shard_count(MESH) == 4 and DimSharding().shard_count(MESH) == 1


@pytest.mark.parametrize("build, words", [
    (lambda: TensorSharding(3, []), "mesh name or a Mesh"),
    (lambda: TensorSharding("", []), "mesh name or a Mesh"),
    (lambda: TensorSharding("m", ["x"]), "DimSharding objects"),
    (lambda: TensorSharding("m", [], unreduced=["x"], reduce_types={"x": "mean"}), "unknown reduce type 'mean'"),
    (lambda: TensorSharding("m", [], unreduced=["x"], reduce_types={"y": "max"}), "not in unreduced"),
    (lambda: TensorSharding("m", [], unreduced=["x"], reduce_types=["x"]), r"\(axis, type\) pairs"),
    (lambda: DimSharding(["x"], is_closed=1), "bool"),
    (lambda: DimSharding(["x"], priority="p1"), "integer or None"),
    (lambda: DimSharding([3]), "AxisRef or an axis name"),
    (lambda: parse_sharding("<@m, []>").resolve_mesh({"n": MESH}), "unknown mesh @m"),
])
def test_constructor_errors_are_sharding_errors(build, words):
    with pytest.raises(ShardingError, match=words):
        build()


def test_huge_meshes_are_refused_where_devices_would_be_listed_not_hung_on():
    from spmdkit.sharding import MeshError, device_slices, to_dist_attr
    huge = parse_mesh('<["a"=1000000, "b"=1000000]>')
    assert huge.size == 10 ** 12 and huge.device_at({"a": 999999, "b": 1}) == 999999 * 10 ** 6 + 1
    s = parse_sharding('<@m, [{"a"}]>')
    assert s.local_shape((10 ** 6,), huge) == (1,)
    with pytest.raises(MeshError, match="too many"):
        to_dist_attr(s, huge)
    with pytest.raises(MeshError, match="too many"):
        device_slices(s, (8,), huge)
    with pytest.raises(MeshError, match="too many"):
        huge.device_ids
    from spmdkit.sharding import equivalent
    with pytest.raises(MeshError, match="too many"):
        equivalent(s, s, (8,), {"m": huge})
    assert str(huge) == '<["a"=1000000, "b"=1000000]>' and huge.declaration("h").startswith("sdy.mesh @h")


def test_bad_shapes_and_mesh_tables_are_named():
    s = parse_sharding('<@m, [{"x"}]>')
    with pytest.raises(ShardingError, match="dim 0"):
        s.local_shape((2.5,), MESH)
    with pytest.raises(ShardingError, match="not a Mesh"):
        s.resolve_mesh({"m": '<["x"=2]>'})


def test_numpy_integers_are_integers_and_bools_floats_are_not():
    import numpy as np
    from spmdkit.sharding import MeshAxis, MeshError, Shard, ShardingVerifyError, verify
    mesh = Mesh([MeshAxis("x", np.int64(2))], device_ids=np.array([1, 0]))
    assert mesh == Mesh({"x": 2}, [1, 0]) and type(mesh.shape[0]) is int
    assert AxisRef("x", np.int32(1), np.int64(2)) == AxisRef("x", 1, 2)
    assert Shard(np.int64(1)) == Shard(1)
    s = parse_sharding('<@m, [{"x"}, {}]>')
    assert s.local_shape(np.array([4, 3]), mesh) == (2, 3)
    verify(s, mesh, np.array([4, 3]))
    verify(s, mesh, np.int64(2))
    with pytest.raises(MeshError):
        MeshAxis("x", True)
    with pytest.raises(MeshError):
        Mesh({"x": 2.0})
    with pytest.raises(ShardingVerifyError, match="bad size"):
        verify(s, mesh, (4, 3.0))
    with pytest.raises(TypeError):
        verify(s, mesh, "4x3")
    with pytest.raises(ShardingError):
        DimSharding(["x"], priority=1.0)


def test_copy_deepcopy_and_pickle_keep_the_value():
    import copy
    import pickle
    s = parse_sharding('<mesh<["x"=2, "y"=2], device_ids=[3, 2, 1, 0]>, [{"x", ?}p1], unreduced_max={"y"}>')
    for clone in (copy.copy(s), copy.deepcopy(s), pickle.loads(pickle.dumps(s))):
        assert clone == s and hash(clone) == hash(s) and clone.reduce_type("y") == "max"
    assert copy.deepcopy(MESH) == MESH and pickle.loads(pickle.dumps(s.dims[0])) == s.dims[0]
