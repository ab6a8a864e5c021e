"""`python -m codegen`: a spec typo is an error naming the YAML file and the entry (what CMake prints
last when it configures, see CMakeLists.txt); without jinja2 it says what to install."""
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("jsonschema")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from codegen.__main__ import main  # noqa: E402

REPO_SPECS = Path(__file__).resolve().parent.parent / "rules_yaml"


@pytest.fixture
def specs(tmp_path):
    folder = tmp_path / "rules_yaml"
    shutil.copytree(REPO_SPECS, folder)
    return folder


@pytest.mark.parametrize("typo, words", [
    (("einsum:", "einsun:"), "'einsun' was unexpected"),
    (("inputs: [x]", "inputs: [x"), "softmax.yaml"),
    (('einsum: "... -> ..."', 'einsum: "... -> ...q"'), "'softmax'"),
])
def test_a_typo_is_an_error_naming_file_and_entry(specs, capsys, typo, words):
    path = specs / "softmax.yaml"
    text = path.read_text()
    assert typo[0] in text
    path.write_text(text.replace(typo[0], typo[1], 1))
    assert main(["--specs", str(specs), "--check"]) == 2
    checked = capsys.readouterr().err
    assert main(["--specs", str(specs), "--out", str(specs.parent / "out")]) == 2
    assert capsys.readouterr().err == checked   # configure-time check and build say the same
    assert checked.startswith("spec error: rules_yaml/softmax.yaml: ") and words in checked
    assert "Traceback" not in checked
    assert not (specs.parent / "out").exists()


def test_check_passes_on_the_repository_specs(capsys):
    assert main(["--specs", str(REPO_SPECS), "--check"]) == 0
    assert capsys.readouterr().err == ""


def test_without_jinja2_it_says_what_to_install(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "jinja2", None)   # import jinja2 now raises ModuleNotFoundError
    monkeypatch.delitem(sys.modules, "codegen.emit", raising=False)
    assert main(["--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs jinja2" in err and "pip install jinja2" in err
