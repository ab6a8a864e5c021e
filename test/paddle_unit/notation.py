"""The case form of PaddlePaddle's rule unit tests (test/auto_parallel/spmd_rules/test_*_rule.py).

Each case is one `infer_forward`/`infer_backward` call of a Paddle test, written as facts:

    Case("test_c_embedding_rule", "c_embedding", "fwd", (2, 4),
         ["[512,768]{-1,-1}", "[4,1024]{1,-1}", 0, -1],
         ins=["{-1,-1}", "{1,-1}"], outs=["{1,-1,-1}p{1}"])

A tensor argument is "[shape]{mapping}" with an optional "p{mesh dims}" (partial, sum); without
"{mapping}" the spec's dist attr is left at its default (Paddle's tests build output specs that
way); "copy:" in front builds the spec as Paddle's reverse tests do, by copy-constructing a
replicated spec of that shape and then calling set_dims_mapping; "bare:" gives it an empty
TensorDistAttr() (no mesh: Paddle's tests mark an absent optional input so). A Python list of such strings is
a tensor-list argument; anything else is an attribute, passed as is.

An expected layout is "{mapping}" (dims mapping only), "{mapping}p{0,1}" (and exactly those
partial mesh dims) or "{mapping}p{}" (and not partial); None is not checked; a list is a
tensor-list result.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

_TENSOR = re.compile(r"^(copy:|bare:)?\[([-\d,\s]*)\](?:\{([-\d,\s\[\]]*)\})?(?:p\{([\d,\s]*)\})?$")
_LAYOUT = re.compile(r"^\{([-\d,\s\[\]]*)\}(?:p\{([\d,\s]*)\})?$")


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v.strip()]


def _multi(text: str) -> list[list[int]] | None:
    """A mapping with a dim split over several mesh dims, "[0,1],-1" (None: a plain mapping)."""
    if "[" not in text:
        return None
    dims = re.findall(r"\[[\d,\s]*\]|-?\d+", text)
    return [_ints(d.strip("[]")) if d.startswith("[") else ([] if int(d) == -1 else [int(d)]) for d in dims]


@dataclass
class Case:
    file: str                   # the Paddle test module, e.g. "test_slice_rule"
    op: str
    fn: str                     # "fwd" | "bwd"
    mesh: tuple                 # mesh shape; process ids are 0..n-1 in order
    args: list
    ins: list | None = None     # expected input layouts (None: not checked)
    outs: list | None = None    # expected output layouts
    paddle: str = "agree"       # "agree" | "skip: why" (Paddle not called, e.g. it fails that test too)
    xfail: str | None = None    # a known gap owned elsewhere (strict xfail)
    raises: bool = False        # the call must be refused (Paddle's assertRaises)
    note: str = ""              # where the case departs from the Paddle test's literal call, why
    # A documented difference: Paddle's expected answer is wrong by execution (or the call is
    # one the kernel refuses); `ours` is spmdkit's answer, (ins, outs) or "raises".
    differs: str | None = None
    ours: tuple | str | None = None
    bad_input: str | None = None  # the given tensor whose layout is invalid (spmdkit refuses it)
    proof_shapes: dict = field(default_factory=dict)  # smaller stand-ins for the proof: "[8,1024,50304]" -> "[8,4,6]"
    int_inputs: dict = field(default_factory=dict)  # for the proof: input position -> ids are in [0, value)
    convention: bool = False     # the difference is only how an absent input is given: Paddle,
                                 # handed the absent input as "[]{}" (mesh, no dims), answers `ours`
    both_right: bool = False     # a policy difference: both answers execute right (a newer Paddle
                                 # co-shards where spmdkit, like Paddle 3.3.1, keeps the first split)
    kernel_refuses: bool = False  # the op's kernel refuses the test's shapes and attributes, so
                                  # no answer can be executed (Paddle answers an invalid call)
    kwargs: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.file}:{self.op}.{self.fn}"


EMPTY = "DistTensorSpec()"   # an argument: the empty spec; an expected layout: the empty TensorDistAttr()


class DType(str):
    """A dtype attribute: passed to Paddle as its dtype object (paddle.int64), to spmdkit as is."""


def is_tensor_text(arg) -> bool:
    return isinstance(arg, str) and _TENSOR.match(arg.replace(" ", "")) is not None


def is_tensor_list(arg) -> bool:
    return isinstance(arg, list) and bool(arg) and all(is_tensor_text(t) for t in arg)


class Api:
    """Builds specs and reads results through one implementation of Paddle's rule API."""

    def __init__(self, core, ProcessMesh, TensorDistAttr, DistTensorSpec, dtype=str):
        self.core, self.ProcessMesh, self.TensorDistAttr, self.DistTensorSpec = core, ProcessMesh, TensorDistAttr, DistTensorSpec
        self.dtype = dtype

    def mesh(self, shape):
        return self.ProcessMesh(np.arange(int(np.prod(shape))).reshape(shape).tolist())

    def tensor(self, text: str, mesh):
        copy, shape, mapping, partial = _TENSOR.match(text.replace(" ", "")).groups()
        shape = _ints(shape)
        attr = self.TensorDistAttr()
        if copy == "bare:":  # a spec whose dist attr is left empty: no mesh, no mapping
            return self.DistTensorSpec(shape, attr)
        attr.process_mesh = mesh
        if copy:
            attr.dims_mapping = [-1] * len(shape)
            spec = self.DistTensorSpec(self.DistTensorSpec(shape, attr))
            spec.set_dims_mapping(_ints(mapping or ""))
            if partial is not None:
                raise ValueError(f"{text}: a copied spec cannot be partial here")
            return spec
        if partial:  # before the mapping, as Paddle's tests do (a split mesh dim may be partial too)
            attr._set_partial_dims(_ints(partial))
        if mapping is not None and _multi(mapping) is not None:
            attr.multi_dims_mapping = _multi(mapping)
            return self.DistTensorSpec(shape, attr)
        spec = self.DistTensorSpec(shape, attr)
        if mapping is not None:
            spec.set_dims_mapping(_ints(mapping))
        return spec

    def arg(self, a, mesh):
        if a == EMPTY:  # DistTensorSpec(): an absent optional input, as Paddle's tests pass one
            return self.DistTensorSpec()
        if is_tensor_text(a):
            return self.tensor(a, mesh)
        if is_tensor_list(a):
            return [self.tensor(t, mesh) for t in a]
        if isinstance(a, DType):
            return self.dtype(a)
        return a

    def call(self, case: Case):
        mesh = self.mesh(case.mesh)
        rule = self.core.get_phi_spmd_rule(case.op)
        args = [self.arg(a, mesh) for a in case.args]
        fn = rule.infer_forward if case.fn == "fwd" else rule.infer_backward
        return fn(*args, **case.kwargs)


def mismatches(expected, got, where: str) -> list[str]:
    """What differs between expected layouts and the attrs a rule returned (empty: all match)."""
    if expected is None:
        return []
    if len(expected) != len(got):
        return [f"{where}: {len(got)} results, expected {len(expected)}"]
    bad = []
    for i, (e, g) in enumerate(zip(expected, got)):
        if e is None:
            continue
        if isinstance(e, list):
            bad += mismatches(e, list(g), f"{where}[{i}]")
            continue
        if e == EMPTY:
            if list(g.dims_mapping) or g._is_partial():
                bad.append(f"{where}[{i}]: {g}, expected an empty TensorDistAttr()")
            continue
        mapping, partial = _LAYOUT.match(e.replace(" ", "")).groups()
        if _multi(mapping) is not None:
            if [list(d) for d in g.multi_dims_mapping] != _multi(mapping):
                bad.append(f"{where}[{i}]: multi_dims_mapping {g.multi_dims_mapping}, expected {_multi(mapping)}")
        elif list(g.dims_mapping) != _ints(mapping):
            bad.append(f"{where}[{i}]: dims_mapping {list(g.dims_mapping)}, expected {_ints(mapping)}")
        if partial is not None:
            want = set(_ints(partial))
            have = set(g._partial_dims()) if g._is_partial() else set()
            if have != want:
                bad.append(f"{where}[{i}]: partial dims {sorted(have)}, expected {sorted(want)}")
    return bad


def check(case: Case, result, ins=None, outs=None) -> list[str]:
    """Mismatches of a rule's result against the case's expected layouts (or those given)."""
    got_ins, got_outs = result
    ins = case.ins if ins is None else ins
    outs = case.outs if outs is None else outs
    return mismatches(ins, list(got_ins), "inputs") + mismatches(outs, list(got_outs), "outputs")
