"""The verifier: one failing example per invariant (the error names tensor, dim and axis), and
agreement with Shardy's own verifier on random, mostly broken, shardings."""
from hypothesis import HealthCheck, given, settings, strategies as st

import pytest
from sharding_shardy_oracle import shardy_verify
from sharding_strategies import meshes, valid_shardings

from spmdkit.sharding import (AxisRef, DimSharding, Mesh, ShardingVerifyError, TensorSharding, canonicalize,
                              is_valid, parse_sharding, verify)

MESH = Mesh({"x": 2, "y": 8, "z": 2})
MESHES = {"m": MESH}


def fails(text, shape=(4, 8), name="w"):
    with pytest.raises(ShardingVerifyError) as info:
        verify(parse_sharding(text), MESHES, shape, name=name)
    return info.value


@pytest.mark.parametrize("text, shape, dim, axis, words", [
    # every axis name exists in the mesh
    ('<@m, [{"q"}, {}]>', (4, 8), 0, '"q"', "not in mesh"),
    ('<@m, [{}, {}], replicated={"q"}>', (4, 8), "replicated", '"q"', "not in mesh"),
    ('<@m, [{}, {}], unreduced={"q"}>', (4, 8), "unreduced", '"q"', "not in mesh"),
    # an axis is used once across dims, replicated and unreduced
    ('<@m, [{"x"}, {"x"}]>', (4, 8), 1, '"x"', "used twice"),
    ('<@m, [{"x", "x"}, {}]>', (4, 8), 0, '"x"', "used twice"),
    ('<@m, [{"x"}, {}], replicated={"x"}>', (4, 8), "replicated", '"x"', "used twice"),
    ('<@m, [{}, {}], replicated={"x"}, unreduced={"x"}>', (4, 8), "unreduced", '"x"', "used twice"),
    # sub-axes: size > 1, pre-size >= 1, pre*size divides the axis, not the whole axis
    ('<@m, [{"y":(1)1}, {}]>', (4, 8), 0, '"y":(1)1', "greater than 1"),
    ('<@m, [{"y":(0)2}, {}]>', (4, 8), 0, '"y":(0)2', "at least 1"),
    ('<@m, [{"y":(3)2}, {}]>', (4, 8), 0, '"y":(3)2', "does not divide"),
    ('<@m, [{"y":(2)8}, {}]>', (4, 8), 0, '"y":(2)8', "does not divide"),
    ('<@m, [{"y":(1)8}, {}]>', (4, 8), 0, '"y":(1)8', "full axis"),
    # sub-axes do not overlap each other nor the full axis
    ('<@m, [{"y":(1)4}, {"y":(2)4}]>', (4, 8), 1, '"y":(2)4', "overlaps"),
    ('<@m, [{"y"}, {"y":(2)2}]>', (4, 8), 1, '"y":(2)2', "overlaps"),
    ('<@m, [{"y":(2)2}, {}], replicated={"y"}>', (4, 8), "replicated", '"y"', "overlaps"),
    # sub-axes are maximal: consecutive ones in a dim or in replicated are merged
    ('<@m, [{"y":(1)2, "y":(2)4}, {}]>', (4, 8), 0, '"y":(2)4', 'write them as "y"'),
    ('<@m, [{"y":(2)2, "y":(4)2}, {}]>', (4, 8), 0, '"y":(4)2', 'write them as "y":(2)4'),
    ('<@m, [{}, {}], replicated={"y":(1)2, "y":(2)2}>', (4, 8), "replicated", '"y":(2)2', "consecutive"),
    ('<@m, [{}, {}], unreduced={"y":(1)4, "y":(4)2}>', (4, 8), "unreduced", '"y":(4)2', "consecutive"),
    # replicated and unreduced axes are sorted in mesh order, sub-axes by pre-size
    ('<@m, [{}, {}], replicated={"z", "x"}>', (4, 8), "replicated", '"x"', "mesh order"),
    ('<@m, [{}, {}], replicated={"y":(4)2, "y":(1)2}>', (4, 8), "replicated", '"y":(1)2', "pre-size"),
    ('<@m, [{}, {}], unreduced={"y", "x"}>', (4, 8), "unreduced", '"x"', "mesh order"),
    # sub-axes of one axis come from one factorization (stricter than Shardy, see verifier.py)
    ('<@m, [{"y":(1)2}, {"y":(4)2}], replicated={"y":(2)4}>', (4, 8), "replicated", '"y":(2)4', "overlaps"),
    # priorities: not on an empty closed dim
    ('<@m, [{"x"}, {}p1]>', (4, 8), 1, None, "priority"),
    # rank matches, shape sizes are non-negative
    ('<@m, [{"x"}]>', (4, 8), None, None, "rank 2"),
    ('<@m, [{"x"}, {}]>', (4, -8), 1, None, "bad size"),
    ('<@m, [{"x"}, {}]>', 3, None, None, "rank 3"),
])
def test_each_invariant_has_a_failing_example_naming_tensor_dim_and_axis(text, shape, dim, axis, words):
    err = fails(text, shape)
    assert err.tensor == "w" and err.dim == dim and err.axis == axis
    assert words in str(err) and "'w'" in str(err)


@pytest.mark.parametrize("text", [
    "<mesh<[], device_ids=[5]>, [{}, {}]>",
    "<mesh<[], device_ids=[5]>, [{?}]>",
    "<mesh<[], device_ids=[5]>, [], replicated={\"x\"}>",
])
def test_a_maximal_mesh_takes_only_an_empty_dim_list(text):
    with pytest.raises(ShardingVerifyError, match="maximal mesh") as info:
        verify(parse_sharding(text), None, (4, 4), name="v")
    assert info.value.tensor == "v" and info.value.dim is None


def test_negative_priority_is_refused():
    # the text cannot say p-1; an object can
    s = TensorSharding("m", [DimSharding(["x"], priority=-1), DimSharding()])
    with pytest.raises(ShardingVerifyError, match="negative") as info:
        verify(s, MESHES, 2, name="act")
    assert info.value.dim == 0 and info.value.tensor == "act"


def test_unknown_mesh_and_missing_mesh_are_named():
    with pytest.raises(ShardingVerifyError, match="unknown mesh @other") as info:
        verify(parse_sharding("<@other, []>"), MESHES, 0, name="t0")
    assert info.value.tensor == "t0"
    with pytest.raises(ShardingVerifyError, match="pass that Mesh"):
        verify(parse_sharding("<@other, []>"), None, 0)
    with pytest.raises(TypeError):
        verify("<@m, []>", MESHES, 0)


def test_allowed_cases_pass():
    # open dims may carry priorities, even when empty; gaps between priorities are fine
    verify(parse_sharding('<@m, [{?}p3, {"x"}p0]>'), MESHES, (4, 8))
    # non-divisible sharding is allowed (the seed pads): 7 over x=2
    verify(parse_sharding('<@m, [{"x"}, {"y", "z"}]>'), MESHES, (7, 3))
    # sub-axes of one axis in one dim out of order are not "consecutive"
    verify(parse_sharding('<@m, [{"y":(4)2, "y":(1)4}, {}]>'), MESHES, (4, 8))
    # the seed's explicitly replicated sub-axis example
    verify(parse_sharding('<@m, [{"x"}, {"y":(2)2}], replicated={"y":(1)2}>'), MESHES, (4, 8))
    # the inline mesh wins over the mesh argument; a maximal mesh takes `[]` for any rank
    verify(parse_sharding('<mesh<["a"=2]>, [{"a"}]>'), MESHES, (4,))
    verify(parse_sharding("<mesh<[], device_ids=[5]>, []>"), None, (4, 4))
    assert verify(parse_sharding('<@m, [{"x"}]>'), MESH, 1) is MESH
    assert not is_valid(parse_sharding('<@m, [{"x"}, {"x"}]>'), MESH, 2)


def test_canonicalize_sorts_and_merges_as_the_seed_shows():
    s = parse_sharding('<@m, [{"y":(1)2, "y":(2)2}, {}], replicated={"y":(4)2, "x"}>')
    c = canonicalize(s, MESHES)
    assert str(c) == '#sdy.sharding<@m, [{"y":(1)4}, {}], replicated={"x", "y":(4)2}>'
    verify(c, MESHES, 2)
    whole = canonicalize(parse_sharding('<@m, [{}], replicated={"y":(1)2, "y":(2)4}>'), MESHES)
    assert whole.replicated == (AxisRef("y"),)


# -- agreement with Shardy's own verifier ------------------------------------------------------

@st.composite
def noisy_sharding(draw):
    """Random axis references (some unknown, some bad sub-axes) dealt into dims and sets."""
    mesh = draw(st.one_of(meshes(min_axes=1, explicit_ids=False), st.just(Mesh()), st.just(Mesh([], [3]))))
    names = list(mesh.axis_names) + ["nope"]
    rank = draw(st.integers(0, 3))
    places = [[] for _ in range(rank + 2)]
    for _ in range(draw(st.integers(0, 5))):
        name = draw(st.sampled_from(names))
        kind = draw(st.integers(0, 2))
        if kind == 0:
            ref = AxisRef(name)
        elif kind == 1 or name == "nope":
            ref = AxisRef(name, draw(st.sampled_from([0, 1, 2, 3, 4])), draw(st.sampled_from([1, 2, 3, 4])))
        else:  # a sub-axis from a real factorization, so overlaps and merges are exercised
            n = mesh.axis_size(name)
            divisors = [d for d in range(1, n + 1) if n % d == 0]
            pre = draw(st.sampled_from(divisors))
            ref = AxisRef(name, pre, draw(st.sampled_from([d for d in divisors if (n // pre) % d == 0])))
        places[draw(st.integers(0, rank + 1))].append(ref)
    dims = []
    for axes in places[:rank]:
        closed = draw(st.booleans())
        priority = draw(st.none() | st.integers(0, 3))
        dims.append(DimSharding(axes, closed, priority))
    sharding = TensorSharding("m", dims, places[rank], places[rank + 1])
    shape_rank = rank if draw(st.integers(0, 4)) else draw(st.integers(0, 3))
    return mesh, sharding, [4] * shape_rank


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(noisy_sharding())
def test_valid_exactly_when_shardy_says_valid(case):
    mesh, sharding, shape = case
    shardy = shardy_verify({"m": mesh}, str(sharding), shape)
    try:
        verify(sharding, {"m": mesh}, shape)
        ours = None
    except ShardingVerifyError as e:
        ours = str(e)
    if shardy is None and ours is not None:  # the one check stricter than Shardy, on purpose
        assert "one factorization" in ours, ours
    else:
        assert (ours is None) == (shardy is None), f"Shardy: {shardy}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_generated_valid_shardings_pass_both_verifiers(data):
    mesh = data.draw(meshes(explicit_ids=False))
    s = data.draw(valid_shardings(mesh, mesh_ref="m", reduce_types=["sum"]))
    shape = [4] * s.rank
    verify(s, {"m": mesh}, shape)
    assert shardy_verify({"m": mesh}, str(s), shape) is None


def test_an_axis_of_size_one_used_twice_is_caught():
    # found by the Shardy-agreement test: the range [1, 1) of a size-1 axis is empty
    with pytest.raises(ShardingVerifyError, match="used twice") as info:
        verify(parse_sharding('<@m, [], replicated={"w", "w"}>'), {"m": Mesh({"w": 1})}, 0)
    assert info.value.dim == "replicated" and info.value.axis == '"w"'
    verify(parse_sharding('<@m, [{"w"}]>'), {"m": Mesh({"w": 1})}, 1)  # Shardy allows it once


def test_sub_axes_from_two_factorizations_are_refused_although_shardy_accepts_them():
    mesh = {"m": Mesh({"x": 12})}
    text = '#sdy.sharding<@m, [{"x":(1)2}, {"x":(3)2}]>'
    assert shardy_verify(mesh, text, [12, 12]) is None
    with pytest.raises(ShardingVerifyError, match="one factorization") as info:
        verify(parse_sharding(text), mesh, (12, 12))
    assert info.value.dim == 1 and info.value.axis == '"x":(3)2'
    # a gap between the pieces is fine: (1)3 and (6)2 leave "x":(3)2 unused
    verify(parse_sharding('<@m, [{"x":(1)3}], replicated={"x":(6)2}>'), mesh, 1)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(noisy_sharding())
def test_verifying_parsed_text_points_at_the_named_axis(case):
    mesh, sharding, shape = case
    text = str(sharding)
    assert parse_sharding(text) == sharding  # invalid shardings round-trip through text too
    try:
        parse_sharding(text, {"m": mesh}, shape, name="t")
    except ShardingVerifyError as e:
        assert e.line == 1 and e.text == text
        if e.axis is not None:
            assert text[e.column - 1:].startswith(e.axis)
        elif isinstance(e.dim, int):
            assert text[e.column - 1] == "{"
    else:
        assert is_valid(sharding, {"m": mesh}, shape)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_canonicalize_is_idempotent_and_fixes_valid_shardings(data):
    """A valid sharding is already canonical; a scrambled one (sets reversed, sub-axes split) gets
    back to it."""
    mesh = data.draw(meshes())
    s = data.draw(valid_shardings(mesh))
    assert canonicalize(s, mesh) == s and canonicalize(canonicalize(s, mesh), mesh) == s

    def split_all(axes):
        out = []
        for a in axes:
            n = a.size_on(mesh)
            k = next((f for f in range(2, n) if n % f == 0), None)
            out += list(a.split(k, mesh)) if k else [a]
        return out

    from spmdkit.sharding import DimSharding
    scrambled = TensorSharding(s.mesh, [DimSharding(split_all(d.axes), d.is_closed, d.priority) for d in s.dims],
                               list(reversed(split_all(s.replicated))), list(reversed(s.unreduced)), s.reduce_types)
    assert canonicalize(scrambled, mesh) == s
