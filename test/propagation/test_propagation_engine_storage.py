"""The engine's compact storage and batch hand-off keep every value exact: a dim holds any
number of axes up to the limit (a few in place, more on the heap), and a bad batch entry raises a
typed error and adds nothing."""
import pytest
from hypothesis import given, settings, strategies as st

from spmdkit import _core
from spmdkit.propagation import Graph

_AXES = [f"x{i}" for i in range(16)]


def _mesh16():
    g = Graph()
    g.mesh("m", [(a, 1) for a in _AXES])  # size-1 axes: any number of them fits any dim
    return g


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_AXES), unique=True, max_size=16), st.lists(st.sampled_from(_AXES), unique=True, max_size=16))
def test_any_number_of_axes_crosses_a_chain_of_ops_unchanged(dim0, dim1):
    g = _mesh16()
    dim1 = [a for a in dim1 if a not in dim0]
    text = "[" + ", ".join("{" + ", ".join(f'"{a}"' for a in d) + "}" for d in (dim0, dim1)) + "]"
    x = g.value([4, 4], text, name="x")
    y = g.op("tanh", "ij->ij", [x], [[4, 4]])
    z = g.op("transpose", "ij->ji", [y], [[4, 4]])
    w = g.op("exp", "ij->ij", [z], [[4, 4]])
    g.propagate()
    want = [[(a, 1, 1) for a in d] for d in (dim0, dim1)]
    assert g.dim_axes(x) == want and g.dim_axes(y) == want
    assert g.dim_axes(z) == want[::-1] and g.dim_axes(w) == want[::-1]
    assert g.provenance(w)["origins"] == ["x" if d else None for d in (dim1, dim0)]


def test_replicated_axes_past_the_in_place_ones_are_kept():
    g = _mesh16()
    x = g.value([4], '<@m, [{"x0"}], replicated={' + ", ".join(f'"{a}"' for a in _AXES[1:8]) + "}>", name="x")
    y = g.op("tanh", "i->i", [x], [[4]])
    g.propagate()
    assert g.sharding_full(x).endswith("replicated={" + ", ".join(f'"{a}"' for a in _AXES[1:8]) + "}>")
    assert g.dim_axes(y) == [[("x0", 1, 1)]]


def test_unnamed_values_are_v_and_their_id_in_python_and_in_engine_errors():
    g = Graph()
    g.mesh("m", a=2)
    x = g.value([8])
    (y,) = g.rule_op("tanh", g.add_table(([[[0]]], [[[0]]], [8], ["pass_through"], [False])), [x], [[8]], None)
    assert (g.value_name(x), g.value_name(y)) == ("v0", "v1")
    assert g.explain(y).startswith("v1: ")
    pg = _core.PropagationGraph()
    t = pg.add_table([[[0]]], [[[0]]], [4], ["pass_through"], [False])
    pg.add_values(["", "named"], [[8], [8]], [-1, -1])
    pg.add_ops(["tanh"], [t], [[0]], [[1]], [7])
    with pytest.raises(ValueError, match="op 0 'tanh': dim 0 of value 0 'v0' has size 8, its factors multiply to 4"):
        pg.propagate()


@pytest.mark.parametrize("call, error, match", [
    (lambda pg: pg.add_values(["a", "b"], [[8], [8.0]], [-1, -1]), TypeError, "add_values shape: entry 0 is not an int"),
    (lambda pg: pg.add_values(["a", 5], [[8], [8]], [-1, -1]), TypeError, "add_values names: entry 1 is not a str"),
    (lambda pg: pg.add_values(["a"], [[8], [8]], [-1, -1]), ValueError, "differ in length"),
    (lambda pg: pg.add_values(["a"], 8, [-1]), TypeError, "add_values shapes must be a list"),
    (lambda pg: pg.add_values(["a"], [[2 ** 70]], [-1]), ValueError, "does not fit in 64 bits"),
    (lambda pg: pg.add_ops(["f", "g"], [0, 0], [[0], [None]], [[0], [0]], [7, 7]), TypeError,
     "add_ops operands: entry 0 is not an int"),
    (lambda pg: pg.add_ops(["f"], [0], [[2 ** 40]], [[0]], [7]), ValueError, "add_ops operands: entry 0 is out of range"),
])
def test_a_bad_batch_entry_is_a_typed_error_and_adds_nothing(call, error, match):
    pg = _core.PropagationGraph()
    pg.add_values(["x"], [[8]], [-1])
    with pytest.raises(error, match=match):
        call(pg)
    assert (pg.num_values(), pg.num_ops()) == (1, 0)


def test_a_group_joins_replicated_lists_past_the_in_place_ones():
    g = Graph()
    g.mesh("m", [(f"y{i}", 2) for i in range(8)])
    rep = lambda n, m: "replicated={" + ", ".join(f'"y{i}"' for i in range(n, m)) + "}"  # noqa: E731
    x = g.value([4], f'<@m, [{{"y0"}}], {rep(1, 4)}>', name="x")
    y = g.value([4], f'<@m, [{{?}}], {rep(4, 7)}>', name="y")
    g.group([x, y])
    g.propagate()
    for v in (x, y):
        assert g.dim_axes(v) == [[("y0", 1, 2)]]
        assert g.sharding_full(v).endswith(rep(1, 7) + ">")
