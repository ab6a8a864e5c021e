"""The ops as the YAML specs describe them, reduced to what verification needs.

The directory is found the same way from the source tree and from an installed package
(where the build puts it at spmdkit/rules_yaml); SPMDKIT_RULES_YAML overrides both.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml


def rules_dir() -> Path:
    env = os.environ.get("SPMDKIT_RULES_YAML")
    here = Path(__file__).resolve().parent
    candidates = ([Path(env)] if env else []) + [
        here.parent / "rules_yaml",                 # installed: spmdkit/rules_yaml
        here.parent.parent.parent / "rules_yaml",   # source tree: python/spmdkit/verify -> repo
    ]
    for c in candidates:
        if c.is_dir() and any(c.glob("*.yaml")):
            return c
    raise FileNotFoundError("rules_yaml not found (looked in: " + ", ".join(map(str, candidates)) + ")")


@dataclass(frozen=True)
class InputDecl:
    name: str
    optional: bool = False
    is_list: bool = False

    @staticmethod
    def parse(text: str) -> "InputDecl":
        return InputDecl(text.rstrip("?[]"), optional=text.endswith("?"), is_list=text.endswith("[]"))


@dataclass(frozen=True)
class AttrDecl:
    name: str
    type: str
    has_default: bool
    default: object = None

    @staticmethod
    def parse(name: str, text) -> "AttrDecl":
        typ, eq, default = str(text).partition("=")
        value = yaml.safe_load(default.strip()) if eq else None
        return AttrDecl(name, typ.strip(), bool(eq), value)


@dataclass
class OpSpec:
    name: str
    aliases: list[str]
    inputs: list[InputDecl]
    outputs: list[str]
    attrs: list[AttrDecl]
    second: str                    # "reverse" | "grad" | "none"
    grad_op: str | None            # the grad entry when second == "grad"
    kernel: str | None
    sampler: str | None
    local_attrs: dict[str, str] = field(default_factory=dict)
    source: str = ""
    draws: int = 1                 # independent random inputs a claim must hold on
    forward_outputs: bool = False  # the forward function takes the outputs too (generic rules)
    flat_results: bool = False     # list arguments come back one entry per tensor

    @property
    def list_output(self) -> bool:
        """One output argument that is a list: every output tensor is an element of it."""
        return len(self.outputs) == 1 and self.outputs[0].endswith("[]")

    def output_name(self, k: int) -> str:
        """The name of the k-th output tensor (an element of a list output is `name[k]`)."""
        if self.list_output:
            return f"{self.outputs[0][:-2]}[{k}]"
        return self.outputs[k] if k < len(self.outputs) else f"output {k}"
    unreturned: tuple[int, ...] = ()  # input positions the rule takes but does not return

    @property
    def input_names(self) -> list[str]:
        return [i.name for i in self.inputs]

    @property
    def attr_names(self) -> list[str]:
        return [a.name for a in self.attrs]


def _parse(entry: dict, source: str) -> OpSpec:
    second = entry.get("second", "reverse")
    grad_op = second.get("grad") if isinstance(second, dict) else None
    verify = entry.get("verify") or {}
    return OpSpec(
        name=entry["op"], aliases=list(entry.get("aliases", [])),
        inputs=[InputDecl.parse(i) for i in entry.get("inputs", [])],
        outputs=list(entry.get("outputs", [])),
        attrs=[AttrDecl.parse(k, v) for k, v in (entry.get("attrs") or {}).items()],
        second="grad" if grad_op else str(second), grad_op=grad_op,
        kernel=verify.get("kernel"), sampler=verify.get("sampler"),
        local_attrs=dict(verify.get("local_attrs") or {}), source=source,
        draws=int(verify.get("draws", 1)), forward_outputs=bool(entry.get("forward_outputs")),
        flat_results=entry.get("results") == "flat",
        unreturned=tuple(i for i, d in enumerate(entry.get("inputs", [])) if d.rstrip("?[]") in
                         set(entry.get("unreturned") or [])))


@lru_cache(maxsize=None)
def load_specs(directory: str | None = None) -> dict[str, OpSpec]:
    root = Path(directory) if directory else rules_dir()
    specs: dict[str, OpSpec] = {}
    for path in sorted(root.glob("*.yaml")):
        for entry in yaml.safe_load(path.read_text()) or []:
            specs[entry["op"]] = _parse(entry, f"{path.name}: {entry['op']}")
    return specs


def grad_entries(specs: dict[str, OpSpec]) -> set[str]:
    return {s.grad_op for s in specs.values() if s.grad_op}


def verifiable_ops(specs: dict[str, OpSpec]) -> list[str]:
    """Ops verified on their own: those with a kernel and a sampler that are not some other
    op's grad entry (a grad entry is proved through its forward op's second function)."""
    grads = grad_entries(specs)
    return [n for n, s in specs.items() if s.kernel and s.sampler and n not in grads]


def resolve(name: str, specs: dict[str, OpSpec]) -> OpSpec:
    if name in specs:
        return specs[name]
    for s in specs.values():
        if name in s.aliases:
            return s
    raise KeyError(f"no op or alias named {name!r} in {rules_dir()}")
