"""Local shapes and device slices: the seed's examples, and equivalences proven by slicing numpy."""
import numpy as np
from hypothesis import given, settings, strategies as st

import pytest
from sharding_strategies import meshes, valid_shardings

from spmdkit.sharding import Mesh, ShardingError, TensorSharding, parse_mesh, parse_sharding
from spmdkit.sharding.layout import device_slices


def test_seed_local_shapes():
    m = parse_mesh('<["x"=2, "y"=4, "z"=2]>')
    assert parse_sharding('<@mesh_xy, [{"x"}, {"z", "y"}]>').local_shape((4, 8), m) == (2, 1)
    assert parse_sharding('<@m, [{"x"}, {?}], replicated={"y"}>').local_shape((4, 8), m) == (2, 8)
    m8 = parse_mesh('<["x"=2, "y"=8, "z"=2]>')
    assert parse_sharding('<@m, [{"x"}, {"y":(2)2}]>').local_shape((4, 8), {"m": m8}) == (2, 4)
    # non-divisible: padded up, as the seed's 7x3x8 on x=8,y=2,z=3 example
    m3 = parse_mesh('<["x"=8, "y"=2, "z"=3]>')
    assert parse_sharding('<@m, [{"x"}, {"y"}, {"z"}]>').local_shape((7, 3, 8), m3) == (1, 2, 3)
    with pytest.raises(ShardingError, match="rank"):
        parse_sharding('<@m, [{"x"}]>').local_shape((4, 8), m)


def _pieces(sharding, mesh, shape):
    data = np.arange(int(np.prod(shape))).reshape(shape)
    return {d: data[s] for d, s in device_slices(sharding, shape, mesh).items()}


def test_seed_full_mesh_with_sub_axes_equals_the_xy_mesh():
    xy = _pieces(parse_sharding('<@mesh_xy, [{"x"}, {"y"}]>'), parse_mesh('<["x"=4, "y"=2]>'), (4, 4))
    full = _pieces(parse_sharding('<@mesh_full, [{"devices":(1)4}, {"devices":(4)2}]>'),
                   parse_mesh('<["devices"=8]>'), (4, 4))
    assert xy.keys() == full.keys() == set(range(8))
    for d in xy:
        np.testing.assert_array_equal(xy[d], full[d])


def test_seed_reshape_example_keeps_every_device_data():
    """[{"x"}] on 8 elements reshaped to 2x4 is [{"x":(1)2}, {"x":(2)2}]: same elements per device."""
    mesh = parse_mesh('<["x"=4]>')
    flat = _pieces(parse_sharding('<@mesh_x, [{"x"}]>'), mesh, (8,))
    data = np.arange(8).reshape(2, 4)
    two_d = {d: data[s] for d, s in
             device_slices(parse_sharding('<@mesh_x, [{"x":(1)2}, {"x":(2)2}]>'), (2, 4), mesh).items()}
    for d in flat:
        np.testing.assert_array_equal(np.sort(flat[d]), np.sort(two_d[d].ravel()))


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_device_slices_tile_the_tensor_and_match_local_shape(data):
    """Devices holding one copy (differing only on replicated axes) tile the tensor exactly once."""
    mesh = data.draw(meshes(arbitrary_ids=True))
    s = data.draw(valid_shardings(mesh, allow_unreduced=False))
    shape = tuple(data.draw(st.lists(st.integers(1, 9), min_size=s.rank, max_size=s.rank)))
    slices = device_slices(s, shape, mesh)
    assert set(slices) == set(mesh.device_ids)
    copies = mesh.size // int(np.prod([d.shard_count(mesh) for d in s.dims] or [1]))
    count = np.zeros(shape, dtype=int)
    for sl in slices.values():
        count[sl] += 1
        assert all(stop - start <= n for (start, stop), n in
                   zip(((x.start, x.stop) for x in sl), s.local_shape(shape, mesh)))
    assert (count == copies).all()


def test_maximal_mesh_holds_everything_on_its_device():
    s = TensorSharding(Mesh([], [9]), [])
    assert device_slices(s, (3, 5)) == {9: (slice(0, 3), slice(0, 5))}
    assert s.local_shape((3, 5)) == (3, 5)


def _refine(sharding, mesh):
    """The same sharding on a mesh whose axes are cut at every sub-axis bound, using full axes only
    (the seed: a sub-axis is an axis of a reshaped mesh). Returns (sharding, mesh) on full axes."""
    from spmdkit.sharding import AxisRef, DimSharding, MeshAxis
    cuts = {a.name: {1, a.size} for a in mesh.axes}
    for ref in sharding.axes_used():
        cuts[ref.name] |= set(ref.interval(mesh))
    # an axis of size n splits as [m, k, n/(m*k)]: the piece with the smallest pre-size is the most major
    axes = []
    for a in mesh.axes:
        chain = sorted(cuts[a.name])
        for lo, hi in zip(chain, chain[1:]):
            axes.append(MeshAxis(f"{a.name}_{lo}", hi // lo))
        if a.size == 1:  # keep it, so the mesh keeps its axes (an axis-less one with ids is maximal)
            axes.append(MeshAxis(f"{a.name}_1", 1))

    def refs(ref):
        lo, hi = ref.interval(mesh)
        chain = sorted(cuts[ref.name])
        return [AxisRef(f"{ref.name}_{c}") for c in chain if lo <= c < hi]

    fine_mesh = Mesh(axes, mesh.device_ids if mesh.has_explicit_device_ids else None)
    dims = [DimSharding([r for a in d.axes for r in refs(a)]) for d in sharding.dims]
    return TensorSharding(fine_mesh, dims), fine_mesh


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_sub_axis_slices_equal_full_axis_slices_on_the_reshaped_mesh(data):
    mesh = data.draw(meshes(arbitrary_ids=True))
    s = data.draw(valid_shardings(mesh, allow_unreduced=False, allow_open=False))
    shape = tuple(data.draw(st.lists(st.integers(1, 9), min_size=s.rank, max_size=s.rank)))
    fine, fine_mesh = _refine(s, mesh)
    assert device_slices(s, shape, mesh) == device_slices(fine, shape, fine_mesh)


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_full_axis_slices_match_the_simulator_of_spmdkit_verify(data):
    """spmdkit.verify's Paddle-semantics simulator gives each rank the same block."""
    from itertools import product

    from spmdkit.sharding import to_dist_attr
    from spmdkit.verify.placement import Placement, local_slices
    mesh = data.draw(meshes(min_axes=1, arbitrary_ids=True))
    s = data.draw(valid_shardings(mesh, full_axes_only=True, allow_open=False, allow_replicated=False))
    shape = tuple(data.draw(st.lists(st.integers(1, 9), min_size=s.rank, max_size=s.rank)))
    placement = Placement.make(to_dist_attr(s).multi_dims_mapping)
    ours = device_slices(s, shape, mesh)
    for coords in product(*(range(n) for n in mesh.shape)):
        device = mesh.device_at(dict(zip(mesh.axis_names, coords)))
        assert ours[device] == local_slices(shape, placement, mesh.shape, coords)
