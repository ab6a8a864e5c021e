"""Layouts, meshes, sub-axes and the adapters from other sharding descriptions; bad input is a
ReshardError (a ValueError) naming the value, dim or axis."""
import pytest

from spmdkit.reshard import (CostModel, Layout, MeshSpec, ReshardError, as_layout, as_mesh, parse_layout,
                             plan_reshard)
from spmdkit.reshard.subaxes import coarse_text, refine

MESH = MeshSpec.make("x=2,y=4,z=1")


def test_mesh_forms_agree():
    assert MeshSpec.make({"x": 2, "y": 4, "z": 1}) == MESH == MeshSpec.make([("x", 2), ("y", 4), ("z", 1)])
    assert MESH.coords(5) == {"x": 1, "y": 1, "z": 0} and MESH.num_devices == 8


@pytest.mark.parametrize("text, word", [("x=2,x=2", "named twice"), ("x=0", "size 0"), ("x2", "size is missing"),
                                        ("x=2,y", "NAME=SIZE"), ("", "empty")])
def test_bad_mesh(text, word):
    with pytest.raises(ReshardError, match=word):
        MeshSpec.make(text)


def test_parse_round_trip_and_size1_axes_dropped():
    lay = parse_layout('[{"x", "z"}, {"y"}] partial={}', MESH)
    assert lay == Layout(dims=(("x",), ("y",))) and lay.text() == '[{"x"}, {"y"}]'
    p = parse_layout('[{}, {"y"}] unreduced={"x"}', MESH)
    assert p.partial == ("x",) and p.reduce == "sum"
    assert parse_layout(p.text(), MESH) == p
    assert parse_layout('[{}, {}] partial={"x"}:max', MESH).reduce == "max"


@pytest.mark.parametrize("text, word", [
    ('[{"q"}, {}]', "'q' is not in mesh"),
    ('[{"x"}, {"x"}]', "'x' is used twice"),
    ('[{"x"}, {}] partial={"x"}:sum', "'x' is used twice"),
    ('[{}, {}] partial={"x"}:prod', "reduce type 'prod'"),
    ('[{x}, {}]', "must be quoted"),
    ('[{"y":(1)2}, {"y"}]', "used twice"),
    ('[{"y":(1)3}, {}]', "does not fit"),
    ('[{}, {}] unreduced={"x"}:max', "unreduced axes are summed"),
    ('{"x"}', "cannot read layout"),
])
def test_bad_layout_text(text, word):
    with pytest.raises(ReshardError, match=word):
        parse_layout(text, MESH)


def test_uneven_dims_refused_naming_the_dim():
    with pytest.raises(ReshardError, match=r"dim 1 of size 6 does not divide over axes \['y'\]"):
        plan_reshard(MESH, (8, 6), parse_layout('[{}, {"y"}]', MESH), parse_layout("[{}, {}]", MESH))


@pytest.mark.parametrize("kwargs, word", [({"itemsize": 0}, "itemsize"), ({"cost": "fast"}, "CostModel"),
                                          ({"sub_axes": "yes"}, "sub_axes")])
def test_bad_arguments(kwargs, word):
    a = parse_layout("[{}, {}]", MESH)
    with pytest.raises(ReshardError, match=word):
        plan_reshard(MESH, (8, 8), a, a, **kwargs)


def test_bad_shape_and_rank():
    a = parse_layout("[{}, {}]", MESH)
    with pytest.raises(ReshardError, match="shape"):
        plan_reshard(MESH, 8, a, a)
    with pytest.raises(ReshardError, match="has 2 dims but the shape"):
        plan_reshard(MESH, (8,), a, a)
    with pytest.raises(ReshardError, match="cannot read a sharding from 3"):
        plan_reshard(MESH, (8, 8), 3, a)


def test_sub_axes_in_layouts_are_planned_and_proven():
    from spmdkit.reshard.simulate import prove_plan
    src = parse_layout('[{"y":(1)2}, {"y":(2)2}]', MESH)
    tgt = parse_layout('[{"y"}, {}]', MESH)
    plan = plan_reshard(MESH, (8, 8), src, tgt, sub_axes=False)
    prove_plan(plan)
    assert plan.collective_counts()["all_to_all"] == 1 and sum(plan.collective_counts().values()) == 1


def test_refine_keeps_device_order_and_coarse_text_restores():
    src = parse_layout('[{"x", "y"}, {}]', MESH)
    fine, (lay,) = refine(MESH, [src], full=True)
    assert fine.names == ("x", "y:(1)2", "y:(2)2", "z") and fine.num_devices == MESH.num_devices
    assert lay.dims[0] == ("x", "y:(1)2", "y:(2)2")
    for dev in range(8):
        c, f = MESH.coords(dev), fine.coords(dev)
        assert c["y"] == 2 * f["y:(1)2"] + f["y:(2)2"]
    assert coarse_text(lay, MESH) == '[{"x", "y"}, {}]'
    with pytest.raises(ReshardError, match="do not nest"):
        refine(MeshSpec.make("w=12"), [parse_layout('[{"w":(1)2}, {"w":(3)2}]', "w=12")], full=False)


def test_tensor_sharding_adapter():
    sharding = pytest.importorskip("spmdkit.sharding")
    ts = sharding.parse_sharding('#sdy.sharding<@mesh, [{"x"}, {"y", ?}], unreduced_max={"z"}>')
    mesh = MeshSpec.make("x=2,y=4,z=2")
    assert as_layout(ts, mesh) == Layout.make(mesh, [("x",), ("y",)], ("z",), "max")
    inline = sharding.parse_sharding('#sdy.sharding<mesh<["x"=2, "y"=4]>, [{"y"}, {}]>')
    assert as_layout(inline, "x=2,y=4") == Layout.make("x=2,y=4", [("y",), ()])
    with pytest.raises(ReshardError, match="lives on mesh"):
        as_layout(inline, "x=2,y=2")
    mixed = sharding.parse_sharding('#sdy.sharding<@m, [{}, {}], unreduced={"x"}, unreduced_max={"z"}>')
    with pytest.raises(ReshardError, match="mixes reduce types"):
        as_layout(mixed, mesh)
    sub = sharding.parse_sharding('#sdy.sharding<@m, [{"y":(1)2}, {}]>')
    assert as_layout(sub, mesh).dims[0] == ("y:(1)2",)
    assert as_layout('#sdy.sharding<@m, [{"x"}, {}]>', mesh).dims == (("x",), ())


class Shard:
    def __init__(self, dim):
        self.dim = dim


class Replicate:
    pass


class Partial:
    def __init__(self, reduce_type="sum"):
        self.reduce_type = reduce_type


def test_placements_adapter():
    mesh = MeshSpec.make("x=2,y=4")
    assert as_layout([Shard(0), Shard(0)], mesh, rank=2).dims == (("x", "y"), ())
    assert as_layout([Partial("max"), Shard(-1)], mesh, rank=2) == Layout.make(mesh, [(), ("y",)], ("x",), "max")
    assert as_layout([Replicate(), Replicate()], mesh, rank=1).dims == ((),)
    with pytest.raises(ReshardError, match="rank"):
        as_layout([Shard(0), Replicate()], mesh)
    with pytest.raises(ReshardError, match="shards dim 3"):
        as_layout([Shard(3), Replicate()], mesh, rank=2)
    with pytest.raises(ReshardError, match="3 placements for a mesh of 2 axes"):
        as_layout([Shard(0), Replicate(), Replicate()], mesh, rank=2)


def test_mesh_adapters():
    sharding = pytest.importorskip("spmdkit.sharding")
    assert as_mesh(sharding.Mesh({"a": 2, "b": 3})) == MeshSpec.make("a=2,b=3")
    with pytest.raises(ReshardError, match="cannot read a mesh"):
        as_mesh(3.5)


def test_inter_node_axes_from_devices_per_node():
    mesh = MeshSpec.make("x=4,y=4")
    cost = CostModel.make(devices_per_node=4)
    assert cost.link(mesh, "y") == cost.intra and cost.link(mesh, "x") == cost.inter
    assert CostModel.make(devices_per_node=16).link(mesh, "x") == cost.intra
    with pytest.raises(ReshardError, match="devices_per_node"):
        CostModel.make(devices_per_node=0)


def test_plan_reshard_takes_any_sharding_form():
    sharding = pytest.importorskip("spmdkit.sharding")
    mesh = sharding.Mesh({"x": 2, "y": 4})
    src = sharding.parse_sharding('#sdy.sharding<@mesh, [{}, {}], unreduced={"y"}>')
    by_objects = plan_reshard(mesh, (8, 8), src, '[{"y"}, {}]')
    by_layouts = plan_reshard(MeshSpec.make("x=2,y=4"), (8, 8), parse_layout('[{}, {}] unreduced={"y"}', "x=2,y=4"),
                              Layout.make("x=2,y=4", [("y",), ()]))
    assert by_objects.steps == by_layouts.steps and by_objects.collective_counts()["reduce_scatter"] == 1
