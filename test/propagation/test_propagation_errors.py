"""Bad input raises a typed Python exception that names the value, op, mesh, axis or dim."""
import pytest

from spmdkit import _core
from spmdkit.propagation import FactorTableError, Graph, ShardingSyntaxError


def g2():
    g = Graph()
    g.mesh("mesh", a=2, b=4)
    return g


@pytest.mark.parametrize("text, match", [
    ('[{"c"}, {}]', "axis 'c' is not in mesh 'mesh'"),
    ('[{"a"}, {"a"}]', 'axis "a" is used twice'),
    ('[{"b":(1)2}, {"b"}]', 'axis "b" is used twice'),
    ('[{"b":(3)2}, {}]', "does not divide axis 'b'"),
    ('[{"a"}]', "has 1 dims, the value has rank 2"),
    ('<@other, [{"a"}, {}]>', "mesh 'other' is not defined"),
])
def test_bad_annotations(text, match):
    g = g2()
    with pytest.raises(ValueError, match=match):
        g.value([8, 8], text, name="x")
        g.propagate()


@pytest.mark.parametrize("text", ['[{"a"', '[{"a"} {}]', '[{"a"}, {}] trailing', '[{"a" ?}, {}]', "[{p1}, {}]"])
def test_malformed_sharding_text(text):
    with pytest.raises(ShardingSyntaxError, match="sharding"):
        g2().value([8, 8], text)


def test_factor_table_errors_name_the_problem():
    g = g2()
    x, y = g.value([8, 4]), g.value([5, 6])
    with pytest.raises(FactorTableError, match="factor 'k' has sizes 4 and 5"):
        g.op("matmul", "ik,kj->ij", [x, y], [[8, 6]], reduction="k")
    with pytest.raises(FactorTableError, match="2 tensors, but 3 shapes"):
        g.op("tanh", "ij->ij", [x, y], [[8, 4]])
    with pytest.raises(FactorTableError, match="missing '->'"):
        g.op("tanh", "ij", [x], [[8, 4]])
    with pytest.raises(FactorTableError, match="compound factor 'i' must be given"):
        g.op("transpose", "(ij)k->(ji)k", [x], [[8, 4]])
    with pytest.raises(FactorTableError, match="kind 'sum'"):
        from spmdkit.propagation import parse_factor_table
        parse_factor_table("ij->i", [[8, 4]], [[8]], kinds={"j": "sum"})


def test_engine_rejects_inconsistent_graphs():
    pg = _core.PropagationGraph()
    pg.add_mesh("m", ["a"], [2])
    t = pg.add_table([[[0], [1]]], [[[0], [1]]], [8, 4], ["pass_through", "pass_through"], [False, False])
    v = pg.add_value("x", [8, 5], -1, [], [])
    w = pg.add_value("y", [8, 4], -1, [], [])
    pg.add_op("bad", t, [v], [w], True, 3, 0, 0)
    with pytest.raises(ValueError, match="op 0 'bad': dim 1 of value 0 'x' has size 5, its factors multiply to 4"):
        pg.propagate()
    pg2 = _core.PropagationGraph()
    t2 = pg2.add_table([[[0]]], [[[0]]], [8], ["pass_through"], [False])
    a = pg2.add_value("a", [8], -1, [], [])
    pg2.add_op("dangling", t2, [a], [7], True, 3, 0, 0)
    with pytest.raises(ValueError, match="tensor 1 names no value"):
        pg2.propagate()
    with pytest.raises(ValueError, match="factor kind 'weird'"):
        pg2.add_table([[[0]]], [[[0]]], [8], ["weird"], [False])
    with pytest.raises(ValueError, match="allowed direction must be 0..3"):
        pg2.add_op("x", t2, [a], [a], True, 7, 0, 0)
    with pytest.raises(ValueError, match="no value with id 99"):
        pg2.sharding(99)
    with pytest.raises(ValueError, match="no op with id 5"):
        pg2.op_projection(5)


def test_group_errors():
    g = g2()
    x, y = g.value([8, 8]), g.value([4, 8])
    g.group([x, y])
    with pytest.raises(ValueError, match="sharding group 0: .* have different shapes"):
        g.propagate()


def test_values_on_two_meshes_do_not_propagate_through_one_op():
    # Shardy skips an op whose tensors lie on different meshes; so do we, without error.
    g = Graph()
    g.mesh("m1", a=2)
    g.mesh("m2", b=2)
    x = g.value([8], '[{"a"}]', mesh="m1")
    y = g.value([8], '[{"b", ?}]', mesh="m2")
    z = g.value([8], name="z")
    g.op("add", "i,i->i", [x, y], [z])
    w = g.op("tanh", "i->i", [x], [[8]])
    g.propagate()
    assert g.sharding(z) == "[{?}]" and g.mesh_of(z) is None
    assert g.sharding(w) == '[{"a", ?}]' and g.mesh_of(w) == "m1"


def test_manual_computation_errors():
    g = g2()
    x = g.value([6, 8])
    with pytest.raises(ValueError, match="dim 0 of size 6 does not divide by its manual axes"):
        g.manual_computation([x], ['[{"b"}, {?}]'], ['[{"b"}, {?}]'], ["b"], lambda g, a: a[0])
    y = g.value([8, 8])
    with pytest.raises(ValueError, match="manual axis 'b' follows a free axis"):
        g.manual_computation([y], ['[{"a", "b"}, {?}]'], ['[{?}, {?}]'], ["b"], lambda g, a: a[0])


def test_bad_direction_and_mesh():
    g = g2()
    x = g.value([8])
    with pytest.raises(ValueError, match="allowed direction 'sideways'"):
        g.barrier(x, "sideways")
    with pytest.raises(ValueError, match="mesh 'mesh' is defined twice"):
        g.mesh("mesh", a=2)
    with pytest.raises(ValueError, match="axis names repeat"):
        g.mesh("m3", [("a", 2), ("a", 2)])


def test_too_many_axes_on_one_dim_is_a_value_error():
    g = Graph()
    g.mesh("m", [(f"x{i}", 1) for i in range(17)])
    with pytest.raises(ValueError, match="at most 16 axes"):
        g.value([4], "[{" + ", ".join(f'"x{i}"' for i in range(17)) + "}]")


from hypothesis import given, settings, strategies as st  # noqa: E402

_PIECES = st.sampled_from(['[', ']', '{', '}', ',', '?', '"a"', '"b"', 'a', 'zz', ':(1)2', ':(2)2', ':(3)5', 'p1', 'p',
                           '<@mesh', '<@nope', '>', 'replicated={', '"', ' ', '=', '@'])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=14).map("".join))
def test_any_sharding_text_parses_or_raises_a_value_error(text):
    g = g2()
    try:  # rejected at parse time, or (an axis used twice, a bad sub-axis) when the graph is checked
        v = g.value([8, 8], text)
        g.propagate()
    except ValueError:
        return
    assert g.sharding(v).startswith("[")
