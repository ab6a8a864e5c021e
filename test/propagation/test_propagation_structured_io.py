"""The program path reads and writes shardings as structured data (axis tuples, no text): checked
against the text path it replaced. A TensorSharding given field by field reaches the engine as
its text would (`Graph.value_sharded` vs `Graph.value`), and what comes back in one call
(`export_shardings`, as TensorShardings) equals the engine's printed sharding parsed again."""
import pytest
from hypothesis import given, settings, strategies as st

from spmdkit.propagation import Graph
from spmdkit.propagation.from_ir import _propagated_shardings
from spmdkit.sharding import AxisRef, DimSharding, Mesh, TensorSharding, parse_sharding

MESH = (("a", 4), ("b", 2), ("c", 6))


@st.composite
def shardings(draw, rank):
    """A valid sharding of a rank-`rank` value on MESH: whole axes or one sub-axis of each,
    open/closed dims, priorities, replicated axes (in mesh order, as Shardy requires)."""
    pieces = []
    for name, size in MESH:
        split = draw(st.sampled_from([d for d in range(1, size + 1) if size % d == 0]))
        if split in (1, size):
            pieces.append(AxisRef(name))
        else:
            pieces.append(draw(st.sampled_from([AxisRef(name, 1, split), AxisRef(name, split, size // split)])))
    order = draw(st.permutations(pieces))
    slots = draw(st.lists(st.integers(-1, rank), min_size=len(order), max_size=len(order)))  # -1: replicated
    dims = []
    for d in range(rank):
        axes = [a for a, s in zip(order, slots) if s == d]
        closed = draw(st.booleans())
        priority = draw(st.sampled_from([None, 0, 1, 3])) if axes or not closed else None
        dims.append(DimSharding(axes, closed, priority))
    replicated = [a for a in pieces if slots[order.index(a)] == -1]
    return TensorSharding("mesh", dims, replicated)


def graph():
    g = Graph()
    g.mesh("mesh", list(MESH))
    return g


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_a_sharding_reaches_the_engine_as_its_text_would(data):
    rank = data.draw(st.integers(0, 3))
    s = data.draw(shardings(rank))
    g = graph()
    by_fields = g.value_sharded([12] * rank, s)
    by_text = g.value([12] * rank, s.to_text(prefix=False))
    assert g._g.sharding(by_fields) == g._g.sharding(by_text)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_exported_shardings_equal_the_printed_ones_parsed(data):
    n = data.draw(st.integers(1, 5))
    g = graph()
    values = [g.value_sharded([12, 12], data.draw(shardings(2))) for _ in range(n)]
    g.value([12, 12])  # on the mesh, unsharded
    g.value([12, 12], mesh=None)
    for v in values[:2]:  # a copy of a value shares its sharding: exported once
        g.constraint(v, g.sharding(v, with_priority=True))
    meshes = {"mesh": Mesh(dict(MESH))}
    exported = _propagated_shardings(g, None)
    assert len(exported) == g.num_values
    for v, got in enumerate(exported):
        if g.mesh_of(v) is None:
            assert got is None
            continue
        assert got[0] == parse_sharding(g.sharding_full(v), meshes)
        assert got[1] == any(g.dim_axes(v))


def test_equal_shardings_come_back_as_one_object():
    g = graph()
    a = g.value([4, 4], '[{"a"}, {}]')
    b = g.value([4, 4], '[{"a"}, {}]')
    c = g.value([4, 4], '[{"b"}, {}]')
    out = _propagated_shardings(g, None)
    assert out[a][0] is out[b][0] and out[a][0] != out[c][0]


def test_a_maximal_mesh_comes_back_without_dims():
    g = Graph()
    g.mesh("one", maximal=True)
    v = g.value([4, 4], "[]")
    (got, has_axes), = _propagated_shardings(g, None)
    assert got == TensorSharding("one", []) and not has_axes and g.sharding_full(v) == "<@one, []>"


@pytest.mark.parametrize("text, match", [
    ('<@nope, [{"a"}]>', "mesh 'nope' is not defined"),
    ('<@mesh, [{"zz"}]>', "axis 'zz' is not in mesh"),
    ('<@mesh, [{"a"}, {}]>', "has 2 dims, the value has rank 1"),
])
def test_bad_shardings_by_fields_are_value_errors(text, match):
    from spmdkit.sharding import parse_sharding as parse
    s = parse("#sdy.sharding" + text)
    with pytest.raises(ValueError, match=match):
        graph().value_sharded([8], s)
