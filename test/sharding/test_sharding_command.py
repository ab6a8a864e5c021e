"""`python -m spmdkit.sharding`: forms of a good sharding, the error of a bad one."""

import pytest

from child_process import run_child
from spmdkit.sharding.command import main

MESHES = 'sdy.mesh @m = <["x"=2, "y"=4]>; sdy.mesh @n = <["a"=8]>'


def test_a_good_sharding_shows_every_form(capsys):
    assert main([MESHES, '#sdy.sharding<@m, [{"x"}, {"y"}], unreduced={}>', "--shape", "8x8"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ['sharding:     #sdy.sharding<@m, [{"x"}, {"y"}]>', "local shape:  4x2",
                   "dims_mapping: [[0], [1]]", "placements:   [Shard(0), Shard(1)]"]


def test_forms_that_cannot_say_it_say_why(capsys):
    assert main([MESHES, '<@n, [{"a":(1)2}, {"a":(2)4}]>', "--name", "w"]) == 0
    out = capsys.readouterr().out
    assert "dims_mapping: none (tensor 'w', dim 0, axis \"a\":(1)2: a sub-axis" in out
    assert "placements:   none" in out


@pytest.mark.parametrize("args, words", [
    ([MESHES, '<@m, [{"x"}, {"x"}]>', "--shape", "8x8"], "used twice"),
    ([MESHES, '<@q, []>'], "unknown mesh @q"),
    ([MESHES, '<@m, [{"x"}]>', "--shape", "8x8"], "rank 2"),
    (['sdy.mesh @m = <["x"=0]>', '<@m, []>'], "column 21"),
])
def test_bad_input_exits_2_with_the_error(args, words, capsys):
    assert main(args) == 2
    assert words in capsys.readouterr().err


def test_an_uneven_dim_shows_its_padding_and_that_reshard_refuses_it(capsys):
    assert main([MESHES, '<@n, [{"a"}]>', "--shape", "7"]) == 0
    local = capsys.readouterr().out.splitlines()[1]
    assert local.startswith("local shape:  1  (uneven: dim 0 of 7 over 8 devices is padded to 8; "
                            "real elements per device 1,1,1,1,1,1,1,0; spmdkit reshard refuses")


def test_runs_as_a_module():
    done = run_child(["-m", "spmdkit.sharding", MESHES, '<@m, [{"y", "x"}]>', "--shape", "16"], timeout=120)
    assert "local shape:  2" in done.stdout and "Shard(0, shard_order=1), Shard(0, shard_order=0)" in done.stdout


@pytest.mark.parametrize("mesh", ["x=2,y=4", "2x4"])
def test_a_mesh_in_the_commands_syntax_is_the_declared_mesh(mesh, capsys):
    assert main(['sdy.mesh @mesh = <["x"=2, "y"=4]>', '<@mesh, [{"y"}, {"x"}]>', "--shape", "8x8"]) == 0
    declared = capsys.readouterr().out
    assert main([mesh, '[{"y"}, {"x"}]', "--shape", "8x8"]) == 0
    assert capsys.readouterr().out == declared


def test_a_bad_mesh_in_the_commands_syntax_is_refused(capsys):
    assert main(["2xx4", "[{}]"]) == 2
    assert "has 'xx'" in capsys.readouterr().err
