"""Turn checked specs into C++: one source file per spec file, one header, one registration."""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import jinja2

from . import when
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
WHOLE_OPTIONS = ("empty", "keep", "per_dim", "align", "lead", "keep_size")
COUNT_DIM = re.compile(r"([a-z_][a-z0-9_]*)\[([a-z_][a-z0-9_]*)\]")
COUNT_LEN = re.compile(r"len\(([a-z_][a-z0-9_]*)\)")
MERGE = {"coshard": "kCoShard", "legacy": "kLegacy", "matmul": "kMatmul", "align": "kAlign"}
ONES = {"clear": "kClear", "keep": "kKeep", "broadcast": "kBroadcast"}
GROUP_FROM_DIM = re.compile(r"([a-z_][a-z0-9_]*)\.shape\[(-?\d+)\]")
REDUCE = {"sum": "kSum", "max": "kMax", "min": "kMin", "prod": "kProd", "avg": "kAvg", "any": "kAny", "all": "kAll"}


def ident(op: str) -> str:
    """A C++ identifier for a registry name (jax.scatter-add -> jax_scatter_add)."""
    return re.sub(r"[^a-z0-9_]", "_", op)


def camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in ident(name).split("_"))


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
    kind = "kOutputTensor" if reverse_output else "kOptionalTensor" if t.optional else "kTensor"
    return {"name": t.name, "cpp": "const DistMetaTensor&", "kind": kind, "field": "*a[{i}].tensor", "default": None}


def attr_param(a: Attr) -> dict:
    return {"name": a.name, "cpp": f"{CPP_TYPE[a.type]}", "kind": ARG_KIND[a.type], "field": ARG_FIELD[a.type],
            "default": default_arg(a) if a.has_default else None}


def _groups(spec: OpSpec, value) -> list[str]:
    lines = []
    for g, attr in (value or {}).items():
        dim = GROUP_FROM_DIM.fullmatch(attr)
        if dim:  # the length is one dim of a tensor: "index.shape[-1]"
            t, d = dim.group(1), int(dim.group(2))
            lines.append(f'call.group_length(\'{g}\', group_length_from_dim(rule.op, "{t}", {t}, {d}));')
            continue
        owner = next(t for t, p in zip(spec.inputs, spec.notation.inputs) if g in p)
        lines.append(f'call.group_length(\'{g}\', group_length_from_attr(rule.op, "{attr}", {attr}, {owner.name}));')
    return lines


def _transpose(spec: OpSpec, value) -> list[str]:
    return [f"call.transpose({spec.input_index(t)}, {attr});" for t, attr in (value or {}).items()]


def _replicate(spec: OpSpec, value) -> list[str]:
    lines = []
    if isinstance(value, dict):
        for t, attr in value.items():
            if isinstance(attr, list):  # literal axes
                axes = ", ".join(str(int(a)) for a in attr)
                lines.append(f'static const std::vector<int64_t> kReplicated{spec.input_index(t)} = {{{axes}}};')
                lines.append(f'call.replicate({spec.input_index(t)}, kReplicated{spec.input_index(t)}, "{t} dims");')
            else:
                lines.append(f'call.replicate({spec.input_index(t)}, {attr}, "{attr}");')
    elif isinstance(value, list):
        lines += [f"call.replicate_letter('{letter}');" for letter in value]
    return lines


REDUCE_OPTIONS = ("keep_dim", "partial", "empty", "squeeze")


def _reduce_tensor(red: dict) -> str:
    return next(k for k in red if k not in REDUCE_OPTIONS)


def _reduce_type(p: str) -> tuple[str, str]:
    """(C++ reduce type, C++ whole flag) for a `partial:` value."""
    if p == "none":
        return "ReduceType::kSum", "true"
    if p in REDUCE:
        return f"ReduceType::{REDUCE[p]}", "false"
    return f'reduce_type_from_attr(rule.op, "{p}", {p})', "false"


def _reduce(spec: OpSpec, value, overrides=()) -> list[str]:
    """The reduce edit; `when` variants merge into it sub-key by sub-key."""
    if not value:
        return []
    t = _reduce_tensor(value)
    sub = lambda key, default: when.chain(value.get(key, default), [(c, o[key]) for c, o in overrides if key in o])  # noqa: E731
    axes = sub(t, None)
    keep = when.ternary(sub("keep_dim", "false"))
    parts = [(c, _reduce_type(p)) for c, p in sub("partial", "sum")]
    lines = []
    if len(parts) == 1:
        rtype, whole = parts[0][1]
    else:  # the reduce type varies: choose it once, readably
        rtype, whole = "reduce_type", "whole"
        lines += [f"ReduceType reduce_type = {parts[-1][1][0]};", f"bool whole = {parts[-1][1][1]};"]
        lines += _assignments(parts[:-1])
    name = value[t]
    empty_none = value.get("empty") == "none"  # an empty axis list reduces nothing (not every dim)
    cases = []
    for cond, axis in axes:
        arg = "every_dim()" if axis == "all" else axis
        tail = "" if whole == "false" and not empty_none else f", /*whole=*/{whole}"
        if empty_none and axis != "all":
            tail += ", /*empty_all=*/false"
        if value.get("squeeze"):  # the named dims must have size 1 (slice's decrease_axis)
            tail += ", /*squeeze=*/true" if "empty_all" in tail else ", /*empty_all=*/true, /*squeeze=*/true"
        cases.append((cond, [f'call.reduce({spec.input_index(t)}, {arg}, {keep}, {rtype}, "{name}"{tail});']))
    return lines + when.branch(cases)


def _assignments(parts) -> list[str]:
    """if / else if chain setting reduce_type and whole (no final else: the defaults stand)."""
    lines = []
    for k, (cond, (rtype, whole)) in enumerate(parts):
        lines.append(("if (" if k == 0 else "} else if (") + cond + ") {")
        lines += [f"  reduce_type = {rtype};", f"  whole = {whole};"]
    return lines + ["}"]


def _whole(spec: OpSpec, value) -> list[str]:
    if not value:
        return []
    t = next(k for k in value if k not in WHOLE_OPTIONS)
    i, attr = spec.input_index(t), value[t]
    if "keep" in value:
        return [f'call.whole_values({i}, {attr}, {int(value["keep"])}, {int(value.get("per_dim", 1))}, '
                f'/*align_end=*/{"true" if value.get("align") == "end" else "false"}, '
                f'/*lead=*/{"true" if value.get("lead") else "false"}, "{attr}"'
                + (', /*keep_size=*/true);' if value.get("keep_size") else ");")]
    if spec.attr(attr).type.endswith("[]"):
        return [f'call.whole_axes({i}, {attr}, /*empty_all=*/{"true" if value.get("empty") == "all" else "false"}, '
                f'"{attr}");']
    return [f'call.whole_axes({i}, static_cast<int64_t>({attr}), "{attr}");']


def _unbroadcast(spec: OpSpec, value) -> list[str]:
    lines = []
    for out, t in (value or {}).items():
        j = next(k for k, o in enumerate(spec.outputs) if o.name == out)
        lines.append(f"call.unbroadcast({j}, {spec.input_index(t)});")
    return lines


def _unsplit(spec: OpSpec, value) -> list[str]:
    return [f"call.unsplit_if_split('{letter}', '{trigger}');" for letter, trigger in (value or {}).items()]


def _replicate_after_merge(spec: OpSpec, value) -> list[str]:  # claims mesh dims, then is made whole
    return [f"call.unsplit_if_split('{letter}', '{letter}');" for letter in value or []]


def _equation(spec: OpSpec, value) -> list[str]:
    return [f'call.equation({value}, "{value}");'] if value else []


def _like(spec: OpSpec, value) -> list[str]:
    outputs = [o.name for o in spec.outputs]
    return [f"call.like({outputs.index(out)}, {spec.input_index(inp)});" for out, inp in (value or {}).items()]


def _workspace(spec: OpSpec, value) -> list[str]:
    outputs = [o.name for o in spec.outputs]
    return [f"call.workspace({outputs.index(out)});" for out in value or []]


def _accumulate(spec: OpSpec, value) -> list[str]:
    outputs = [o.name for o in spec.outputs]
    return [f"call.accumulate({spec.input_index(inp)}, {outputs.index(out)});" for inp, out in (value or {}).items()]


def _insert_dim(spec: OpSpec, value) -> list[str]:
    return [f'call.insert_dim({spec.input_index(t)}, {attr}, "{attr}");' for t, attr in (value or {}).items()]


def _permute(spec: OpSpec, value) -> list[str]:
    return [f'call.permute({spec.input_index(t)}, {attr}, "{attr}");' for t, attr in (value or {}).items()]


PATTERNS = re.compile(r"([a-z_]+)\((.*)\)")


def _patterns(spec: OpSpec, value) -> list[str]:
    """A pattern builder (spmd_rules/pattern_builders.h) shapes the '*' / '@' patterns per call."""
    if not value:
        return []
    name, args = PATTERNS.fullmatch(value.replace(" ", "")).groups()
    args = [a for a in args.split(",") if a]
    attrs = [a for a in args if spec.attr(a) is not None]
    return ["PatternPlan plan;", f"{name}_patterns(plan, rule.op{''.join(', ' + a for a in args)});",
            f'plan.apply(call, "{attrs[0] if attrs else name}");']


def _choices(spec: OpSpec, value) -> list[str]:
    """A str attribute that must be one of a few words (stablehlo.reduce's body): else ValueError."""
    return [f'check_choice(rule.op, "{a}", {a}, {{{", ".join(cpp_literal(w, "str") for w in words)}}});'
            for a, words in (value or {}).items()]


# The attribute edits, in the order the engine receives them.
EDITS = (("choices", _choices), ("patterns", _patterns), ("groups", _groups), ("transpose", _transpose), ("replicate", _replicate), ("reduce", _reduce),
         ("whole", _whole), ("unbroadcast", _unbroadcast), ("insert_dim", _insert_dim), ("permute", _permute),
         ("unsplit_if_split", _unsplit), ("replicate_after_merge", _replicate_after_merge), ("equation", _equation),
         ("like", _like), ("workspace", _workspace), ("accumulate", _accumulate))


def einsum_setup(spec: OpSpec) -> list[str]:
    """The EinsumCall edits an op's attributes ask for, as C++ statements (branching per call
    where `when:` variants change them)."""
    variants = when.variants(spec)
    lines = []
    for key, emit in EDITS:
        base = spec.raw.get(key)
        overrides = [(c, keys[key]) for c, keys in variants if key in keys]
        if key == "reduce" and base:
            lines += _reduce(spec, base, overrides)
        elif overrides:
            lines += when.branch([(c, emit(spec, v)) for c, v in when.chain(base, overrides)])
        else:
            lines += emit(spec, base)
    return lines


def einsum_rules(spec: OpSpec) -> tuple[list[dict], str]:
    """The static rules an op needs (its own, and one per `when` variant that sets a rule key:
    `einsum`, `sources`) and the C++ expression that picks one per call (the last variant that
    holds wins)."""
    def rule(raw: dict, name: str) -> dict:
        return {"name": name, "notation": raw["einsum"], "options": einsum_options(replace(spec, raw=raw))}

    rules, cases = [rule(spec.raw, f"{ident(spec.op)}_rule")], []
    for cond, keys in when.variants(spec):
        own = {k: v for k, v in keys.items() if k in when.RULE_KEYS}
        if not own:
            continue
        r = rule({**spec.raw, **own}, f"{ident(spec.op)}_rule_{len(rules)}")
        same = next((x for x in rules if (x["notation"], x["options"]) == (r["notation"], r["options"])), None)
        if same is None:
            rules.append(r)
        cases.append((cond, (same or r)["name"] + "()"))
    return rules, when.ternary(when.chain(rules[0]["name"] + "()", cases))


def count_setup(spec: OpSpec) -> list[str]:
    """Forward only: how many tensors each list output holds."""
    lines = []
    for t, attr in (spec.raw.get("count") or {}).items():
        j = next(i for i, o in enumerate(spec.outputs) if o.name == t)
        m = COUNT_DIM.fullmatch(attr)
        n_of = COUNT_LEN.fullmatch(attr)
        if n_of:  # "len(xs)": as many outputs as list input xs has tensors
            attr = n_of.group(1)
            n = f"static_cast<int64_t>({attr}.size())"
        elif m:  # "x[axis]": the size of x's dim that the axis attribute names (unbind)
            tensor, axis = m.groups()
            n = f'dim_size_from_attr(rule.op, "{axis}", {axis}, {tensor})'
            attr = axis
        else:
            n = f"static_cast<int64_t>({attr}.size())" if spec.attr(attr).type.endswith("[]") else attr
        lines.append(f'call.output_count({j}, {n}, "{attr}");')
    for attr, where in (spec.raw.get("sizes") or {}).items():  # "x[axis]": the sizes add up to that dim
        tensor, axis = COUNT_DIM.fullmatch(where).groups()
        lines.append(f'check_section_sizes(rule.op, "{attr}", {attr}, "{axis}", {axis}, {tensor});')
    return lines


KEEP_PARTIAL = {True: "kAll", "forward": "kAll", "joint": "kJoint", "first": "kFirst"}


def einsum_options(spec: OpSpec) -> list[str]:
    """The rule's EinsumOptions that differ from the defaults, as field assignments."""
    raw, fields = spec.raw, []
    if raw.get("partial", "sum") != "sum":
        fields.append(f"o.partial = ReduceType::{REDUCE[raw['partial']]};")
    if raw.get("merge", "coshard") != "coshard":
        fields.append(f"o.merge = Merge::{MERGE[raw['merge']]};")
    if raw.get("ones", "clear") != "clear":
        fields.append(f"o.ones = Ones::{ONES[raw['ones']]};")
    if not raw.get("divisible", True):
        fields.append("o.divisible = false;")
    if raw.get("keep_partial") in KEEP_PARTIAL:
        fields.append(f"o.keep_partial = KeepPartial::{KEEP_PARTIAL[raw['keep_partial']]};")
    sources = raw.get("sources")
    if sources:
        fields.append("o.sources = " + " | ".join(f"(1u << {spec.input_index(t)})" for t in sources) + ";")
        order = [spec.input_index(t) for t in sources]
        if order != sorted(order):  # listed out of argument order: merged in the listed order
            fields.append(f"o.source_count = {len(order)};")
            fields.append(f"o.source_order = {sum(i << (4 * n) for n, i in enumerate(order))}u;")
    if raw.get("reverse_replicated_claim"):
        fields.append("o.reverse_replicated_claim = true;")
    if raw.get("flat_outputs") or raw.get("results") == "flat":
        fields.append("o.flat_list_outputs = true;")
    if raw.get("results") == "flat":
        fields.append("o.flat_list_inputs = true;")
    if raw.get("absent") == "replicated":
        fields.append("o.absent_replicated = true;")
    depends = raw.get("depends")
    if depends:  # per output, a bit per input argument it is computed from
        masks = []
        for o in spec.outputs:
            names = depends.get(o.name)
            masks.append("~0u" if names is None else " | ".join(f"(1u << {spec.input_index(t)})" for t in names) or "0u")
        fields.append(f"o.depends = {{{', '.join(masks)}}};")
    if raw.get("conflict") == "first":
        fields.append("o.conflict_first = true;")
    if raw.get("mismatch") == "replicate":
        fields.append("o.mismatch_replicated = true;")
    if raw.get("replicated_claim"):
        fields.append("o.replicated_claim = true;")
    if raw.get("contraction") == "per_output":
        fields.append("o.per_output_partial = true;")
    if raw.get("no_partial"):
        fields.append("o.no_partial_letters = " + " | ".join(f"(1u << ('{c}' - 'a'))" for c in raw["no_partial"]) + ";")
    if raw.get("outer") == "first_split":
        fields.append("o.outer_first_split = true;")
    if raw.get("reverse_sources"):
        outs = [o.name for o in spec.outputs]
        fields += [f"o.reverse_sources[{i}] = {outs.index(t) + 1};" for i, t in enumerate(raw["reverse_sources"])]
    flat = raw.get("flattened") or []  # tensors that may be given with one dim: their pattern flattened
    ins = [spec.input_index(t) for t in flat if t in [i.name for i in spec.inputs]]
    outs = [[o.name for o in spec.outputs].index(t) for t in flat if t in [o.name for o in spec.outputs]]
    if ins:
        fields.append("o.flat_inputs = " + " | ".join(f"(1u << {i})" for i in ins) + ";")
    if outs:
        fields.append("o.flat_outputs = " + " | ".join(f"(1u << {i})" for i in outs) + ";")
    if raw.get("unreturned"):
        fields.append("o.unreturned = " + " | ".join(f"(1u << {spec.input_index(t)})" for t in raw["unreturned"]) + ";")
    return fields


def op_context(spec: OpSpec) -> dict:
    ins = [tensor_param(t) for t in spec.inputs]
    outs = [tensor_param(t, reverse_output=True) for t in spec.outputs]
    attrs = [attr_param(a) for a in spec.attrs]
    fwd_params = ins + (outs if spec.raw.get("forward_outputs") else []) + attrs
    rev_params = ins + outs + attrs
    ctx = {
        "op": spec.op, "ident": ident(spec.op), "file": spec.file, "kind": spec.kind, "camel": camel(spec.op),
        "aliases": spec.aliases, "fwd_params": fwd_params, "rev_params": rev_params,
        "inputs": spec.inputs, "outputs": spec.outputs, "attrs": spec.attrs, "raw": spec.raw,
        "second": spec.second if isinstance(spec.second, str) else "grad",
        "empty_params": [dict(p, kind="kOptionalTensor") if p["kind"] == "kTensor" else p for p in rev_params],
        "grad_op": spec.second[1] if isinstance(spec.second, tuple) else "",
        "grad_of": spec.grad_of, "handwritten": spec.kind == "cpp",
        "forward_outputs": bool(spec.raw.get("forward_outputs")),
    }
    if spec.kind == "einsum":
        unreturned = set(spec.raw.get("unreturned") or [])
        ctx["rules"], ctx["rule_expr"] = einsum_rules(spec)
        ctx["setup"] = einsum_setup(spec)
        ctx["count_setup"] = count_setup(spec)
        ctx["bound"] = [(i, t) for i, t in enumerate(spec.inputs) if t.name not in unreturned]
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
