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

# rule name -> [(predicate over (function, tensors), what Paddle does)], for hazards that depend on
# the tensors (list arguments as lists) rather than on the attributes
TENSOR_HAZARDS: dict[str, list[tuple[Callable[[str, list], bool], str]]] = {
    "default_data_parallel": [(lambda fn, tensors: _has_0d(tensors), _DIM0)],
    "default_": [(lambda fn, tensors: _has_0d(tensors), _DIM0)],
}


def paddle_hazard(rule: str, function: str, attrs: list, tensors: list | None = None) -> str | None:
    """Why Paddle 3.3.1 must not be handed this call, or None if it is safe as far as we know."""
    for pred, why in HAZARDS.get(rule, []):
        if pred(function, attrs):
            return why
    if tensors is not None:
        for pred, why in TENSOR_HAZARDS.get(rule, []):
            if pred(function, tensors):
                return why
    return None
