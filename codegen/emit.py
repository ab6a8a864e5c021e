"""Turn checked specs into C++: one source file per spec file, one header, one registration."""
from __future__ import annotations

from pathlib import Path

import jinja2

from .spec import Attr, OpSpec

CPP_TYPE = {
    "bool": "bool", "int": "int", "int64": "int64_t", "float": "float", "str": "const std::string&",
    "dtype": "const std::string&", "int[]": "const std::vector<int64_t>&", "int64[]": "const std::vector<int64_t>&",
    "float[]": "const std::vector<double>&", "bool[]": "const std::vector<int64_t>&",
}
ARG_KIND = {
    "bool": "kBool", "int": "kInt", "int64": "kInt64", "float": "kFloat", "str": "kStr", "dtype": "kDType",
    "int[]": "kIntList", "int64[]": "kInt64List", "float[]": "kFloatList", "bool[]": "kBoolList",
}
ARG_FIELD = {
    "bool": "a[{i}].b", "int": "static_cast<int>(a[{i}].i)", "int64": "a[{i}].i", "float": "static_cast<float>(a[{i}].f)",
    "str": "a[{i}].s", "dtype": "a[{i}].s", "int[]": "a[{i}].ints", "int64[]": "a[{i}].ints",
    "float[]": "a[{i}].floats", "bool[]": "a[{i}].ints",
}
REDUCE = {"sum": "kSum", "max": "kMax", "min": "kMin", "prod": "kProd", "avg": "kAvg", "any": "kAny", "all": "kAll"}


def camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


def cpp_literal(value, type_: str) -> str:
    if type_ == "bool":
        return "true" if value else "false"
    if type_ in ("str", "dtype"):
        return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
    if type_ == "float":
        return repr(float(value))
    if type_.endswith("[]"):
        return "{" + ", ".join(cpp_literal(v, type_[:-2] if type_ != "bool[]" else "int") for v in value) + "}"
    return str(int(value))


def default_arg(a: Attr) -> str:
    t = a.type
    if t == "bool":
        return f"arg_bool({cpp_literal(a.default, t)})"
    if t in ("int", "int64"):
        return f"arg_int({int(a.default)})"
    if t == "float":
        return f"arg_float({cpp_literal(a.default, t)})"
    if t in ("str", "dtype"):
        return f"arg_str({cpp_literal(a.default, t)})"
    if t == "float[]":
        return f"arg_floats({cpp_literal(a.default, t)})"
    return f"arg_ints({cpp_literal(a.default, t)})"


def tensor_param(t, reverse_output: bool = False) -> dict:
    if t.is_list:
        return {"name": t.name, "cpp": "const std::vector<const DistMetaTensor*>&", "kind": "kTensorList",
                "field": "a[{i}].tensors", "default": None}
    kind = "kOptionalTensor" if (t.optional or reverse_output) else "kTensor"
    return {"name": t.name, "cpp": "const DistMetaTensor&", "kind": kind, "field": "*a[{i}].tensor", "default": None}


def attr_param(a: Attr) -> dict:
    return {"name": a.name, "cpp": f"{CPP_TYPE[a.type]}", "kind": ARG_KIND[a.type], "field": ARG_FIELD[a.type],
            "default": default_arg(a) if a.has_default else None}


def einsum_setup(spec: OpSpec) -> list[str]:
    """The EinsumCall edits an op's attributes ask for, one C++ statement each."""
    raw, lines = spec.raw, []
    for g, attr in (raw.get("groups") or {}).items():
        owner = next(t for t, p in zip(spec.inputs, spec.notation.inputs) if g in p)
        lines.append(f'call.group_length(\'{g}\', group_length_from_attr(rule.op, "{attr}", {attr}, {owner.name}));')
    for t, attr in (raw.get("transpose") or {}).items():
        lines.append(f"call.transpose({spec.input_index(t)}, {attr});")
    rep = raw.get("replicate")
    if isinstance(rep, dict):
        for t, attr in rep.items():
            if isinstance(attr, list):  # literal axes
                axes = ", ".join(str(int(a)) for a in attr)
                lines.append(f'static const std::vector<int64_t> kReplicated{spec.input_index(t)} = {{{axes}}};')
                lines.append(f'call.replicate({spec.input_index(t)}, kReplicated{spec.input_index(t)}, "{t} dims");')
            else:
                lines.append(f'call.replicate({spec.input_index(t)}, {attr}, "{attr}");')
    elif isinstance(rep, list):
        for letter in rep:
            lines.append(f"call.replicate_letter('{letter}');")
    red = raw.get("reduce")
    if red:
        t = next(k for k in red if k not in ("keep_dim", "partial"))
        axis, keep = red[t], red.get("keep_dim", "false")
        p = red.get("partial", "sum")
        whole = p == "none"
        rtype = ("ReduceType::kSum" if whole else f"ReduceType::{REDUCE[p]}" if p in REDUCE
                 else f'reduce_type_from_attr(rule.op, "{p}", {p})')
        lines.append(f'call.reduce({spec.input_index(t)}, {axis}, {keep}, {rtype}, "{axis}"'
                     + (", /*whole=*/true);" if whole else ");"))
    for t, attr in (raw.get("insert_dim") or {}).items():
        lines.append(f'call.insert_dim({spec.input_index(t)}, {attr}, "{attr}");')
    for t, attr in (raw.get("permute") or {}).items():
        lines.append(f'call.permute({spec.input_index(t)}, {attr}, "{attr}");')
    if raw.get("equation"):
        lines.append(f'call.equation({raw["equation"]}, "{raw["equation"]}");')
    outputs = [o.name for o in spec.outputs]
    for out, inp in (raw.get("like") or {}).items():
        lines.append(f"call.like({outputs.index(out)}, {spec.input_index(inp)});")
    for out, ins in (raw.get("depends") or {}).items():
        mask = " | ".join(f"(1u << {spec.input_index(t)})" for t in ins) or "0u"
        lines.append(f"call.depends({outputs.index(out)}, {mask});")
    for out in raw.get("workspace") or []:
        lines.append(f"call.workspace({outputs.index(out)});")
    for inp, out in (raw.get("accumulate") or {}).items():
        lines.append(f"call.accumulate({spec.input_index(inp)}, {outputs.index(out)});")
    return lines


def count_setup(spec: OpSpec) -> list[str]:
    """Forward only: how many tensors each list output holds."""
    lines = []
    for t, attr in (spec.raw.get("count") or {}).items():
        j = next(i for i, o in enumerate(spec.outputs) if o.name == t)
        n = f"static_cast<int64_t>({attr}.size())" if spec.attr(attr).type.endswith("[]") else attr
        lines.append(f'call.output_count({j}, {n}, "{attr}");')
    return lines


def einsum_options(spec: OpSpec) -> str:
    raw = spec.raw
    merge = {"coshard": "kCoShard", "legacy": "kLegacy", "matmul": "kMatmul"}[raw.get("merge", "coshard")]
    ones = {"clear": "kClear", "keep": "kKeep", "broadcast": "kBroadcast"}[raw.get("ones", "clear")]
    sources = raw.get("sources")
    mask = "~0u" if not sources else " | ".join(f"(1u << {spec.input_index(t)})" for t in sources)
    base = (f"einsum_options(ReduceType::{REDUCE[raw.get('partial', 'sum')]}, Merge::{merge}, Ones::{ones}, "
            f"/*divisible=*/{'true' if raw.get('divisible', True) else 'false'}, "
            f"/*keep_input_partial=*/{'true' if raw.get('keep_partial') else 'false'}, /*sources=*/{mask}"
            + (", /*reverse_replicated_claim=*/true)" if raw.get("reverse_replicated_claim") else ")"))
    extra = []
    if raw.get("replicated_claim"):
        extra.append("o.replicated_claim = true;")
    if raw.get("contraction") == "per_output":
        extra.append("o.per_output_partial = true;")
    if raw.get("no_partial"):
        extra.append("o.no_partial_letters = " + " | ".join(f"(1u << ('{c}' - 'a'))" for c in raw["no_partial"]) + ";")
    if raw.get("outer") == "first_split":
        extra.append("o.outer_first_split = true;")
    if raw.get("reverse_sources"):
        outs = [o.name for o in spec.outputs]
        extra += [f"o.reverse_sources[{i}] = {outs.index(t) + 1};" for i, t in enumerate(raw["reverse_sources"])]
    if raw.get("unreturned"):
        extra.append("o.unreturned = " + " | ".join(f"(1u << {spec.input_index(t)})" for t in raw["unreturned"]) + ";")
    if not extra:
        return base
    return "[] {\n    EinsumOptions o = " + base + ";\n    " + "\n    ".join(extra) + "\n    return o;\n  }()"


def einsum_context(spec: OpSpec, suffix: str = "") -> dict:
    """What one einsum rule (an entry, or one of its variants) needs: notation, options, edits."""
    unreturned = set(spec.raw.get("unreturned") or [])
    return {"rule_fn": f"{spec.op}_rule{suffix}", "notation": spec.raw["einsum"], "options": einsum_options(spec),
            "setup": einsum_setup(spec), "count_setup": count_setup(spec),
            "bound": [(i, t) for i, t in enumerate(spec.inputs) if t.name not in unreturned]}


def op_context(spec: OpSpec) -> dict:
    ins = [tensor_param(t) for t in spec.inputs]
    outs = [tensor_param(t, reverse_output=True) for t in spec.outputs]
    attrs = [attr_param(a) for a in spec.attrs]
    fwd_params = ins + attrs
    rev_params = ins + outs + attrs
    ctx = {
        "op": spec.op, "file": spec.file, "kind": spec.kind, "camel": camel(spec.op),
        "aliases": spec.aliases, "fwd_params": fwd_params, "rev_params": rev_params,
        "inputs": spec.inputs, "outputs": spec.outputs, "attrs": spec.attrs, "raw": spec.raw,
        "second": spec.second if isinstance(spec.second, str) else "grad",
        "empty_params": [dict(p, kind="kOptionalTensor") if p["kind"] == "kTensor" else p for p in rev_params],
        "grad_op": spec.second[1] if isinstance(spec.second, tuple) else "",
        "grad_of": spec.grad_of, "handwritten": spec.kind == "cpp",
    }
    if spec.kind == "einsum":
        ctx["notation"] = spec.raw["einsum"]
        ctx["options"] = einsum_options(spec)
        ctx["setup"] = einsum_setup(spec)
        ctx["count_setup"] = count_setup(spec)
        ctx["rule"] = einsum_context(spec)
        ctx["variants"] = [dict(einsum_context(v["spec"], f"_v{i}"), when=v["when"])
                           for i, v in enumerate(spec.variants)]
    elif spec.kind == "dim_trans":
        ctx["builder"] = spec.extra["builder"]
        ctx["builder_args"] = spec.extra["builder_args"]
    else:
        ctx["cpp"] = spec.raw["cpp"]
    return ctx


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["camel"] = camel
    return env


def render(specs: list[OpSpec]) -> dict[str, str]:
    """File name -> content of every generated file."""
    env = _env()
    by_file: dict[str, list[OpSpec]] = {}
    for s in specs:
        by_file.setdefault(s.file, []).append(s)
    out: dict[str, str] = {}
    families = []
    for file, group in by_file.items():
        family = Path(file).stem
        families.append(family)
        out[f"rules_{family}.cc"] = env.get_template("rules.cc.j2").render(
            family=family, file=file, ops=[op_context(s) for s in group])
    out["generated_rules.h"] = env.get_template("rules.h.j2").render(ops=[op_context(s) for s in specs])
    out["register_rules.cc"] = env.get_template("register.cc.j2").render(families=families)
    return out


def write(specs: list[OpSpec], out_dir: Path) -> list[Path]:
    """Writes the generated files; a file whose content is unchanged is left alone (no rebuild)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    files = render(specs)
    for name, text in files.items():
        path = out_dir / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        written.append(path)
    for stale in out_dir.glob("rules_*.cc"):
        if stale.name not in files:
            stale.unlink()
    return written
