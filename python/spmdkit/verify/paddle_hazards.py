"""Calls that crash PaddlePaddle 3.3.1 or corrupt its heap.

The differential harness and `verify --against-paddle` run Paddle in-process; one of these calls
would take the whole run down (or, worse, corrupt memory and make later answers meaningless), so
the Paddle backend refuses them up front and reports them as rejected. Each entry was found by
running the call under glibc's malloc checker (LD_PRELOAD=libc_malloc_debug.so.0 MALLOC_CHECK_=3).
"""
from __future__ import annotations

from typing import Callable

# rule name -> [(predicate over (function, attrs), what Paddle does)]
HAZARDS: dict[str, list[tuple[Callable[[str, list], bool], str]]] = {
    "cumsum": [(lambda fn, attrs: attrs[0] < 0,
                "CumSumInferSpmd indexes the dims mapping with a negative axis: heap corruption "
                "('free(): invalid pointer'), or an abort for axis -1")],
    "einsum": [(lambda fn, attrs: "->" not in attrs[-1] or attrs[-1].replace(" ", "") == "->",
                "EinsumInferSpmd / EinsumGradInferSpmd read the part after '->' without checking that "
                "there is one: an implicit result (no '->') or the equation '->' segfaults")],
}


# rule name -> [(predicate over (function, attrs, tensors), what Paddle does)]; tensors are the
# call's positional tensor arguments (TensorArg, list of them, or None), outputs last in reverse.
def _einsum_reads_past_mapping(fn: str, attrs: list, tensors: list) -> bool:
    """Paddle's einsum rule takes each '.' of '...' for a label: an operand (or, in the grad, the
    out_grad) with fewer than three dims under its ellipsis is read past its dims mapping."""
    eq = attrs[-1]
    if "..." not in eq or "->" not in eq:
        return False
    lhs, rhs = eq.replace(" ", "").split("->", 1)
    pats = lhs.split(",")
    xs = tensors[0] if tensors and isinstance(tensors[0], list) else []
    pairs = list(zip(pats, xs))
    if fn == "grad" and len(tensors) > 2 and tensors[2] is not None:
        pairs.append((rhs, tensors[2]))
    return any("..." in p and t is not None and len(t.shape) - (len(p) - 3) < 3 for p, t in pairs)


TENSOR_HAZARDS: dict[str, list[tuple[Callable[[str, list, list], bool], str]]] = {
    "einsum": [(_einsum_reads_past_mapping,
                "EinsumInferSpmd takes each '.' of '...' for a label and reads the dims mapping of an operand "
                "with fewer than three dims under the ellipsis past its end (garbage mesh dims)")],
    "instance_norm": [(lambda fn, attrs, tensors: tensors and tensors[0] is not None and len(tensors[0].shape) < 4,
                       "InstanceNormInferSpmd and its grad write dims 2 and 3 of x's dims mapping without "
                       "checking the rank: x of rank < 4 corrupts the heap ('free(): invalid pointer', "
                       "'malloc(): memory corruption')")],
}


def paddle_hazard(rule: str, function: str, attrs: list, tensors: list | None = None) -> str | None:
    """Why Paddle 3.3.1 must not be handed this call, or None if it is safe as far as we know."""
    for pred, why in HAZARDS.get(rule, []):
        if pred(function, attrs):
            return why
    for pred, why in TENSOR_HAZARDS.get(rule, []) if tensors is not None else []:
        if pred(function, attrs, tensors):
            return why
    return None
