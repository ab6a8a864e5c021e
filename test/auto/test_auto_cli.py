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


def test_searches_a_step_as_jax_lowers_it(tmp_path, capsys):
    """MLIR as `jax.jit(step).lower(...).as_text()` writes it: StableHLO ops whose attributes are
    StableHLO's (dot_dimension_numbers), reductions with a body, a scan's while loop."""
    import jax.numpy as jnp

    def step(w, x):
        def loss(w):
            h, _ = jax.lax.scan(lambda h, wi: (jnp.tanh(h @ wi), None), x, w)
            return jnp.mean(h ** 2)
        value, grad = jax.value_and_grad(loss)(w)
        return w - 0.1 * grad, value

    path = tmp_path / "step.mlir"
    path.write_text(jax.jit(step).lower(jnp.zeros((4, 32, 32)), jnp.zeros((8, 32))).as_text())
    assert main(["auto", str(path), "--mesh", "dp=2,mp=2"]) == 0
    out, err = capsys.readouterr()
    assert "// search: Optimal" in err
    program = ir.parse(out)
    ops = list(program.walk())
    assert {"stablehlo.dot_general", "stablehlo.reduce", "stablehlo.while"} <= {op.name for op in ops}
    assert all(a.sharding is not None for a in program.main.args)
    for op in program.main.body.ops:   # the function's own ops, the loops and the reductions among them
        if op.results and op.operands and op.name != "stablehlo.constant":
            assert all(r.sharding is not None for r in op.results), op.name
    whiles = [op for op in program.main.body.ops if op.name == "stablehlo.while"]
    assert whiles
    for op in whiles:   # the ops inside the loop bodies too (a carry's layout is on the loop's results)
        inner = [o for o in op.regions[1].block.ops if o.results and o.operands and not o.regions]
        assert inner and all(r.sharding is not None for o in inner for r in o.results), op


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
