"""A verification case: global shapes, placements and attributes of one rule call."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .placement import Placement
from .specs import OpSpec


@dataclass(frozen=True)
class TensorArg:
    shape: tuple[int, ...]
    placement: Placement
    int_high: int | None = None   # integer ids in [0, int_high): never split into partial addends

    def with_placement(self, p: Placement) -> "TensorArg":
        return replace(self, placement=p)

    def __str__(self) -> str:
        return f"[{','.join(map(str, self.shape))}]{self.placement}"


# One positional tensor argument: a tensor, a list of tensors (xs[]), or None (absent optional).
Arg = "TensorArg | list[TensorArg] | None"


@dataclass
class Sample:
    """What a sampler returns: the inputs in the op's order, and the attributes it chose
    (by name; the rest are filled from the spec's defaults or drawn by type)."""
    inputs: list
    attrs: dict = field(default_factory=dict)


@dataclass
class Case:
    op: str                         # the spec entry whose kernel executes
    rule: str                       # the registry name called
    function: str                   # "forward" | "reverse" | "grad"
    mesh_shape: tuple[int, ...]
    inputs: list                    # Arg per spec input
    outputs: list                   # TensorArg per output (reverse rules), else []
    attrs: list                     # positional, the spec's order

    def describe(self, spec: OpSpec) -> str:
        args = [f"{d.name}={fmt_arg(a)}" for d, a in zip(spec.inputs, self.inputs)]
        if spec.list_output and self.outputs:
            args.append(f"{spec.outputs[0][:-2]}={fmt_arg(list(self.outputs))}")
        else:
            args += [f"{n}={fmt_arg(a)}" for n, a in zip(spec.outputs, self.outputs)]
        args += [f"{a.name}={v!r}" for a, v in zip(spec.attrs, self.attrs)]
        return f"{self.rule}.{self.function} on mesh {'x'.join(map(str, self.mesh_shape))}: " + ", ".join(args)


def fmt_arg(a) -> str:
    if a is None:
        return "None"
    if isinstance(a, list):
        return "(" + "; ".join(map(str, a)) + ")"
    return str(a)


def fill_attrs(spec: OpSpec, chosen: dict, rng: np.random.Generator) -> list:
    """Positional attribute values: the sampler's choice, else a random bool (both branches
    deserve coverage), else the default."""
    values = []
    for a in spec.attrs:
        if a.name in chosen:
            values.append(chosen[a.name])
        elif a.type == "bool":
            values.append(bool(rng.integers(2)))
        elif a.has_default:
            values.append(a.default)
        else:
            raise ValueError(f"{spec.name}: the sampler gives no value for attribute {a.name!r}")
    return values


def flat_tensors(args: list) -> list[tuple[int, int | None, TensorArg]]:
    """(position, index in a list input or None, tensor) for every tensor present."""
    out = []
    for pos, a in enumerate(args):
        if isinstance(a, list):
            out += [(pos, i, t) for i, t in enumerate(a)]
        elif a is not None:
            out.append((pos, None, a))
    return out


def with_placements(args: list, placements: list) -> list:
    """`args` with each tensor's placement replaced by the matching one in `placements`
    (same nesting; a None placement keeps the tensor absent)."""
    out = []
    for a, p in zip(args, placements):
        if isinstance(a, list):
            out.append([t.with_placement(q) for t, q in zip(a, p)])
        elif a is None:
            out.append(None)
        else:
            out.append(a.with_placement(p))
    return out
