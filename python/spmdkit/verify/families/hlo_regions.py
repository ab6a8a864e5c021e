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


def _per_dim(values, rank, fill):
    return [int(v) for v in values] if len(values) else [fill] * rank


def _windows(x, fill, window, strides, base_dil, window_dil, padding):
    """x spread by base dilation and padded (both with `fill`; negative padding crops), then
    gathered into windows: axes (out_0, win_0, out_1, win_1, ...)."""
    r = x.ndim
    strides, base_dil, window_dil = (_per_dim(v, r, 1) for v in (strides, base_dil, window_dil))
    pads = _per_dim(padding, 2 * r, 0)
    for d in range(r):
        n, bd, lo, hi = x.shape[d], base_dil[d], pads[2 * d], pads[2 * d + 1]
        shape = list(x.shape)
        shape[d] = (n - 1) * bd + 1 if n else 0
        spread = np.full(shape, fill, dtype=float)
        idx = [slice(None)] * r
        idx[d] = slice(0, None, bd)
        spread[tuple(idx)] = x
        width = [(0, 0)] * r
        width[d] = (max(lo, 0), max(hi, 0))
        spread = np.pad(spread, width, constant_values=fill)
        idx[d] = slice(max(-lo, 0), spread.shape[d] - max(-hi, 0))
        x = spread[tuple(idx)]
    for d in reversed(range(r)):  # later dims first: earlier axis numbers stay valid
        span = (window[d] - 1) * window_dil[d] + 1
        out = (x.shape[d] - span) // strides[d] + 1 if x.shape[d] >= span else 0
        at = np.arange(out)[:, None] * strides[d] + np.arange(window[d])[None, :] * window_dil[d]
        x = np.take(x, at, axis=d)
    return x


_REDUCERS = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply,
             "and": np.logical_and, "or": np.logical_or}


def _reduce_window(x, init, body, window, strides, base_dil, window_dil, padding):
    fn = _REDUCERS[body]
    if body in ("and", "or"):
        x, init = (np.asarray(x) > 0).astype(float), float(np.asarray(init) > 0)
    w = _windows(np.asarray(x, dtype=float), float(init), window, strides, base_dil, window_dil, padding)
    axes = tuple(range(1, w.ndim, 2))
    out = fn.reduce(w, axis=axes) if axes else w
    return fn(out, init).astype(float)


@kernel
def hlo_reduce_window(operands, init_values, window_dimensions, window_strides, base_dilations, window_dilations,
                      padding, body):
    if body not in _REDUCERS or len(operands) != 1:
        raise ValueError(f"hlo_reduce_window: no kernel for body {body!r} with {len(operands)} operands")
    return (_reduce_window(operands[0], init_values[0], body, window_dimensions, window_strides, base_dilations,
                           window_dilations, padding),)


# JAX's inits are -inf / inf; a finite stand-in orders real data the same and keeps an
# all-padding window comparable (inf - inf is nan in the checker)
_JAX_INIT = {"sum": 0.0, "max": -1e300, "min": 1e300}


@kernel
def jax_reduce_window(operand, body, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    return _reduce_window(operand, _JAX_INIT[body], body, window_dimensions, window_strides, base_dilation,
                          window_dilation, padding)


def _window_attrs(rng, shape):
    """Per dim: half the time a trivial window (the dim passes through), else a random one
    whose padded, dilated size still holds the window."""
    w, s, bd, wd, pad = [], [], [], [], []
    for n in shape:
        if rng.random() < 0.5:
            w.append(1), s.append(1), bd.append(1), wd.append(1), pad.extend([0, 0])
            continue
        while True:
            cw, cs, cb, cd = (int(rng.integers(1, k)) for k in (4, 3, 3, 3))
            lo, hi = (int(rng.integers(-1, 3)) for _ in range(2))
            if (n - 1) * cb + 1 + lo + hi >= (cw - 1) * cd + 1:
                break
        w.append(cw), s.append(cs), bd.append(cb), wd.append(cd), pad.extend([lo, hi])
    return w, s, bd, wd, pad


@sampler
def hlo_reduce_window(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng, 1, 3), mesh)
    w, s, bd, wd, pad = _window_attrs(rng, shape)
    body = str(rng.choice(["sum", "max", "min", "prod", "and", "or"]))
    attrs = {"window_dimensions": w, "window_strides": s, "base_dilations": bd, "window_dilations": wd,
             "padding": pad, "body": body}
    if rng.random() < 0.3:  # StableHLO's defaults: omitted lists
        attrs.update(window_strides=[], base_dilations=[], window_dilations=[], padding=[]) if all(
            v == 1 for v in s + bd + wd) and not any(pad) else None
    return Sample([[tensor(rng, shape, mesh, opts)], [tensor(rng, (), mesh, opts)]], attrs)


@sampler
def jax_reduce_window(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng, 1, 3), mesh)
    w, s, bd, wd, pad = _window_attrs(rng, shape)
    return Sample([tensor(rng, shape, mesh, opts)], {"window_dimensions": w, "window_strides": s, "padding": pad,
                                                     "base_dilation": bd, "window_dilation": wd})
