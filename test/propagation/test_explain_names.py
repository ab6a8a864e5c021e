"""`spmdkit explain FILE LABEL` addresses values by the file's own SSA names, names other values
the same way in its reasons, and refuses a label the file does not have (exit 2, nearest names)."""
from __future__ import annotations

import re
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

from spmdkit import ir
from spmdkit.cli import main as cli_main
from spmdkit.propagation.cli import _labels

_DEFINED = re.compile(r"^\s*%([\w.$-]+) = (\"?)([\w.]+)", re.M)


def _jax_text() -> str:
    """As a user gets it: jax.jit(f).lower(...).as_text() (constants named %cst, two reduces),
    with a mesh and one argument sharding added by hand."""
    def f(x, w):
        y = jnp.tanh(x @ w) * 2.0
        return y.sum(axis=1), jnp.max(y), jnp.exp(y) + 1.0

    text = jax.jit(f).lower(jnp.ones((8, 4)), jnp.ones((4, 4))).as_text()
    head, _, rest = text.partition("\n")
    text = head + '\n  sdy.mesh @m = <["x"=2, "y"=2]>\n' + rest
    return text.replace("%arg0: tensor<8x4xf32>", '%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{"x"}, {}]>}', 1)


@pytest.fixture(scope="module")
def jax_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("explain") / "f.mlir"
    path.write_text(_jax_text())
    return path


def _explain(capsys, *argv):
    code = cli_main(["explain", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_every_name_the_file_defines_is_the_value_it_defines(jax_file, capsys):
    text = jax_file.read_text()
    defined = _DEFINED.findall(text)
    assert any(name.startswith("cst") for name, _, _ in defined)  # JAX's names, not a count
    program = ir.load(jax_file, ssa_names=True)
    by_name = {r.name: op for op in program.main.walk() for r in op.results if r.name}
    for name, _, op_name in defined:
        assert by_name[name].name == op_name, (name, op_name)
    reduce_name = next(name for name, _, op in defined if op == "stablehlo.reduce")
    code, out, err = _explain(capsys, jax_file, f"@main.%{reduce_name}")
    assert code == 0 and err == ""
    assert out.startswith(f"@main.%{reduce_name}: ") and f"op 'stablehlo.reduce' of @main.%{reduce_name}" in out


def test_reasons_name_values_as_the_file_does(jax_file, capsys):
    code, out, _ = _explain(capsys, jax_file)
    assert code == 0
    origins = re.findall(r"axes from the annotation of '([^']*)'", out)
    assert origins and set(origins) == {"@main.%arg0"}
    assert not re.search(r"'v\d+'|op #\d", out)   # no internal ids
    labels = re.findall(r"^(@main\.%\S+):", out, re.M)
    assert len(labels) == len(set(labels)) and "@main.%arg0" in labels


def test_short_labels_resolve_in_main(jax_file, capsys):
    code, short, _ = _explain(capsys, jax_file, "%arg1", "cst", "main.%0")
    assert code == 0
    assert [line.split(":")[0] for line in short.splitlines() if line.startswith("@")] == \
        ["@main.%arg1", "@main.%cst", "@main.%0"]


@pytest.mark.parametrize("label", ["@main.%99", "@main.%cs", "%nope", "@other.%0"])
def test_an_unknown_label_is_an_error_with_the_nearest_names(jax_file, capsys, label):
    code, out, err = _explain(capsys, jax_file, label)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and f"no value {label!r}" in err and "@main.%" in err
    if label == "@main.%cs":
        assert "nearest: @main.%cst" in err


def test_hand_written_names_are_kept(tmp_path, capsys):
    path = tmp_path / "named.mlir"
    path.write_text("""
sdy.mesh @m = <["a"=2]>
func.func @main(%weights: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {}]>}, %x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %sum = stablehlo.add %weights, %x : tensor<8x8xf32>
  %pair:2 = stablehlo.optimization_barrier %sum, %x : tensor<8x8xf32>, tensor<8x8xf32>
  %out = stablehlo.multiply %pair#0, %pair#1 : tensor<8x8xf32>
  return %out : tensor<8x8xf32>
}
""")
    code, out, _ = _explain(capsys, path, "%sum", "%pair#1", "@main.%out")
    assert code == 0
    assert re.findall(r"^(@main\.%\S+):", out, re.M) == ["@main.%sum", "@main.%pair#1", "@main.%out"]
    assert "axes from the annotation of '@main.%weights'" in out


def test_a_file_with_locations_keeps_the_names_mlir_printed(tmp_path):
    """With `loc(...)` on every op the names are MLIR's printed ones: JAX's file's own."""
    text = jax.jit(lambda x: jnp.sin(x) * 3.0).lower(jnp.ones((4,))).as_text(debug_info=True)
    assert "loc(" in text
    path = tmp_path / "locs.mlir"
    path.write_text(text)
    program = ir.load(path, ssa_names=True)
    names = {r.name: op.name for op in program.main.walk() for r in op.results if r.name}
    defined = {name: op for name, _, op in _DEFINED.findall(text)}
    assert defined and names == defined


_DATA = sorted((Path(__file__).resolve().parent.parent / "ir" / "data").glob("*.mlir"))
_FUNC = re.compile(r"func\.func (?:public |private )?@([\w.$-]+)\(")


@pytest.mark.parametrize("path", _DATA, ids=lambda p: p.name)
def test_every_defined_name_of_the_stored_files_labels_its_op(path):
    """Shardy's and JAX's files, hand-written names and MLIR's alike: each `%name = op` line is a
    label for a result of that op (a name reused in sibling regions carries its line)."""
    labels = _labels(ir.load(path, ssa_names=True))
    fn, checked = None, 0
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if (m := _FUNC.search(line)) is not None:
            fn = m.group(1)
        m = re.match(r"^\s*%([\w.$-]+)(?::(\d+))? = \"?([\w.]+)", line)
        if m is None:
            continue
        name, count, op_name = m.groups()
        for key in [f"{name}#{i}" for i in range(int(count))] if count else [name]:
            label = f"@{fn}.%{key}"
            value = labels.get(label) or labels[f"{label}@L{number}"]
            assert value.owner.name.removeprefix("paddle.") == {"call": "func.call"}.get(op_name, op_name).removeprefix(
                "paddle."), (label, number)
            checked += 1
    assert checked > 0


def test_a_name_reused_in_sibling_regions_asks_for_its_line(capsys):
    path = next(p for p in _DATA if p.name == "jax_control_flow.mlir")
    code, out, err = _explain(capsys, path, "%21")
    assert code == 2 and out == "" and "names 4 values" in err and "@main.%21@L28" in err
    code, out, _ = _explain(capsys, path, "%21@L28", "@main.%21@L33")
    assert code == 0 and re.findall(r"^(@\S+):", out, re.M) == ["@main.%21@L28", "@main.%21@L33"]
