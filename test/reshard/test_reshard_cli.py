"""`spmdkit reshard`, through `register` (as the spmdkit CLI adds it) and `main`."""
import argparse
import re

import pytest

from spmdkit.reshard import ReshardError
from spmdkit.reshard.cli import main, register


def run(argv):
    ap = argparse.ArgumentParser()
    register(ap.add_subparsers(dest="cmd"))
    args = ap.parse_args(["reshard", *argv])
    return args.fn(args)


def test_prints_plan_bytes_cost_and_proof(capsys):
    assert run(["--mesh", "x=2,y=4", "--shape", "8,16", '[{"x"}, {}]', '[{}, {"x", "y"}]']) == 0
    out = capsys.readouterr().out
    assert "all_to_all(x,y: dim 0 -> dim 1)" in out
    total = re.search(r"total: .* ([\d]+) bytes/device, ([\d.]+) us", out)
    naive = re.search(r"naive plan .*: (\d+) bytes/device, ([\d.]+) us", out)
    assert total and naive and float(total.group(2)) <= float(naive.group(2))
    assert "proven" in out


def test_partial_max_and_links(capsys):
    assert run(["--mesh", "2x2", "--shape", "8,8", "--link", "x=2.7:19.3", '[{}, {}] partial={"x"}:max',
                '[{"x"}, {}]']) == 0
    out = capsys.readouterr().out
    assert "all_reduce(x, max)" in out and "reduce_scatter" not in out


def test_sdy_text_accepted(capsys):
    assert run(["--mesh", "x=2,y=2", "--shape", "4,4", '#sdy.sharding<@mesh, [{}, {}], unreduced={"y"}>',
                '[{"y"}, {}]']) == 0
    assert "reduce_scatter(y, dim 0)" in capsys.readouterr().out


@pytest.mark.parametrize("argv, word", [
    (["--mesh", "x=2", "--shape", "3", '[{"x"}]', "[{}]"], "dim 0 of size 3"),
    (["--mesh", "x=2", "--shape", "a,b", '[{"x"}]', "[{}]"], "shape 'a,b'"),
    (["--mesh", "x=2", "--shape", "4", '[{"q"}]', "[{}]"], "'q' is not in mesh"),
    (["--mesh", "x=2", "--shape", "4", "--link", "x=fast", '[{"x"}]', "[{}]"], "AXIS=LATENCY_US:GBPS"),
])
def test_errors_name_the_value(argv, word, capsys):
    with pytest.raises(ReshardError, match=re.escape(word)):
        run(argv)
    assert main(["reshard", *argv]) == 2
    assert word in capsys.readouterr().err


def test_sub_axes_switch(capsys):
    argv = ["--mesh", "x=2,y=4", "--shape", "8,16", '[{"x"}, {"y"}]', '[{"y"}, {"x"}]']
    run(argv)
    fine = capsys.readouterr().out
    run(argv + ["--sub-axes", "off"])
    coarse = capsys.readouterr().out
    assert '"y":(2)2' in fine and ":(" not in coarse
    bytes_of = lambda out: float(re.search(r"total: .* (\d+) bytes/device", out).group(1))  # noqa: E731
    assert bytes_of(fine) < bytes_of(coarse)
