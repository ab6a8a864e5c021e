"""The generator: spec errors name the YAML file and the entry; valid specs render readable C++."""
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("jinja2")
jsonschema = pytest.importorskip("jsonschema")

import sys
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from codegen.emit import render  # noqa: E402
from codegen.spec import SpecError, load_specs  # noqa: E402

REPO_SPECS = Path(__file__).resolve().parent.parent / "rules_yaml"

GOOD = """
- op: my_matmul
  inputs: [x, y]
  outputs: [out]
  attrs: {trans_x: bool = false}
  einsum: "...mk, ...kn -> ...mn"
  transpose: {x: trans_x}
"""


def write(tmp_path, text, name="ops.yaml"):
    d = tmp_path / "rules_yaml"
    d.mkdir(exist_ok=True)
    (d / name).write_text(textwrap.dedent(text))
    return d


def test_repository_specs_load_and_render():
    specs = load_specs(REPO_SPECS)
    files = render(specs)
    assert "generated_rules.h" in files and "register_rules.cc" in files
    cc = files["rules_matmul.cc"]
    assert "SpmdInfo MatmulInferSpmd(const DistMetaTensor& x, const DistMetaTensor& y, bool trans_x, bool trans_y)" in cc
    assert "call.transpose(0, trans_x);" in cc and "return call.reverse();" in cc


def test_good_spec_renders(tmp_path):
    files = render(load_specs(write(tmp_path, GOOD)))
    assert "MyMatmulInferSpmdReverse" in files["rules_ops.cc"]


@pytest.mark.parametrize("bad,message", [
    (GOOD.replace('einsum: "...mk, ...kn -> ...mn"', 'einsum: "...mk, ...kn -> ...mz"'), "output letter 'z' is in no input"),
    (GOOD.replace('einsum: "...mk, ...kn -> ...mn"', 'einsum: "...mk -> ...mn"'), "1 input patterns for 2 inputs"),
    (GOOD.replace("trans_x: bool = false", "trans_x: boolean = false"), "unknown type 'boolean'"),
    (GOOD.replace("transpose: {x: trans_x}", "transpose: {x: trans_q}"), "'trans_q', which is not an attribute"),
    (GOOD.replace("transpose: {x: trans_x}", "transpose: {w: trans_x}"), "'w', which is not an input"),
    (GOOD.replace('  einsum: "...mk, ...kn -> ...mn"\n', ""), "exactly one of 'einsum', 'dim_trans' or 'cpp'"),
    (GOOD.replace("  outputs: [out]\n", ""), "'outputs' is a required property"),
    (GOOD + "  colour: red\n", "Additional properties are not allowed"),
    (GOOD.replace("trans_x: bool = false", "trans_x: bool = maybe"), "default 'maybe' is not a valid bool"),
    (GOOD + GOOD.replace("- op: my_matmul", "- op: other\n  aliases: [my_matmul]"), "'my_matmul' is already taken"),
])
def test_spec_errors_name_file_and_entry(tmp_path, bad, message):
    with pytest.raises(SpecError) as e:
        load_specs(write(tmp_path, bad))
    text = str(e.value)
    assert text.startswith("rules_yaml/ops.yaml: entry '"), text
    assert message in text, text


def test_invalid_yaml_names_the_file(tmp_path):
    with pytest.raises(SpecError, match=r"rules_yaml/broken.yaml: not valid YAML"):
        load_specs(write(tmp_path, "- op: [unclosed\n", "broken.yaml"))


def test_unchanged_output_is_not_rewritten(tmp_path):
    from codegen.emit import write as write_files
    specs = load_specs(REPO_SPECS)
    out = tmp_path / "gen"
    write_files(specs, out)
    stamp = {p: p.stat().st_mtime_ns for p in out.iterdir()}
    write_files(specs, out)
    assert stamp == {p: p.stat().st_mtime_ns for p in out.iterdir()}


LIST_COUNT = """
- op: my_pairs
  inputs: ["xs[]", y]
  outputs: ["outs[]"]
  einsum: "..., ... -> ..."
  count: {outs: "len(xs)"}
"""


def test_count_by_list_input_length_renders_and_rejects_a_plain_input(tmp_path):
    cc = render(load_specs(write(tmp_path, LIST_COUNT)))["rules_ops.cc"]
    assert 'call.output_count(0, static_cast<int64_t>(xs.size()), "xs");' in cc
    with pytest.raises(SpecError, match="'count' len\\(\\) names 'y', which is not a list input"):
        load_specs(write(tmp_path, LIST_COUNT.replace("len(xs)", "len(y)")))
    with pytest.raises(SpecError, match="'count' names 'zs', which is not an input"):
        load_specs(write(tmp_path, LIST_COUNT.replace("len(xs)", "len(zs)")))
