"""Samplers and kernels of the layout / slice / concat / split ops (slice_layout family):
expand, tile, roll, pad, expand_as's grad, slice, strided_slice, concat, stack, add_n, split,
split_with_num, unbind and reshape's grad. (one_hot's kernel and sampler live in contraction_norm.)
"""
from __future__ import annotations

import builtins
from math import prod

import numpy as np

from spmdkit.verify.cases import Sample
from spmdkit.verify.kernels import kernel
from spmdkit.verify.samplers import _factors, _rank, random_dim, random_shape, sampler, tensor


# ---- kernels --------------------------------------------------------------------------------
def _roll(x, shifts, axis):
    if not len(axis):
        return np.roll(x, int(shifts[0]))
    return np.roll(x, [int(s) for s in shifts], tuple(int(a) for a in axis))


@kernel
def expand(x, shape):
    """Paddle's expand: broadcast x to shape, where -1 keeps x's size (leading entries add dims)."""
    lead = len(shape) - x.ndim
    target = [int(s) if s != -1 else x.shape[i - lead] for i, s in enumerate(shape)]
    return np.broadcast_to(x, target).copy()


@kernel
def roll(x, shifts, axis):
    """Paddle's roll: an empty axis list rolls the flattened tensor by shifts[0]."""
    return _roll(x, shifts, axis)


@kernel
def roll_grad(x, out_grad, shifts, axis):
    return _roll(out_grad, [-int(s) for s in shifts], axis)


def _pairs(paddings, ndim):
    return [(int(paddings[2 * d]), int(paddings[2 * d + 1])) for d in range(ndim)]


@kernel
def pad(x, paddings, pad_value=0):
    """paddings holds (before, after) per dim, dim 0 first."""
    return np.pad(x, _pairs(paddings, x.ndim), constant_values=pad_value)


@kernel
def pad_grad(x, out_grad, paddings):
    """out_grad without the padding (x gives only the rank)."""
    idx = tuple(builtins.slice(b, out_grad.shape[d] - a) for d, (b, a) in enumerate(_pairs(paddings, out_grad.ndim)))
    return out_grad[idx]


@kernel
def unbroadcast(grad, shape):
    """`grad` summed over the dims a tensor of `shape` broadcasts to it (leading dims it lacks,
    its size-1 dims), as the grad of a broadcast."""
    lead = grad.ndim - len(shape)
    g = grad.sum(axis=tuple(range(lead))) if lead > 0 else grad
    ones = tuple(d for d, n in enumerate(shape) if n == 1 and g.shape[d] != 1)
    return g.sum(axis=ones, keepdims=True) if ones else g


@kernel
def slice(input, axes, starts, ends, decrease_axis=()):
    """Paddle's slice: [start, end) of each dim axes names (negatives count from the end,
    out-of-range bounds clamp), then the dims decrease_axis names (now size 1) dropped."""
    idx = [builtins.slice(None)] * input.ndim
    for a, s, e in zip(axes, starts, ends):
        idx[int(a) % input.ndim] = builtins.slice(int(s), int(e))
    out = input[tuple(idx)]
    if len(decrease_axis):
        out = np.squeeze(out, axis=tuple(int(d) % input.ndim for d in decrease_axis))
    return out


def _strided_index(ndim, axes, starts, ends, strides):
    idx = [builtins.slice(None)] * ndim
    for a, s, e, k in zip(axes, starts, ends, strides):
        idx[int(a) % ndim] = builtins.slice(int(s), int(e), int(k))
    return tuple(idx)


@kernel
def strided_slice(input, axes, starts, ends, strides):
    """input[start:end:stride] along each dim axes names (Python slice semantics)."""
    return input[_strided_index(input.ndim, axes, starts, ends, strides)]


@kernel
def strided_slice_grad(input, out_grad, axes, starts, ends, strides):
    """A zero tensor of input's shape with out_grad written at the strided positions."""
    g = np.zeros(input.shape, dtype=np.result_type(out_grad, np.float64))
    g[_strided_index(input.ndim, axes, starts, ends, strides)] = out_grad
    return g


@kernel
def split(x, sections, axis=0):
    """Paddle's split: `sections` sizes along axis (one may be -1: the rest), or a number of
    equal parts."""
    axis = int(axis) % x.ndim
    if isinstance(sections, (int, np.integer)):
        return tuple(np.split(x, int(sections), axis))
    sizes = [int(s) for s in sections]
    if -1 in sizes:
        sizes[sizes.index(-1)] = x.shape[axis] - (sum(sizes) + 1)
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis))


@kernel
def unbind(x, axis=0):
    return tuple(np.moveaxis(x, int(axis) % x.ndim, 0))


# ---- samplers -------------------------------------------------------------------------------
def _neg(rng, a, rank, p=0.3):
    """Axis `a`, sometimes counted from the end."""
    return int(a) - rank if rng.random() < p else int(a)


def _some_axes(rng, rank, lo=1):
    return sorted(int(a) for a in rng.choice(rank, size=int(rng.integers(lo, rank + 1)), replace=False))


@sampler
def tile(rng, mesh, opts):
    x = tensor(rng, random_shape(rng, _rank(rng, 1, 3), mesh), mesh, opts)
    n = int(rng.integers(0, len(x.shape) + 2)) if rng.random() < 0.9 else 0
    reps = [int(rng.choice([1, 1, 1, 2, 3])) for _ in range(n)]
    return Sample([x], {"repeat_times": reps})


@sampler
def expand(rng, mesh, opts):
    """Dims of size 1 (broadcast to 2-3), kept dims given as -1 or as their size, new leading dims."""
    x = tensor(rng, [1 if rng.random() < 0.3 else d for d in random_shape(rng, _rank(rng, 1, 3), mesh)], mesh, opts)
    shape = [int(rng.choice([2, 3])) if d == 1 else int(rng.choice([-1, d])) for d in x.shape]
    return Sample([x], {"shape": [int(rng.choice([1, 2, 3])) for _ in range(int(rng.integers(0, 2)))] + shape})


def _roll_attrs(rng, rank):
    if rng.random() < 0.15:
        return {"shifts": [int(rng.integers(-5, 6))], "axis": []}
    axes = [_neg(rng, a, rank) for a in _some_axes(rng, rank)]
    return {"shifts": [int(rng.integers(-5, 6)) for _ in axes], "axis": axes}


@sampler
def roll(rng, mesh, opts):
    x = tensor(rng, random_shape(rng, _rank(rng, 1, 3), mesh), mesh, opts)
    return Sample([x], _roll_attrs(rng, len(x.shape)))


@sampler
def roll_grad(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng, 1, 3), mesh)
    return Sample([tensor(rng, shape, mesh, opts), tensor(rng, shape, mesh, opts)], _roll_attrs(rng, len(shape)))


def _paddings(rng, rank):
    return [0 if rng.random() < 0.65 else int(rng.integers(1, 3)) for _ in range(2 * rank)]


@sampler
def pad(rng, mesh, opts):
    x = tensor(rng, random_shape(rng, _rank(rng, 1, 4), mesh), mesh, opts)
    return Sample([x], {"paddings": _paddings(rng, len(x.shape)), "pad_value": int(rng.integers(0, 3))})


@sampler
def pad_grad(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng, 1, 4), mesh)
    p = _paddings(rng, len(shape))
    out = tuple(n + p[2 * d] + p[2 * d + 1] for d, n in enumerate(shape))
    return Sample([tensor(rng, shape, mesh, opts), tensor(rng, out, mesh, opts)],
                  {"paddings": p, "pad_value": int(rng.integers(0, 3))})


def _range(rng, n):
    """(start, end) of a non-empty range of a dim of size n, in one of Paddle's spellings:
    negative bounds count from the end, an end past the dim clamps."""
    r = rng.random()
    if r < 0.25:
        s, e = 0, n
    elif r < 0.45:
        s = int(rng.integers(0, n))
        e = s + 1
    else:
        s = int(rng.integers(0, n))
        e = int(rng.integers(s + 1, n + 1))
    if rng.random() < 0.25:
        s -= n
    if e == n and rng.random() < 0.3:
        e = int(rng.choice([n + 3, 2 ** 31 - 1]))
    elif e < n and rng.random() < 0.25:
        e -= n
    return s, e


@sampler
def slice(rng, mesh, opts):
    x = tensor(rng, random_shape(rng, _rank(rng, 1, 4), mesh), mesh, opts)
    r = len(x.shape)
    axes = _some_axes(rng, r)
    starts, ends, decrease = [], [], []
    for a in axes:
        s, e = _range(rng, x.shape[a])
        starts.append(s)
        ends.append(e)
        if len(range(*builtins.slice(s, e).indices(x.shape[a]))) == 1 and rng.random() < 0.5:
            decrease.append(a)
    if len(decrease) == r:  # keep a dim (a 0-D output is fine, but rare in practice)
        decrease.pop()
    return Sample([x], {"axes": [_neg(rng, a, r) for a in axes], "starts": starts, "ends": ends,
                        "infer_flags": [1] * len(axes), "decrease_axis": decrease})


def _strided_attrs(rng, shape):
    r = len(shape)
    n = shape[-1]
    if rng.random() < 0.4:  # the last dim alone, often from its start to its end
        k = int(rng.choice([1, 2, 3, 4]))
        s = 0 if rng.random() < 0.6 else int(rng.integers(0, n))
        e = n if rng.random() < 0.7 else int(rng.integers(s + 1, n + 1))
        if rng.random() < 0.2:  # the same bounds counted from the end
            s, e = (s - n if s or rng.random() < 0.5 else s), (e - n if e < n else e)
        if e == n and rng.random() < 0.3:
            e = 2 ** 31 - 1
        return {"axes": [r - 1 if rng.random() < 0.7 else -1], "starts": [s], "ends": [e], "strides": [k]}
    axes = _some_axes(rng, r)
    starts, ends, strides = [], [], []
    for a in axes:
        m = shape[a]
        if rng.random() < 0.15 and m > 1:  # backwards, from s down to (not including) e
            s = int(rng.integers(1, m))
            starts.append(s)
            ends.append(int(rng.integers(0, s)) if rng.random() < 0.5 else -m - 1)  # -m - 1: past the first
            strides.append(-int(rng.integers(1, 3)))
            continue
        s, e = _range(rng, m)
        starts.append(s)
        ends.append(e)
        strides.append(int(rng.choice([1, 2, 3])))
    return {"axes": [_neg(rng, a, r) for a in axes], "starts": starts, "ends": ends, "strides": strides}


@sampler
def strided_slice(rng, mesh, opts):
    x = tensor(rng, random_shape(rng, _rank(rng, 1, 3), mesh), mesh, opts)
    return Sample([x], _strided_attrs(rng, x.shape))


@sampler
def strided_slice_grad(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng, 1, 3), mesh)
    attrs = _strided_attrs(rng, shape)
    out = np.zeros(shape)[_strided_index(len(shape), attrs["axes"], attrs["starts"], attrs["ends"], attrs["strides"])].shape
    return Sample([tensor(rng, shape, mesh, opts), tensor(rng, out, mesh, opts)], attrs)


def concat_inputs(rng, mesh, opts):
    """1 to 3 tensors of one rank that agree on every dim but `axis`: (tensors, axis, rank)."""
    base = list(random_shape(rng, _rank(rng, 1, 3), mesh))
    axis = int(rng.integers(0, len(base)))
    xs = []
    for _ in range(int(rng.integers(1, 4))):
        shape = list(base)
        shape[axis] = random_dim(rng, mesh)
        xs.append(tensor(rng, shape, mesh, opts))
    return xs, axis, len(base)


@sampler
def concat(rng, mesh, opts):
    xs, axis, rank = concat_inputs(rng, mesh, opts)
    return Sample([xs], {"axis": _neg(rng, axis, rank)})


def _same_shape_list(rng, mesh, opts, rank_lo=1, rank_hi=3):
    shape = random_shape(rng, _rank(rng, rank_lo, rank_hi), mesh)
    xs = [tensor(rng, shape, mesh, opts) for _ in range(int(rng.integers(1, 4)))]
    if len(xs) > 1 and rng.random() < 0.3:  # sometimes all alike (partial status too)
        xs = [xs[0]] * len(xs)
    return shape, xs


@sampler
def stack(rng, mesh, opts):
    shape, xs = _same_shape_list(rng, mesh, opts)
    r = len(shape) + 1
    return Sample([xs], {"axis": int(rng.integers(-r, r))})


@sampler
def add_n(rng, mesh, opts):
    _, xs = _same_shape_list(rng, mesh, opts)
    return Sample([xs])


@sampler
def split(rng, mesh, opts):
    x = tensor(rng, random_shape(rng, _rank(rng, 1, 3), mesh), mesh, opts)
    axis = int(rng.integers(0, len(x.shape)))
    n = x.shape[axis]
    parts = int(rng.integers(1, min(n, 3) + 1))
    cuts = sorted(int(c) for c in rng.choice(np.arange(1, n), size=parts - 1, replace=False)) if parts > 1 else []
    sections = [b - a for a, b in zip([0] + cuts, cuts + [n])]
    if len(sections) > 1 and rng.random() < 0.2:
        sections[int(rng.integers(len(sections)))] = -1
    return Sample([x], {"sections": sections, "axis": _neg(rng, axis, len(x.shape))})


@sampler
def split_with_num(rng, mesh, opts):
    x = tensor(rng, random_shape(rng, _rank(rng, 1, 3), mesh), mesh, opts)
    axis = int(rng.integers(0, len(x.shape)))
    n = x.shape[axis]
    num = int(rng.choice([d for d in range(1, min(n, 4) + 1) if n % d == 0]))
    return Sample([x], {"num": num, "axis": _neg(rng, axis, len(x.shape))})


@sampler
def unbind(rng, mesh, opts):
    shape = list(random_shape(rng, _rank(rng, 1, 3), mesh))
    axis = int(rng.integers(0, len(shape)))
    shape[axis] = min(shape[axis], 6)  # one output per element
    return Sample([tensor(rng, shape, mesh, opts)], {"axis": _neg(rng, axis, len(shape))})


@sampler
def reshape_grad(rng, mesh, opts):
    x = tensor(rng, random_shape(rng, _rank(rng), mesh), mesh, opts)
    factors = list(rng.permutation(_factors(prod(x.shape))))
    target = [1] * int(rng.integers(1, 5))
    for f in factors:
        target[int(rng.integers(len(target)))] *= int(f)
    return Sample([x, tensor(rng, target, mesh, opts)])
