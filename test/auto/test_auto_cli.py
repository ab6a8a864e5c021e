"""`spmdkit auto FILE --mesh ... [--memory-limit ...]` prints the annotated program (MLIR that
parses back and partitions), the search's summary on stderr; bad input is one line, exit 2."""
from __future__ import annotations

import jax
import pytest

from spmdkit import core, ir
from spmdkit.auto.cli import parse_bytes
from spmdkit.cli import main
from spmdkit.ir import import_jax, print_program
from spmdkit.models import mlp
from spmdkit.partition import partition
from spmdkit.sharding import Mesh

pytestmark = pytest.mark.skipif(not core.contains_spmd_rule("jax.dot_general"), reason="no jax.* rules in this build")


def _run(argv) -> int:
    """The exit status, argparse's own errors (SystemExit(2)) included."""
    try:
        return main(argv)
    except SystemExit as e:
        return e.code


@pytest.fixture(scope="module")
def mlp_file(tmp_path_factory):
    params = mlp.init_params(jax.random.PRNGKey(0))
    x, y = mlp.example_batch(jax.random.PRNGKey(1))
    program = import_jax(mlp.train_step, params, x, y, inline_calls=True, meshes={"mesh": Mesh({"dp": 2, "mp": 2})},
                         arg_shardings=[None] * 4 + ['#sdy.sharding<@mesh, [{"dp"}, {}]>'] * 2)
    path = tmp_path_factory.mktemp("auto") / "mlp.mlir"
    path.write_text(print_program(program))
    return path


def test_prints_an_annotated_program_that_partitions(mlp_file, capsys):
    assert main(["auto", str(mlp_file), "--mesh", "dp=2,mp=2", "--memory-limit", "5kB"]) == 0
    out, err = capsys.readouterr()
    program = ir.parse(out)
    assert all(a.sharding is not None for a in program.main.args)
    assert str(program.main.args[4].sharding) == '#sdy.sharding<@mesh, [{"dp"}, {}]>'   # given: kept
    assert "// search: Optimal" in err and "(limit 5000)" in err
    assert partition(program).summary().bytes_per_device >= 0


@pytest.mark.parametrize("argv, words", [
    (["--mesh", "2xx2"], "--mesh"),
    (["--mesh", "dp=2,mp=2", "--memory-limit", "2XB"], "2XB"),
    (["--mesh", "x=2,y=2"], "'dp'"),                 # the file's annotation names an axis the mesh lacks
    (["--mesh", "dp=2,mp=2", "--memory-limit", "10"], "smallest any plan needs"),
])
def test_bad_input_is_one_line_and_exit_2(mlp_file, capsys, argv, words):
    assert _run(["auto", str(mlp_file), *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("spmdkit auto: error:") and words in err[0], err


def test_missing_file(capsys):
    assert _run(["auto", "/nonexistent.mlir", "--mesh", "2x2"]) == 2
    assert "No such file" in capsys.readouterr().err


@pytest.mark.parametrize("text, value", [("2GB", 2e9), ("512MiB", 512 * 2 ** 20), ("1e9", 1e9), ("4096", 4096.0)])
def test_sizes(text, value):
    assert parse_bytes(text) == value
