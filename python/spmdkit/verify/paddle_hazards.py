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


def _has_0d(tensors) -> bool:
    """Some tensor (list elements included) of the call is 0-D."""
    for t in tensors or []:
        for x in (t if isinstance(t, list) else [t]):
            if x is not None and len(x.shape) == 0:
                return True
    return False


_DIM0 = ("DefaultDataParallelInferSpmd[Reverse] reads and writes dims_mapping[0] of every tensor: "
         "a 0-D input or output segfaults")


def _rank(t) -> int:
    return -1 if t is None or isinstance(t, list) else len(t.shape)


def _split(t, dim: int) -> bool:
    return t is not None and not isinstance(t, list) and bool(t.placement.dims[dim])


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


# Hazards that depend on the tensors: rule name -> [(predicate over (function, attrs, tensors,
# mesh_shape), what Paddle does)]; `tensors` are the call's positional tensors (TensorArg, a list
# of them, or None), inputs then (reverse rules) outputs.
TENSOR_HAZARDS: dict[str, list[tuple[Callable[[str, list, list, tuple], bool], str]]] = {
    "gather_nd": [(lambda fn, attrs, ts, mesh: fn == "reverse" and _rank(ts[0]) == 1 and _rank(ts[1]) == 1,
                   "GatherNdInferSpmdReverse reads dim 0 of the 0-D output's dims mapping for a 1-D x and "
                   "index: segmentation fault")],
    "moe_combine": [(lambda fn, attrs, ts, mesh: fn == "forward" and len(mesh) == 1
                     and (_split(ts[1], 1) or _split(ts[2], 1)),
                     "MoECombineInferSpmd marks the output partial on mesh dim 1 whenever k is split, which "
                     "a 1-D mesh does not have: segmentation fault")],
    "einsum": [(lambda fn, attrs, ts, mesh: _einsum_reads_past_mapping(fn, attrs, ts),
                "EinsumInferSpmd takes each '.' of '...' for a label and reads the dims mapping of an operand "
                "with fewer than three dims under the ellipsis past its end (garbage mesh dims)")],
    "instance_norm": [(lambda fn, attrs, ts, mesh: ts and ts[0] is not None and len(ts[0].shape) < 4,
                       "InstanceNormInferSpmd and its grad write dims 2 and 3 of x's dims mapping without "
                       "checking the rank: x of rank < 4 corrupts the heap ('free(): invalid pointer', "
                       "'malloc(): memory corruption')")],
    "default_data_parallel": [(lambda fn, attrs, ts, mesh: _has_0d(ts), _DIM0)],
    "default_": [(lambda fn, attrs, ts, mesh: _has_0d(ts), _DIM0)],
}


def paddle_hazard(rule: str, function: str, attrs: list, tensors: list | None = None,
                  mesh_shape: tuple | None = None) -> str | None:
    """Why Paddle 3.3.1 must not be handed this call, or None if it is safe as far as we know."""
    for pred, why in HAZARDS.get(rule, []):
        if pred(function, attrs):
            return why
    if tensors is not None:
        for pred, why in TENSOR_HAZARDS.get(rule, []):
            if pred(function, attrs, tensors, tuple(mesh_shape or ())):
                return why
    return None
