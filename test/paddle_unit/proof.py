"""Execution proof of a documented difference: the op's reference kernel runs on simulated
ranks (spmdkit.verify) with the layouts a rule answered; a right answer reproduces the global
result, a wrong one does not."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from spmdkit.verify import Placement, TensorArg, load_specs
from spmdkit.verify.simulate import BadCase, Execution, verify_placements
from spmdkit.verify.specs import resolve

from .notation import _LAYOUT, _TENSOR, EMPTY, Case, _ints, _multi, is_tensor_list, is_tensor_text


@lru_cache(maxsize=1)
def _specs():
    return load_specs()


def _placement(layout: str) -> Placement:
    mapping, partial = _LAYOUT.match(layout.replace(" ", "")).groups()
    dims = _multi(mapping) if _multi(mapping) is not None else _ints(mapping)
    return Placement.make(dims, {d: "sum" for d in _ints(partial or "")})


def _tensor(text: str, stand_ins: dict | None = None) -> TensorArg:
    for big, small in (stand_ins or {}).items():
        if isinstance(small, str):
            text = text.replace(big, small)
    _, shape, mapping, _ = _TENSOR.match(text.replace(" ", "").removeprefix("copy:").removeprefix("bare:")).groups()
    shape = _ints(shape)
    return TensorArg(tuple(shape), Placement.replicated(len(shape)))


def execution_verdict(case: Case, ins: list[str], outs: list[str]) -> str | None:
    """None when executing the op with layouts `ins` -> `outs` is right, else why not."""
    spec = resolve(case.op, _specs())
    if case.fn == "bwd" and spec.second == "grad":  # the second function is the grad's rule
        spec = resolve(spec.grad_op, _specs())
    n = len(spec.inputs)
    tensors = [a for a in case.args if is_tensor_text(a) or is_tensor_list(a) or a == EMPTY]
    inputs = [None if a == EMPTY else _tensor(a, case.proof_shapes) if isinstance(a, str)
              else [_tensor(t, case.proof_shapes) for t in a] for a in tensors[:n]]  # (EMPTY: an absent input)
    for pos, high in case.int_inputs.items():  # index-like inputs hold ids
        ids = lambda t: TensorArg(t.shape, t.placement, int_high=high)  # noqa: E731
        inputs[pos] = [ids(t) for t in inputs[pos]] if isinstance(inputs[pos], list) else ids(inputs[pos])
    attrs = [case.proof_shapes.get(repr(a), a) for a in case.args[len(tensors):]]  # (attribute stand-ins too)
    try:
        ex = Execution(spec, case.mesh, inputs, attrs, np.random.default_rng(0))
    except BadCase as e:
        return str(e)
    given = tensors[n:]  # the outputs the call gives: generic rules' list, reverse rules' tensors
    if given and (spec.forward_outputs or isinstance(given[0], list)):
        given = given[0]  # one list of outputs (generic rules, unbind's reverse)
    if given and spec.second != "grad" or spec.forward_outputs:
        given = [tuple(_tensor(t, case.proof_shapes).shape) for t in given]
        made = [tuple(np.shape(o)) for o in ex.dense[:len(given)]]
        if given != made:
            return f"the kernel rejects the global inputs: its outputs have shapes {made}, the call gives {given}"
    if n == 1 and spec.inputs[0].is_list and ins and isinstance(ins[0], str):
        ins = [ins]  # a rule whose results are flat: its one list input's layouts
    in_p = [_placement(p) if isinstance(p, str) else [_placement(q) for q in p] for p in ins[:n]]
    verdict = verify_placements(ex, in_p, [_placement(p) for p in outs])
    return None if verdict.ok else verdict.reason


def layout_problem(case: Case, text: str) -> str | None:
    """Why a given tensor's layout is invalid on the case's mesh (None: it is valid)."""
    from spmdkit.verify.placement import problem
    _, shape, mapping, partial = _TENSOR.match(text.replace(" ", "")).groups()
    return problem(_placement("{" + (mapping or "") + "}" + (f"p{{{partial}}}" if partial else "")), len(_ints(shape)),
                   case.mesh)
