"""Integer arguments: Python ints and NumPy/JAX integer scalars alike, never bools or floats."""
from __future__ import annotations

import operator


def as_int(value) -> int | None:
    """`value` as a Python int, or None when it is not an integer (bools are not integers here)."""
    if isinstance(value, bool) or isinstance(value, float):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None
