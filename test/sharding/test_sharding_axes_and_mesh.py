"""AxisRef relations (sizes, overlap, containment, merge, split) and Mesh construction."""
from hypothesis import given, settings, strategies as st

import pytest
from sharding_strategies import factor_chains

from spmdkit.sharding import AxisRef, Mesh, MeshAxis, MeshError, ShardingError

MESH = Mesh({"x": 4, "y": 2, "z": 8})


def test_seed_split_of_x4_into_two_halves():
    major, minor = AxisRef("x").split(2, MESH)
    assert (major, minor) == (AxisRef("x", 1, 2), AxisRef("x", 2, 2))
    assert str(major) == '"x":(1)2' and str(minor) == '"x":(2)2'
    assert major.merge(minor, MESH) == AxisRef("x")  # a whole axis merges back to the full ref
    assert major.size_on(MESH) == 2 and AxisRef("x").size_on(MESH) == 4


def test_relations_on_examples():
    full, a, b, c = AxisRef("z"), AxisRef("z", 1, 4), AxisRef("z", 2, 4), AxisRef("z", 4, 2)
    assert a.overlaps(b, MESH) and b.overlaps(a, MESH)          # the seed's (1)4 / (2)4 example
    assert not a.overlaps(c, MESH) and a.can_merge(c, MESH)
    assert full.contains(a, MESH) and full.contains(c, MESH) and not a.contains(full, MESH)
    assert b.contains(AxisRef("z", 2, 2), MESH) and b.contains(c, MESH) and not c.contains(b, MESH)
    assert not b.contains(a, MESH) and not AxisRef("z", 2, 2).contains(c, MESH)
    assert not a.overlaps(AxisRef("x"), MESH) and not a.can_merge(AxisRef("x", 4, 2), MESH)
    assert a.merge(c, MESH) == full
    assert AxisRef("z", 1, 2).merge(AxisRef("z", 2, 2), MESH) == AxisRef("z", 1, 4)
    with pytest.raises(ShardingError, match="not adjacent"):
        c.merge(a, MESH)
    with pytest.raises(ShardingError, match="cannot split"):
        AxisRef("y").split(2, MESH)
    with pytest.raises(ShardingError, match="cannot split"):
        AxisRef("z").split(3, MESH)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from([2, 4, 6, 8, 12, 16]), st.data())
def test_a_factor_chain_tiles_its_axis(n, data):
    """Pieces of one chain are pairwise disjoint, each contained in the axis, and merge back to it."""
    mesh = Mesh({"a": n})
    chain = data.draw(st.sampled_from(factor_chains(n)))
    pieces, pre = [], 1
    for k in chain:
        pieces.append(AxisRef("a") if k == n else AxisRef("a", pre, k))
        pre *= k
    for i, p in enumerate(pieces):
        assert AxisRef("a").contains(p, mesh)
        for q in pieces[i + 1:]:
            assert not p.overlaps(q, mesh) and not q.overlaps(p, mesh)
    merged = pieces[0]
    for p in pieces[1:]:
        merged = merged.merge(p, mesh)
    assert merged == AxisRef("a")
    if len(pieces) >= 2:
        major, minor = pieces[0], pieces[1]
        assert major.merge(minor, mesh).split(major.size, mesh) == (major, minor)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 8), st.integers(2, 8), st.integers(1, 8), st.integers(2, 8))
def test_overlap_is_symmetric_and_containment_implies_overlap(p1, k1, p2, k2):
    mesh = Mesh({"a": 64})
    a, b = AxisRef("a", p1, k1), AxisRef("a", p2, k2)
    assert a.overlaps(b, mesh) == b.overlaps(a, mesh)
    if a.contains(b, mesh):
        assert a.overlaps(b, mesh)
    assert a.overlaps(a, mesh) and a.contains(a, mesh)


def test_axis_ref_construction_errors():
    with pytest.raises(ShardingError, match="both pre_size and size"):
        AxisRef("x", 2)
    with pytest.raises(ShardingError, match="must be a string"):
        AxisRef(3)
    assert str(AxisRef("")) == '""'  # Shardy reads empty names too
    with pytest.raises(ShardingError, match="integer"):
        AxisRef("x", 1.5, 2)


def test_mesh_properties_and_device_grid():
    m = Mesh([MeshAxis("a", 2), MeshAxis("b", 3)], device_ids=[5, 4, 3, 2, 1, 0])
    assert m.axis_names == ("a", "b") and m.shape == (2, 3) and m.size == 6
    assert m.axis_size("b") == 3 and m.axis_index("b") == 1
    assert m.device_grid() == [[5, 4, 3], [2, 1, 0]]
    assert m.device_at({"a": 1, "b": 0}) == 2
    assert Mesh({"a": 2, "b": 3}) == Mesh([("a", 2), ("b", 3)], device_ids=range(6))
    assert hash(Mesh({"a": 2})) == hash(Mesh([MeshAxis("a", 2)], [0, 1]))
    assert Mesh([], [7]).device_grid() == 7 and Mesh().device_ids == (0,)
    with pytest.raises(AttributeError):
        m.foo = 1


@pytest.mark.parametrize("build, words", [
    (lambda: Mesh([MeshAxis("a", 2), MeshAxis("a", 2)]), "'a' appears twice"),
    (lambda: Mesh({"a": 0}), "positive integer size"),
    (lambda: Mesh({"a": 2}, device_ids=[0]), "2 devices, but 1"),
    (lambda: Mesh({"a": 2}, device_ids=[1, 1]), "device id 1 appears twice"),
    (lambda: Mesh({"a": 2}, device_ids=[0, -1]), "non-negative"),
    (lambda: Mesh(["a"]), "MeshAxis or a"),
    (lambda: Mesh({None: 2}), "must be a string"),
    (lambda: Mesh({"a": 2}).axis_size("q"), "no axis 'q'"),
    (lambda: Mesh({"a": 2}).device_at({"a": 2}), "outside mesh axis"),
])
def test_mesh_errors_name_the_axis_or_id(build, words):
    with pytest.raises(MeshError, match=words):
        build()
