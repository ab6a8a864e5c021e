"""The proof of a plan: run it on per-device numpy arrays and compare with the target's shards.

Each collective is simulated from its definition over device groups (concatenate, reduce, split,
exchange), not from the layout algebra the planner uses, so a wrong move in the planner shows up
as a wrong shard here. A partial source is built from one random contribution per partial-axis
coordinate; the true value is their reduction.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .layout import Layout, MeshSpec
from .planner import Plan

_REDUCE = {"sum": np.sum, "avg": np.mean, "max": np.max, "min": np.min,
           "all": np.bitwise_and.reduce, "any": np.bitwise_or.reduce}


class PlanMismatch(AssertionError):
    """A plan's result differs from the target layout's shard on some device."""


def shard_of(value: np.ndarray, mesh: MeshSpec, layout: Layout, coords: dict[str, int]) -> np.ndarray:
    """The block of `value` a device at `coords` holds under `layout` (partial axes ignored)."""
    index = []
    for d, n in enumerate(value.shape):
        b, count = layout.block(mesh, coords, d)
        size = n // count
        index.append(slice(b * size, (b + 1) * size))
    return value[tuple(index)]


def _group(mesh: MeshSpec, dev: int, axes) -> list[int]:
    """Devices that differ from `dev` only on `axes`, ordered by those axes (first axis major)."""
    c = mesh.coords(dev)
    names = mesh.names
    out = []
    for idx in itertools.product(*(range(mesh.size(a)) for a in axes)):
        cc = dict(c, **dict(zip(axes, idx)))
        lin = 0
        for n in names:
            lin = lin * mesh.size(n) + cc[n]
        out.append(lin)
    return out


LOGICAL = ("all", "any")  # reduced bitwise: run on integers


def source_locals(mesh: MeshSpec, layout: Layout, shape, rng: np.random.Generator, integers: bool = False):
    """(per-device local arrays, the true global value) for a random tensor laid out as `layout`;
    integer data when `integers` or the layout is a logical partial (and/or, bitwise)."""
    parts = list(itertools.product(*(range(mesh.size(a)) for a in layout.partial)))
    if integers or layout.reduce in LOGICAL:
        contributions = {p: rng.integers(0, 16, size=shape) for p in parts}
    else:
        contributions = {p: rng.integers(-8, 9, size=shape).astype(np.float64) for p in parts}
    if layout.partial:
        value = _REDUCE[layout.reduce](np.stack([contributions[p] for p in parts]), axis=0)
    else:
        value = contributions[()]
    out = {}
    for dev in range(mesh.num_devices):
        c = mesh.coords(dev)
        p = tuple(c[a] for a in layout.partial)
        out[dev] = shard_of(contributions[p], mesh, layout, c).copy()
    return out, value


def apply_step(mesh: MeshSpec, step, x: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    kind = step.kind
    if kind == "collective_permute":
        new = dict(x)
        for src, dst in step.pairs:
            new[dst] = x[src]
        return new
    axes = step.axes
    n = math.prod(mesh.size(a) for a in axes)
    reduce = step.before.reduce or step.after.reduce
    new = {}
    for dev in x:
        group = _group(mesh, dev, axes)
        k = group.index(dev)
        if kind == "all_gather":
            new[dev] = np.concatenate([x[g] for g in group], axis=step.dim)
        elif kind == "all_reduce":
            new[dev] = _REDUCE[reduce](np.stack([x[g] for g in group]), axis=0)
        elif kind == "reduce_scatter":
            total = _REDUCE[reduce](np.stack([x[g] for g in group]), axis=0)
            new[dev] = np.split(total, n, axis=step.dim)[k]
        elif kind == "all_to_all":
            new[dev] = np.concatenate([np.split(x[g], n, axis=step.dim_to)[k] for g in group], axis=step.dim)
        elif kind == "slice":
            new[dev] = np.split(x[dev], n, axis=step.dim)[k]
        elif kind == "pad_to_partial":
            size = x[dev].shape[step.dim]
            shape = list(x[dev].shape)
            shape[step.dim] = size * n
            padded = np.zeros(shape, x[dev].dtype)
            index = [slice(None)] * padded.ndim
            index[step.dim] = slice(k * size, (k + 1) * size)
            padded[tuple(index)] = x[dev]
            new[dev] = padded
        elif kind == "make_partial":
            keep = reduce != "sum" or k == 0
            new[dev] = x[dev] if keep else np.zeros_like(x[dev])
        else:
            raise ValueError(f"unknown step kind '{kind}'")
    return new


def run_plan(plan: Plan, x: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    for s in plan.steps:
        x = apply_step(plan.mesh, s, x)
    return x


def prove_plan(plan: Plan, seed: int = 0, every_step: bool = False) -> None:
    """Runs `plan` on a random tensor; raises PlanMismatch naming the first wrong device. With
    `every_step`, the layout after each step is checked too, not only the target."""
    mesh = plan.mesh
    rng = np.random.default_rng(seed)
    x, value = source_locals(mesh, plan.source, plan.shape, rng, integers=plan.target.reduce in LOGICAL)
    for i, s in enumerate(plan.steps):
        x = apply_step(mesh, s, x)
        if every_step:
            _check(mesh, s.after, x, value, f"after step {i + 1} {s.describe()}")
    _check(mesh, plan.target, x, value, f"plan {[s.describe() for s in plan.steps]}")


def _check(mesh: MeshSpec, layout: Layout, y, value, where: str) -> None:
    for dev in range(mesh.num_devices):
        c = mesh.coords(dev)
        want = shard_of(value, mesh, layout, c)
        if layout.partial:
            got = _REDUCE[layout.reduce](np.stack([y[g] for g in _group(mesh, dev, layout.partial)]), axis=0)
        else:
            got = y[dev]
        if got.shape != want.shape or not np.allclose(got, want):
            raise PlanMismatch(f"device {dev} {c}, {where}: got shape {got.shape}, want {want.shape} of {layout}")
