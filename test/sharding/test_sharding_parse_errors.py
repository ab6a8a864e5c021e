"""Malformed text: a ShardingParseError naming line and column; never another exception.
Shardy's own parser is the oracle for which mutated texts are well formed."""
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import pytest
from sharding_shardy_oracle import shardy_print

from spmdkit.sharding import (ShardingError, ShardingParseError, parse_dim_sharding, parse_mesh,
                              parse_sharding, parse_sharding_per_value)


@pytest.mark.parametrize("text, column, words", [
    ('<@m, [{"x"}, {"y" ?}]>', 19, "expected '}'"),
    ('<@m, [{"x"}', 12, "end of text"),
    ('<@m, [{"x":(1)}]>', 15, "integer size"),
    ('<m, []>', 2, "mesh reference"),
    ('<@m, [], foo={}>', 10, "unknown sharding field 'foo'"),
    ('<@m, [{?, "x"}]>', 9, "'?' must be the last"),
    ('<@m, [{"x"}q1]>', 12, "found 'q1'"),
    ('<@m, [{"x"}p]>', 12, "priority"),
    ('<@m, [{"x}]>', 8, "unterminated string"),
    ('<@m, [{"x"}], replicated={"y"}, replicated={"z"}>', 33, "'replicated' appears twice"),
    ('<@m, [{"x"}], unreduced={"y"}, unreduced_max={"y"}>', 32, 'unreduced axis "y" has two reduce types'),
    ('<@m, [{"x"}]> trailing', 15, "after the end"),
    ('<@m, [{"x"}], replicated="y">', 26, "expected '{'"),
    ('<@m, [{x}]>', 8, "quoted axis name"),
    ('<@m, [{"a\\q"}]>', 10, "unknown escape"),
    ('<@m, [{"x"} ; ]>', 13, "unexpected character ';'"),
    ('#sdy.sharding<@m, [{"x":(1)2:(3)}]>', 29, "expected '}'"),
])
def test_sharding_parse_errors_name_the_column(text, column, words):
    with pytest.raises(ShardingParseError) as info:
        parse_sharding(text)
    err = info.value
    assert (err.line, err.column) == (1, column), str(err)
    assert words in str(err) and err.text == text
    assert f"column {column}" in str(err) and isinstance(err, ValueError)


def test_error_on_a_later_line_names_that_line_and_shows_a_caret():
    text = '#sdy.sharding<@m, [\n  {"x"},\n  {"y", ?}p-1]>'
    with pytest.raises(ShardingParseError) as info:
        parse_sharding(text)
    assert (info.value.line, info.value.column) == (3, 11)
    assert str(info.value).splitlines()[1:] == ["  " + '  {"y", ?}p-1]>', "  " + " " * 10 + "^"]


@pytest.mark.parametrize("text, column, words", [
    ('<["a"=0]>', 7, "sizes must be positive"),
    ('<["a"=2, "a"=2]>', 10, '"a" appears twice'),
    ('<["a"=2], device_ids=[0]>', 11, "2 devices, but 1"),
    ('<["a"=2], device_ids=[0, 0]>', 11, "appears twice"),
    ('<["a"=2], device_ids=[0, -1]>', 26, "negative"),
    ('<["a"=2], devices=[0, 1]>', 11, "device_ids"),
    ('sdy.mesh m = <["a"=2]>', 10, "'@'"),
    ('<["a"]>', 6, "expected '='"),
    ('<["a"=x]>', 7, "integer size"),
])
def test_mesh_parse_errors_name_the_column(text, column, words):
    with pytest.raises(ShardingParseError) as info:
        parse_mesh(text)
    assert info.value.column == column, str(info.value)
    assert words in str(info.value)


def test_other_entry_points_report_columns_too():
    with pytest.raises(ShardingParseError, match="column 7"):
        parse_dim_sharding('{"x"} {"y"}')
    with pytest.raises(ShardingParseError, match="column 35"):
        parse_sharding_per_value('#sdy.sharding_per_value<[<@m, []> <@m, []>]>')
    with pytest.raises(TypeError):
        parse_sharding(None)
    with pytest.raises(ShardingParseError, match="end of text"):
        parse_sharding("")


VALID = [
    '#sdy.sharding<@mesh, [{"x"}, {"y", ?}p1], replicated={"z"}>',
    '#sdy.sharding<@m, [{"x":(1)2, "y"}, {?}p0], unreduced={"w"}>',
    '#sdy.sharding<mesh<["x"=2], device_ids=[1, 0]>, [{"x"}]>',
    '#sdy.sharding<@m, []>',
]
ALPHABET = list('<>[]{}(),=?:@"xp0123 ') + ["mesh", "replicated", "unreduced"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(VALID), st.data())
def test_mutated_text_parses_exactly_when_shardy_parses_it(text, data):
    """Delete, insert or replace one piece: we raise only ShardingParseError, and whatever Shardy
    reads we read to the same sharding (Shardy prints it back; we print the same text)."""
    i = data.draw(st.integers(0, len(text)))
    op = data.draw(st.sampled_from(["delete", "insert", "replace"]))
    piece = data.draw(st.sampled_from(ALPHABET))
    mutated = {"delete": text[:i] + text[i + 1:], "insert": text[:i] + piece + text[i:],
               "replace": text[:i] + piece + text[i + 1:]}[op]
    try:
        ours = str(parse_sharding(mutated))
    except ShardingParseError as e:
        assert 1 <= e.column <= len(mutated) + 1
        ours = None
    try:
        theirs = shardy_print(mutated)
    except Exception:
        theirs = None
    assume(mutated.startswith("#sdy.sharding<"))  # Shardy needs the prefix; ours is optional
    assume(mutated.endswith(">"))  # MLIR's Attribute.parse ignores some trailing junk (a lone '@')
    if theirs is not None:
        assert ours == theirs


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(ALPHABET + ["\n", "\\", "é", "-", "#sdy.sharding", "device_ids"]), max_size=30))
def test_random_text_never_raises_anything_but_a_sharding_error(pieces):
    text = "".join(pieces)
    try:
        parse_sharding(text)
    except ShardingError:
        pass
    try:
        parse_mesh(text)
    except ShardingError:
        pass


# -- verifying while parsing: the error points at the offending axis -----------------------------

from spmdkit.sharding import Mesh, ShardingVerifyError  # noqa: E402

NAMED = {"m": Mesh({"x": 2, "y": 4})}


@pytest.mark.parametrize("text, shape, line, column, dim, axis", [
    ('<@m, [{"x"}, {"y", "x"}]>', (4, 8), 1, 20, 1, '"x"'),
    ('<@q, [{"x"}]>', (4,), 1, 2, None, None),
    ('<@m, [{"x"}]>', (4, 8), 1, 6, None, None),
    ('<@m, [{"x"},\n {}p1]>', (4, 8), 2, 2, 1, None),
    ('<@m, [{}], replicated={"y", "x"}>', 1, 1, 29, "replicated", '"x"'),
    ('<@m, [{}], unreduced_max={"nope"}>', 1, 1, 27, "unreduced", '"nope"'),
    ('<@m, [{"y":(1)2, "y":(2)2}]>', 1, 1, 18, 0, '"y":(2)2'),
])
def test_parse_with_meshes_verifies_and_points_at_the_culprit(text, shape, line, column, dim, axis):
    with pytest.raises(ShardingVerifyError) as info:
        parse_sharding(text, NAMED, shape, name="w")
    err = info.value
    assert (err.line, err.column, err.dim, err.axis, err.tensor) == (line, column, dim, axis, "w")
    assert f"line {line}, column {column}" in str(err)
    if axis is not None:  # the column is where that axis is written
        offset = sum(len(x) + 1 for x in text.split("\n")[:line - 1]) + column - 1
        assert text[offset:].startswith(axis)


def test_parse_without_meshes_does_not_verify():
    assert parse_sharding('<@m, [{"x"}, {"x"}]>').rank == 2
    assert parse_sharding('<@m, [{"x"}]>', NAMED, 1).rank == 1


def test_a_long_line_is_shown_as_a_window_around_the_column():
    text = "<@m, [" + ", ".join(['{"x"}'] * 200) + ", {x}]>"
    with pytest.raises(ShardingParseError) as info:
        parse_sharding(text)
    shown, caret = str(info.value).splitlines()[1:]
    assert len(shown) < 120 and shown.startswith("  ...")
    assert shown[caret.index("^")] == "x" and info.value.column == text.index("{x}") + 2
