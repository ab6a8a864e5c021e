"""Partial values: splitting a global value into per-rank addends, and reducing them back.

A tensor partial on mesh dim m with reduce type t means: the global value is the t-reduction,
over the ranks along m, of their local values. Several partial mesh dims reduce in ascending
mesh-dim order (they commute when the types agree, which is the only case rules produce).
"""
from __future__ import annotations

import numpy as np


def reduce_parts(parts: list[np.ndarray], rtype: str) -> np.ndarray:
    stack = np.stack(parts)
    if rtype == "sum":
        return stack.sum(axis=0)
    if rtype == "avg":
        return stack.mean(axis=0)
    if rtype == "max":
        return stack.max(axis=0)
    if rtype == "min":
        return stack.min(axis=0)
    if rtype == "prod":
        return stack.prod(axis=0)
    if rtype == "any":
        return np.any(stack != 0, axis=0).astype(stack.dtype)
    if rtype == "all":
        return np.all(stack != 0, axis=0).astype(stack.dtype)
    raise ValueError(f"unknown reduce type {rtype!r}")


def split_value(g: np.ndarray, rtype: str, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """n random parts whose `rtype` reduction is g (each part differs from g, so a rule that
    declares the wrong type or forgets the partial is caught)."""
    g = np.asarray(g, dtype=np.float64)
    if n == 1:
        return [g.copy()]
    if rtype in ("sum", "avg"):
        parts = [rng.normal(size=g.shape) for _ in range(n - 1)]
        total = g * n if rtype == "avg" else g
        return parts + [total - sum(parts)]
    if rtype == "prod":
        parts = [rng.uniform(0.5, 2.0, size=g.shape) * rng.choice([-1.0, 1.0], size=g.shape)
                 for _ in range(n - 1)]
        return parts + [g / np.prod(parts, axis=0)]
    if rtype in ("max", "min", "any", "all"):
        # one rank (chosen per element) holds g; the others hold something the reduction drops
        if rtype == "max":
            others = [g - rng.uniform(0.1, 2.0, size=g.shape) for _ in range(n)]
        elif rtype == "min":
            others = [g + rng.uniform(0.1, 2.0, size=g.shape) for _ in range(n)]
        else:
            others = [np.full(g.shape, 0.0 if rtype == "any" else 1.0) for _ in range(n)]
        holder = rng.integers(0, n, size=g.shape)
        return [np.where(holder == i, g, others[i]) for i in range(n)]
    raise ValueError(f"unknown reduce type {rtype!r}")


def partial_addends(g: np.ndarray, partial, mesh_shape, rng) -> dict[tuple[int, ...], np.ndarray]:
    """Global-shaped addends keyed by the rank's coordinates on the partial mesh dims
    (ascending). Split in descending order so that ascending reduction rebuilds g."""
    table: dict[tuple[int, ...], np.ndarray] = {(): np.asarray(g)}
    for m, t in sorted(partial, reverse=True):
        table = {(i,) + key: part
                 for key, val in table.items()
                 for i, part in enumerate(split_value(val, t, mesh_shape[m], rng))}
    return table
