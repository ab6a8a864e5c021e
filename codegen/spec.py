"""Load and check the op specs in rules_yaml/. Every error names the YAML file and the entry."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from . import notation as notation_mod
from . import when as when_mod
from .errors import SpecError  # noqa: F401  (also importable from here, as before)

SCHEMA = json.loads((Path(__file__).parent / "schema.json").read_text())

ATTR_TYPES = ("bool", "int", "int64", "float", "str", "dtype", "int[]", "int64[]", "float[]", "bool[]")
_MISSING = object()


@dataclass
class Attr:
    name: str
    type: str
    default: Any = _MISSING

    @property
    def has_default(self) -> bool:
        return self.default is not _MISSING


@dataclass
class TensorArg:
    name: str
    optional: bool = False
    is_list: bool = False


@dataclass
class OpSpec:
    file: str                  # "rules_yaml/matmul.yaml"
    op: str
    aliases: list[str]
    inputs: list[TensorArg]
    outputs: list[TensorArg]
    attrs: list[Attr]
    raw: dict
    kind: str                  # "einsum" | "dim_trans" | "cpp"
    second: str | tuple        # "reverse" | "none" | ("grad", op)
    notation: notation_mod.Notation | None = None
    grad_of: str = ""          # set on grad entries that another op names
    extra: dict = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.file}: entry '{self.op}'"

    def attr(self, name: str) -> Attr | None:
        return next((a for a in self.attrs if a.name == name), None)

    def input_index(self, name: str) -> int | None:
        return next((i for i, t in enumerate(self.inputs) if t.name == name), None)


def _parse_value(text: str, type_: str, where: str):
    text = text.strip()
    try:
        if type_ == "bool":
            if text.lower() not in ("true", "false"):
                raise ValueError
            return text.lower() == "true"
        if type_ in ("int", "int64"):
            return int(text)
        if type_ == "float":
            return float(text)
        if type_ in ("str", "dtype"):
            return text.strip("\"'")
        if type_.endswith("[]"):
            v = yaml.safe_load(text)
            if not isinstance(v, list):
                raise ValueError
            return v
    except ValueError:
        pass
    raise SpecError(f"{where}: default '{text}' is not a valid {type_}")


def _parse_attr(name: str, decl: Any, where: str) -> Attr:
    if not isinstance(decl, str):
        raise SpecError(f"{where}: attribute '{name}' must be declared as 'TYPE' or 'TYPE = DEFAULT'")
    type_, _, default = decl.partition("=")
    type_ = type_.strip()
    if type_ not in ATTR_TYPES:
        raise SpecError(f"{where}: attribute '{name}' has unknown type '{type_}' (one of {', '.join(ATTR_TYPES)})")
    if not default.strip():
        return Attr(name, type_)
    return Attr(name, type_, _parse_value(default, type_, f"{where}: attribute '{name}'"))


def _parse_tensor(decl: str) -> TensorArg:
    if decl.endswith("?"):
        return TensorArg(decl[:-1], optional=True)
    if decl.endswith("[]"):
        return TensorArg(decl[:-2], is_list=True)
    return TensorArg(decl)


def _check_schema(entry: Any, where: str) -> None:
    if not isinstance(entry, dict):
        raise SpecError(f"{where}: an entry must be a mapping")
    errors = sorted(jsonschema.Draft202012Validator(SCHEMA).iter_errors(entry), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        path = "/".join(str(p) for p in e.path) or "(entry)"
        msg = e.message
        if e.validator == "oneOf" and not e.path:
            msg = "needs exactly one of 'einsum', 'dim_trans' or 'cpp' (with 'why')"
        raise SpecError(f"{where}: {path}: {msg}")


def load_entry(entry: dict, file: str, index: int) -> OpSpec:
    name = entry.get("op") if isinstance(entry, dict) else None
    where = f"{file}: entry '{name}'" if name else f"{file}: entry #{index}"
    _check_schema(entry, where)
    attrs = [_parse_attr(n, d, where) for n, d in (entry.get("attrs") or {}).items()]
    seen_default = False
    for a in attrs:
        if a.has_default:
            seen_default = True
        elif seen_default:
            raise SpecError(f"{where}: attribute '{a.name}' has no default but follows one that has")
    inputs = [_parse_tensor(t) for t in entry["inputs"]]
    outputs = [_parse_tensor(t) for t in entry["outputs"]]
    names = [t.name for t in inputs + outputs] + [a.name for a in attrs]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise SpecError(f"{where}: the name '{sorted(dup)[0]}' is used twice")
    kind = "einsum" if "einsum" in entry else "dim_trans" if "dim_trans" in entry else "cpp"
    second = entry.get("second", "reverse")
    if isinstance(second, dict):
        second = ("grad", second["grad"])
    spec = OpSpec(file, entry["op"], list(entry.get("aliases", [])), inputs, outputs, attrs, entry, kind, second)
    if entry.get("when") and kind != "einsum":
        raise SpecError(f"{where}: 'when' needs an 'einsum' entry")
    if kind == "einsum":
        spec.notation = notation_mod.check(spec)
        _check_when(spec)
    elif kind == "dim_trans":
        _check_dim_trans(spec)
    return spec


def _check_when(spec: OpSpec) -> None:
    """Each `when:` variant must be a valid spec once merged into the base entry."""
    from dataclasses import replace
    for _, keys in when_mod.variants(spec):
        merged = dict(spec.raw)
        for key, value in keys.items():
            merged[key] = {**spec.raw[key], **value} if key == "reduce" and spec.raw.get(key) else value
        notation_mod.check(replace(spec, raw=merged))


_DIM_TRANS_BUILDERS = {"reshape": ["int64[]"], "flatten": ["int", "int"], "squeeze": ["int64[]"], "unsqueeze": ["int64[]"],
                       "exact_reshape": ["int64[]"], "jax_reshape": ["int64[]", "int64[]"]}


def _check_dim_trans(spec: OpSpec) -> None:
    m = re.fullmatch(r"([a-z_]+)\(([a-z0-9_, ]*)\)", spec.raw["dim_trans"])
    builder, args = m.group(1), [a.strip() for a in m.group(2).split(",") if a.strip()]
    if builder not in _DIM_TRANS_BUILDERS:
        raise SpecError(f"{spec.where}: dim_trans builder '{builder}' is unknown (one of {', '.join(_DIM_TRANS_BUILDERS)})")
    want = _DIM_TRANS_BUILDERS[builder]
    if len(args) != len(want):
        raise SpecError(f"{spec.where}: dim_trans {builder}() takes {len(want)} attributes, got {len(args)}")
    for a, t in zip(args, want):
        attr = spec.attr(a)
        if attr is None:
            raise SpecError(f"{spec.where}: dim_trans names '{a}', which is not an attribute")
        if (t.endswith("[]")) != attr.type.endswith("[]"):
            raise SpecError(f"{spec.where}: dim_trans {builder}() needs '{a}' of type {t}, it is {attr.type}")
    if [t.name for t in spec.inputs] != ["x"] or len(spec.outputs) != 1:
        raise SpecError(f"{spec.where}: a dim_trans op has one input 'x' and one output")
    spec.extra["builder"], spec.extra["builder_args"] = builder, args


def load_specs(spec_dir: Path) -> list[OpSpec]:
    specs: list[OpSpec] = []
    files = sorted(Path(spec_dir).glob("*.yaml"))
    if not files:
        raise SpecError(f"{spec_dir}: no *.yaml spec files")
    for path in files:
        rel = f"{Path(spec_dir).name}/{path.name}"
        try:
            doc = yaml.safe_load(path.read_text())
        except yaml.YAMLError as e:
            raise SpecError(f"{rel}: not valid YAML: {e}") from None
        if not isinstance(doc, list):
            raise SpecError(f"{rel}: must hold a list of op entries")
        for i, entry in enumerate(doc):
            specs.append(load_entry(entry, rel, i))
    _check_names(specs)
    return specs


def _check_names(specs: list[OpSpec]) -> None:
    owner: dict[str, OpSpec] = {}
    for s in specs:
        for n in [s.op, *s.aliases]:
            if n in owner:
                raise SpecError(f"{s.where}: the name '{n}' is already taken by {owner[n].where}")
            owner[n] = s
    by_op = {s.op: s for s in specs}
    for s in specs:
        if isinstance(s.second, tuple):
            g = by_op.get(s.second[1])
            if g is None:
                raise SpecError(f"{s.where}: second names grad entry '{s.second[1]}', which does not exist")
            g.grad_of = s.op
