"""Text form: exact Shardy syntax both ways (Shardy's own printer is the oracle), round trips."""
from hypothesis import HealthCheck, given, settings, strategies as st

import pytest
from sharding_shardy_oracle import shardy_print
from sharding_strategies import meshes, valid_shardings

from spmdkit.sharding import (AxisRef, DimSharding, Mesh, MeshAxis, TensorSharding, parse_axis_ref,
                              parse_dim_sharding, parse_mesh, parse_mesh_decl, parse_sharding,
                              parse_sharding_per_value, sharding_per_value_text)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def mesh_and_sharding(draw, **kw):
    mesh = draw(meshes())
    ref = draw(st.sampled_from(["m", "mesh_xy", None]))
    return mesh, draw(valid_shardings(mesh, mesh_ref=ref, **kw))


@SETTINGS
@given(mesh_and_sharding())
def test_print_then_parse_gives_the_same_object(pair):
    _, sharding = pair
    assert parse_sharding(str(sharding)) == sharding
    assert parse_sharding(sharding.to_text(prefix=False)) == sharding
    assert hash(parse_sharding(str(sharding))) == hash(sharding)


@SETTINGS
@given(mesh_and_sharding(reduce_types=["sum"]))
def test_our_text_is_exactly_what_shardy_prints(pair):
    """Shardy parses our text and prints it back unchanged (sum-only unreduced is Shardy's own)."""
    _, sharding = pair
    assert shardy_print(str(sharding)) == str(sharding)


@SETTINGS
@given(mesh_and_sharding(reduce_types=["sum"]))
def test_we_parse_what_shardy_prints(pair):
    _, sharding = pair
    assert parse_sharding(shardy_print(str(sharding))) == sharding


@SETTINGS
@given(meshes())
def test_mesh_text_matches_shardy_and_round_trips(mesh):
    assert shardy_print("#sdy.mesh" + str(mesh)) == "#sdy.mesh" + str(mesh)
    assert parse_mesh(str(mesh)) == mesh
    assert parse_mesh("#sdy.mesh" + str(mesh)) == mesh
    assert parse_mesh_decl(mesh.declaration("mesh_a")) == ("mesh_a", mesh)


def test_seed_and_brief_examples_print_exactly():
    text = '#sdy.sharding<@mesh, [{"x"}, {"y", ?}p1], replicated={"z"}>'
    s = parse_sharding(text)
    assert str(s) == text
    assert s.dims[1] == DimSharding([AxisRef("y")], is_closed=False, priority=1)
    assert s.replicated == (AxisRef("z"),)
    assert str(parse_sharding("<@mesh, []>")) == "#sdy.sharding<@mesh, []>"
    inline = parse_sharding('#sdy.sharding<mesh<["x"=2]>, [{"x"}]>')
    assert inline.mesh == Mesh([MeshAxis("x", 2)]) and inline.mesh_name is None
    assert inline.to_text(prefix=False) == '<mesh<["x"=2]>, [{"x"}]>'
    sub = parse_sharding('<@mesh_x, [{"x":(1)2}, {"x":(2)2}]>')
    assert sub.dims[0].axes == (AxisRef("x", 1, 2),) and sub.dims[1].axes == (AxisRef("x", 2, 2),)
    # the seed writes `sharding<...>` without the dialect prefix, and `{?}` alone
    assert parse_sharding('sharding<@mesh_xyz, [{"x"}, {?}], replicated={"y"}>').dims[1] == DimSharding((), False)


def test_priority_zero_is_kept_distinct_from_no_priority():
    assert parse_dim_sharding('{"x"}p0').priority == 0
    assert parse_dim_sharding('{"x"}').priority is None
    assert str(parse_dim_sharding('{"x"}p0')) == '{"x"}p0'


def test_unreduced_other_reduce_types_use_their_own_keys():
    s = TensorSharding("m", [DimSharding(["x"])], unreduced=["y", "z", "w"], reduce_types={"z": "max", "w": "avg"})
    assert str(s) == '#sdy.sharding<@m, [{"x"}], unreduced={"y"}, unreduced_avg={"w"}, unreduced_max={"z"}>'
    assert parse_sharding(str(s)) == s
    assert s.reduce_type("y") == "sum" and s.reduce_type("z") == "max"
    assert s.unreduced_by_type() == {"sum": (AxisRef("y"),), "max": (AxisRef("z"),), "avg": (AxisRef("w"),)}
    # an explicit "sum" is the default and normalizes away
    assert TensorSharding("m", [], unreduced=["y"], reduce_types={"y": "sum"}) == TensorSharding("m", [], unreduced=["y"])


def test_sharding_per_value_round_trips_and_matches_shardy():
    text = '#sdy.sharding_per_value<[<@m, [{"x"}, {}]>, <@m, []>, <mesh<["a"=2]>, [{"a", ?}p2]>]>'
    values = parse_sharding_per_value(text)
    assert len(values) == 3 and values[1] == TensorSharding("m", [])
    assert sharding_per_value_text(values) == text == shardy_print(text)
    assert parse_sharding_per_value("#sdy.sharding_per_value<[]>") == ()


def test_mesh_forms():
    m = parse_mesh('sdy.mesh @m = <["a"=2, "b"=2]>')
    assert m.axis_names == ("a", "b") and m.shape == (2, 2) and m.size == 4 and m.device_ids == (0, 1, 2, 3)
    assert str(m) == '<["a"=2, "b"=2]>'
    ids = parse_mesh('<["a"=2, "b"=2], device_ids=[3, 2, 1, 0]>')
    assert ids.device_ids == (3, 2, 1, 0) and str(ids) == '<["a"=2, "b"=2], device_ids=[3, 2, 1, 0]>'
    # iota ids are the default order and are not printed, as Shardy does
    assert str(parse_mesh('<["a"=4], device_ids=[0, 1, 2, 3]>')) == '<["a"=4]>'
    assert shardy_print('#sdy.mesh<["a"=4], device_ids=[0, 1, 2, 3]>') == '#sdy.mesh<["a"=4]>'
    maximal = parse_mesh("<[], device_ids=[3]>")
    assert maximal.is_maximal and not maximal.is_empty and maximal.device_ids == (3,)
    empty = parse_mesh("<[]>")
    assert empty.is_empty and not empty.is_maximal and empty.size == 1
    # the seed's older spellings
    assert parse_mesh_decl('@mesh_full = <"devices"=8>') == ("mesh_full", Mesh({"devices": 8}))
    assert parse_mesh('@mesh_0 = {<["a"=4, "b"=2]>, device_ids=[0, 1, 2, 3, 4, 5, 6, 7]}') == Mesh({"a": 4, "b": 2})
    assert parse_mesh_decl('sdy.mesh @"my mesh" = <["a"=2]>')[0] == "my mesh"


def test_quoted_names_round_trip():
    s = TensorSharding("mesh with space", [DimSharding(['we"ird', "back\\slash", "ünï"])])
    # MLIR escapes a quote as \22 and a backslash as \\ (and reads both, and \", back)
    assert str(s) == '#sdy.sharding<@"mesh with space", [{"we\\22ird", "back\\\\slash", "\\C3\\BCn\\C3\\AF"}]>'
    assert parse_sharding('<@m, [{"we\\"ird"}]>').dims[0].axes == (AxisRef('we"ird'),)
    assert parse_sharding(str(s)) == s
    assert shardy_print(str(s)) == str(s)


def test_axis_ref_text():
    assert parse_axis_ref('"x":(2)4') == AxisRef("x", 2, 4)
    assert str(AxisRef("x", 2, 4)) == '"x":(2)4'
    assert parse_axis_ref('"x"') == AxisRef("x")


def test_comments_and_whitespace_are_ignored():
    text = '#sdy.sharding<@m, // the mesh\n  [{"x" , ?} p3 ,\n {}]>'
    assert parse_sharding(text) == TensorSharding("m", [DimSharding(["x"], False, 3), DimSharding()])


@pytest.mark.parametrize("text", [
    '#sdy.sharding<@m, [{"x"}], replicated={}>',
    '#sdy.sharding<@m, [{"x"}], unreduced={}>',
])
def test_empty_axis_sets_parse_and_print_canonically(text):
    assert str(parse_sharding(text)) == '#sdy.sharding<@m, [{"x"}]>'


def test_a_programs_mesh_table():
    from spmdkit.sharding import ShardingParseError, parse_mesh_table
    table = parse_mesh_table('sdy.mesh @mesh_0 = <["a"=4, "b"=2]>\n'
                             'sdy.mesh @mesh_1 = <["x"=2, "y"=2, "z"=2], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>\n')
    assert list(table) == ["mesh_0", "mesh_1"] and table["mesh_1"].device_ids[0] == 7
    assert parse_mesh_table("") == {}
    with pytest.raises(ShardingParseError, match="declared twice") as info:
        parse_mesh_table('sdy.mesh @m = <["a"=2]>\nsdy.mesh @m = <["b"=2]>')
    assert (info.value.line, info.value.column) == (2, 1)
    with pytest.raises(ShardingParseError, match="named mesh declaration"):
        parse_mesh_table('<["a"=2]>')


def test_unannotated_dims_are_implicitly_p0():
    s = parse_sharding('<@m, [{"x"}p1, {"y"}, {"z", ?}p2]>')
    assert [d.effective_priority for d in s.dims] == [1, 0, 2]
    assert [d.priority for d in s.dims] == [1, None, 2]


def test_the_mesh_ops_attribute_dictionary_is_read_past():
    text = 'sdy.mesh @mesh = <["x"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}}'
    assert parse_mesh_decl(text) == ("mesh", Mesh({"x": 2}))
    from spmdkit.sharding import ShardingParseError
    with pytest.raises(ShardingParseError, match="unterminated attribute dictionary"):
        parse_mesh_decl('sdy.mesh @mesh = <["x"=2]> {a = {b = 1}')
