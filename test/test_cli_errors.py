"""Every `spmdkit` subcommand answers malformed arguments with one line on stderr and exit
status 2, never a traceback (driven in-process through `spmdkit.cli.main`; one child process
checks the real command line)."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from child_process import child_env
from spmdkit import core
from spmdkit.cli import main

MESHES = 'sdy.mesh @m = <["x"=2]>'
GOOD_FILE = """
sdy.mesh @m = <["a"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.tanh %arg0 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""

CASES = {
    "no command": [],
    "unknown command": ["bogus"],
    "infer: no op": ["infer"],
    "infer: unknown op": ["infer", "nosuchop", "[4]"],
    "infer: mesh 0x2": ["infer", "matmul", "--mesh", "0x2", "[4,4]", "[4,4]"],
    "infer: mesh 2xx2": ["infer", "matmul", "--mesh", "2xx2", "[4,4]", "[4,4]"],
    "infer: mesh foo": ["infer", "matmul", "--mesh=foo", "[4,4]", "[4,4]"],
    "infer: mesh without value": ["infer", "matmul", "[4,4]", "[4,4]", "--mesh"],
    "infer: huge mesh": ["infer", "matmul", "--mesh", "100000x100000", "[4,4]", "[4,4]"],
    "infer: unclosed shape": ["infer", "matmul", "[4,4", "[4,4]"],
    "infer: bad shape": ["infer", "matmul", "[4,a]", "[4,4]"],
    "infer: bad mapping": ["infer", "matmul", "[4,4]{x}", "[4,4]"],
    "infer: bad mapping entry": ["infer", "matmul", "[4,4]{'a',0}", "[4,4]"],
    "infer: bad partial": ["infer", "matmul", "[4,4]p{a:sum}", "[4,4]"],
    "infer: mesh dim out of range": ["infer", "matmul", "[4,4]{9,0}", "[4,4]"],
    "infer: too many arguments": ["infer", "softmax", "[8,8]", "1", "2"],
    "infer: positional after named": ["infer", "softmax", "[8,8]", "axis=1", "2"],
    "infer: named twice": ["infer", "softmax", "[8,8]", "axis=1", "axis=0"],
    "infer: wrong attribute type": ["infer", "softmax", "[8,8]", "'one'"],
    "factors: unknown op": ["factors", "nosuchop", "[4]"],
    "factors: bad tensor": ["factors", "matmul", "[4"],
    "list: extra argument": ["list", "extra"],
    "verify: nothing named": ["verify"],
    "verify: unknown op": ["verify", "nosuchop"],
    "verify: negative cases": ["verify", "matmul", "--cases", "-1"],
    "verify: bad partial type": ["verify", "matmul", "--partial-types", "sum,foo"],
    "propagate: no file": ["propagate"],
    "propagate: missing file": ["propagate", "/nonexistent/p.mlir"],
    "explain: missing file": ["explain", "/nonexistent/p.mlir", "@main.%0"],
    "explain: unknown label": ["explain", "{good}", "@main.%99"],
    "explain: unknown option": ["explain", "{good}", "--fast"],
    "sharding: nothing": ["sharding"],
    "sharding: bad shape": ["sharding", MESHES, '<@m, [{"x"}]>', "--shape", "5x"],
    "sharding: rank mismatch": ["sharding", MESHES, '<@m, [{"x"}]>', "--shape", "4x4"],
    "reshard: missing options": ["reshard", "[{}]", "[{}]"],
    "reshard: mesh 2xx2": ["reshard", "--mesh", "2xx2", "--shape", "8,8", "[{}, {}]", "[{}, {}]"],
    "reshard: bad layout": ["reshard", "--mesh", "2x2", "--shape", "8,8", "foo", "[{}, {}]"],
    "reshard: uneven dim": ["reshard", "--mesh", "2x2", "--shape", "7,8", '[{"x"}, {}]', "[{}, {}]"],
    "reshard: bad shape": ["reshard", "--mesh", "x=2", "--shape", "8,a", "[{}, {}]", "[{}, {}]"],
    "reshard: zero itemsize": ["reshard", "--mesh", "2x2", "--shape", "8,8", "--itemsize", "0", "[{}, {}]", "[{}, {}]"],
    "reshard: bad link": ["reshard", "--mesh", "2x2", "--shape", "8,8", "--link", "x=fast", "[{}, {}]", "[{}, {}]"],
    "auto: no mesh": ["auto", "{good}"],
    "auto: mesh lacks the file's axis": ["auto", "{good}", "--mesh", "x=2"],
    "auto: bad memory limit": ["auto", "{good}", "--mesh", "a=2", "--memory-limit", "lots"],
    "auto: missing file": ["auto", "/nonexistent/p.mlir", "--mesh", "a=2"],
    "train: mesh 2xx2": ["train", "--mesh", "2xx2"],
    "train: unsupported mesh": ["train", "--mesh", "3x3"],
    "train: unknown example": ["train", "--example", "cnn"],
    "train: bad steps": ["train", "--steps", "abc"],
}


def _run(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as e:   # argparse's own errors exit from inside main, as on a command line
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("name", list(CASES))
def test_malformed_arguments_give_one_line_and_exit_2(name, capsys, tmp_path):
    good = tmp_path / "good.mlir"
    good.write_text(GOOD_FILE)
    argv = [a.replace("{good}", str(good)) for a in CASES[name]]
    code, out, err = _run(argv, capsys)
    assert code == 2, (code, out, err)
    assert "Traceback" not in out + err and out == ""
    lines = [line for line in err.splitlines() if line and not line[0].isspace()]  # a caret under a line may follow
    assert len(lines) == 1 and lines[0].startswith("spmdkit") and ": error: " in lines[0], err


def test_every_subcommand_is_covered(capsys):
    code, out, _ = _run(["--help"], capsys)
    listed = re.search(r"\{([a-z,]+)\}", out).group(1).split(",")
    assert code == 0 and len(listed) >= 9
    assert {argv[0] for argv in CASES.values() if argv} - {"bogus"} == set(listed)


def test_the_command_line_prints_no_traceback():
    done = subprocess.run([sys.executable, "-m", "spmdkit.cli", "verify", "nosuchop"], env=child_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == "spmdkit verify: error: no op or alias named 'nosuchop' (spmdkit list shows them all)"


# ---- random calls: any rule, any mix of well- and ill-formed tensors and attributes
_INT = st.integers(-3, 9) | st.sampled_from([2**31, -2**40, 10**20])
_TENSOR = st.tuples(st.lists(_INT, max_size=4), st.lists(_INT | st.lists(st.integers(-2, 3), max_size=3), max_size=4),
                    st.booleans(), st.sampled_from(["", "p{0:sum}", "p{1:max}", "p{5:sum}", "p{0:foo}", "p{x}"])).map(
    lambda t: "[" + ",".join(map(str, t[0])) + "]" + ("{" + ",".join(str(m).replace(" ", "") for m in t[1]) + "}"
                                                       if t[2] else "") + t[3])
_ATTR = st.sampled_from(["True", "0", "1", "-1", "[0]", "[0,1]", "1e-5", "'tanh'", "axis=1", "axis=-5", "[]", "None",
                         "10**20", "100000000000000000000", "[9,9,9]", "x=1", "{", "(;)"])
_ARG = _TENSOR | _ATTR | st.lists(_TENSOR, min_size=1, max_size=3).map(lambda ts: "(" + ";".join(ts) + ")")


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["infer", "factors"]), st.sampled_from(sorted(core.list_spmd_rules())),
       st.sampled_from(["2x2", "4", "2x2x2", "1", "dp=2,mp=2"]), st.lists(_ARG, max_size=6), st.booleans())
def test_random_rule_calls_answer_or_give_one_error_line(command, op, mesh, args, backward):
    import contextlib
    import io
    argv = [command, op, "--mesh", mesh, *args] + (["--backward"] if backward and command == "infer" else [])
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except SystemExit as e:
        code = e.code
    assert code in (0, 2), (argv, code, err.getvalue())
    if code == 2:
        lines = [line for line in err.getvalue().splitlines() if line and not line[0].isspace()]
        assert len(lines) == 1 and out.getvalue() == "", (argv, err.getvalue())
