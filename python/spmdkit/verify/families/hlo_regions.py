"""Samplers and reference kernels of the StableHLO ops with regions (rules_yaml/jax_region_ops.yaml):
variadic reduce, sort, reduce_window. Kernels follow the StableHLO spec and run on global tensors
and on one rank's shards alike."""
from __future__ import annotations

import numpy as np

from ..cases import Sample
from ..kernels import kernel
from ..samplers import _rank, random_shape, sampler, tensor


def _best_pair(values, indices, init_value, init_index, larger: bool):
    """The winning (value, index) over the last axis and the init pair: the larger (smaller)
    value, ties to the smaller index, as the body JAX writes for argmax (argmin)."""
    v = np.concatenate([values, np.broadcast_to(init_value, values.shape[:-1] + (1,))], axis=-1)
    i = np.concatenate([indices, np.broadcast_to(init_index, indices.shape[:-1] + (1,))], axis=-1)
    key = -v if larger else v
    # lexsort: last key is primary; the first element after sorting is the winner
    order = np.lexsort((i, key), axis=-1)[..., :1]
    return np.take_along_axis(v, order, -1)[..., 0], np.take_along_axis(i, order, -1)[..., 0]


@kernel
def hlo_reduce_variadic(operands, init_values, dimensions, body):
    if body not in ("argmax", "argmin") or len(operands) != 2:
        raise ValueError(f"hlo_reduce_variadic: no kernel for body {body!r} with {len(operands)} operands")
    values, indices = (np.asarray(x, dtype=float) for x in operands)
    keep = [d for d in range(values.ndim) if d not in dimensions]
    order = keep + sorted(dimensions)
    flat = lambda x: np.transpose(x, order).reshape([values.shape[d] for d in keep] + [-1])  # noqa: E731
    v, i = _best_pair(flat(values), flat(indices), *(np.asarray(x, dtype=float) for x in init_values),
                      larger=body == "argmax")
    return v, i


def _dims_subset(rng, r, lo=0):
    n = int(rng.integers(lo, r + 1)) if r else 0
    return sorted(int(a) for a in rng.choice(r, size=n, replace=False)) if r else []


@sampler
def hlo_reduce_variadic(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng, 1, 4), mesh)
    operands = [tensor(rng, shape, mesh, opts) for _ in range(2)]
    inits = [tensor(rng, (), mesh, opts) for _ in range(2)]
    return Sample([operands, inits], {"dimensions": _dims_subset(rng, len(shape), 1),
                                      "body": str(rng.choice(["argmax", "argmin"]))})


@kernel
def hlo_sort(operands, dimension, num_keys=1):
    """Every operand permuted by the stable ascending order of the first num_keys operands
    (lexicographic), along `dimension`."""
    xs = [np.moveaxis(np.asarray(x, dtype=float), dimension, -1) for x in operands]
    keys = xs[:max(int(num_keys), 1)]
    order = np.lexsort(tuple(reversed(keys)), axis=-1)  # lexsort's last key is primary
    return tuple(np.moveaxis(np.take_along_axis(x, order, -1), -1, dimension) for x in xs)


@sampler
def hlo_sort(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng, 1, 3), mesh)
    n = int(rng.integers(1, 4))
    # integer keys from a small range: ties, so the tie-break (later keys, stability) matters
    operands = [tensor(rng, shape, mesh, opts, int_high=3 if k < n - 1 else None) for k in range(n)]
    return Sample([operands], {"dimension": int(rng.integers(0, len(shape))), "is_stable": True,
                               "num_keys": int(rng.integers(1, n + 1))})
