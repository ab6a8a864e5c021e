"""Two shardings on different meshes of the same devices that lay a tensor out identically."""
from hypothesis import HealthCheck, given, settings, strategies as st

from sharding_strategies import meshes, valid_shardings

from spmdkit.sharding import (Mesh, canonicalize, equivalent, parse_mesh_decl, parse_sharding,
                              reduction_groups)

MESHES = dict([parse_mesh_decl('@mesh_0 = {<["a"=4, "b"=2]>, device_ids=[0, 1, 2, 3, 4, 5, 6, 7]}'),
               parse_mesh_decl('@mesh_1 = {<["x"=2, "y"=2, "z"=2]>, device_ids=[0, 1, 2, 3, 4, 5, 6, 7]}'),
               parse_mesh_decl('@mesh_full = <["devices"=8]>'),
               parse_mesh_decl('@mesh_rev = <["a"=4, "b"=2], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>')])


def same(a, b, shape=(8, 8)):
    return equivalent(parse_sharding(a), parse_sharding(b), shape, MESHES)


def test_seed_multiple_meshes_examples():
    assert same('<@mesh_0, [{"b"}, {}]>', '<@mesh_1, [{"z"}, {}]>')
    assert same('<@mesh_0, [{"a"}, {}]>', '<@mesh_1, [{"x", "y"}, {}]>')
    assert same('<@mesh_0, [{"a":(1)2}, {"b"}]>', '<@mesh_1, [{"x"}, {"z"}]>')
    assert same('<@mesh_full, [{"devices":(1)4}, {"devices":(4)2}]>', '<@mesh_0, [{"a"}, {"b"}]>')
    assert not same('<@mesh_0, [{"b"}, {}]>', '<@mesh_1, [{"x"}, {}]>')
    assert not same('<@mesh_0, [{"a"}, {}]>', '<@mesh_1, [{"y", "x"}, {}]>')  # minor-major swapped
    assert not same('<@mesh_0, [{"a"}, {"b"}]>', '<@mesh_rev, [{"a"}, {"b"}]>')  # other device order


def test_unreduced_groups_count_too():
    assert same('<@mesh_0, [{}, {}], unreduced={"b"}>', '<@mesh_1, [{}, {}], unreduced={"z"}>')
    assert not same('<@mesh_0, [{}, {}], unreduced={"b"}>', '<@mesh_1, [{}, {}], unreduced={"x"}>')
    assert not same('<@mesh_0, [{}, {}], unreduced={"b"}>', '<@mesh_1, [{}, {}], unreduced_max={"z"}>')
    groups = reduction_groups(parse_sharding('<@mesh_0, [{}], unreduced={"a":(2)2}>'), MESHES)
    # a=4 is [2, 2]; its minor half pairs devices that differ by 1 along a, i.e. by 2 in ids (id = 2a + b)
    assert groups == {"sum": frozenset(frozenset({d, d + 2}) for d in (0, 1, 4, 5))}
    major = reduction_groups(parse_sharding('<@mesh_0, [{}], unreduced={"a":(1)2}>'), MESHES)
    assert major == {"sum": frozenset(frozenset({d, d + 4}) for d in (0, 1, 2, 3))}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_sharding_is_equivalent_to_itself_and_on_a_renamed_mesh(data):
    mesh = data.draw(meshes(arbitrary_ids=True))
    s = data.draw(valid_shardings(mesh, allow_open=False))
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=s.rank, max_size=s.rank)))
    assert equivalent(s, canonicalize(s, mesh), shape, {"m": mesh})
    ids = mesh.device_ids if mesh.has_explicit_device_ids else None  # keeps <[]> empty, not maximal
    renamed = Mesh([(a.name + "_r", a.size) for a in mesh.axes], ids)
    text = str(s)  # the inline mesh and every axis reference get the new names
    for a in mesh.axes:
        text = text.replace(f'"{a.name}"', f'"{a.name}_r"')
    other = parse_sharding(text)
    assert other.mesh == renamed and equivalent(s, other, shape)
