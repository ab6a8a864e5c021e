"""Samplers and kernels of the elementwise / reduction / scan family (rules_yaml/elementwise.yaml,
reduction.yaml, scan.yaml). Kernels run on global tensors and on one rank's shards alike."""
from __future__ import annotations

import numpy as np

from ..cases import Sample, TensorArg
from ..kernels import _axes, kernel
from ..samplers import _broadcast_operand, _random_axes, _rank, random_shape, sampler, tensor


# ---- kernels ---------------------------------------------------------------------------------

@kernel
def cumext(x, axis, fn):
    """(cummax / cummin values, their indices) along axis."""
    if x.ndim == 0:
        return x.copy(), np.zeros(())
    out = fn.accumulate(x, axis=axis)
    n = x.shape[axis]
    idx = np.arange(n).reshape([-1 if d == axis % x.ndim else 1 for d in range(x.ndim)])
    hit = np.where(x == out, np.broadcast_to(idx, x.shape), -1)
    return out, np.maximum.accumulate(hit, axis=axis).astype(float)


@kernel
def scatter_grad(x, indices, out_grad, axis):
    """x_grad: out_grad added at the positions `indices` name along axis (topk/argsort/cummax grads)."""
    g = np.zeros(x.shape)
    if x.ndim == 0:
        return g + out_grad
    idx = np.asarray(indices, dtype=np.int64)
    axis = axis % x.ndim
    # np.add.at along one axis: the other dims' positions from broadcast aranges
    grids = list(np.meshgrid(*[np.arange(n) for n in idx.shape], indexing="ij"))
    grids[axis] = idx
    np.add.at(g, tuple(grids), out_grad)
    return g


@kernel
def topk(x, k, axis, largest=True):
    if x.ndim == 0:
        return x.copy(), np.zeros(())
    order = np.argsort(-x if largest else x, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis), idx.astype(float)


@kernel
def argsort(x, axis, descending=False):
    if x.ndim == 0:
        return x.copy(), np.zeros(())
    idx = np.argsort(-x if descending else x, axis=axis, kind="stable")
    return np.take_along_axis(x, idx, axis), idx.astype(float)


@kernel
def cumsum(x, axis, flatten=False, exclusive=False, reverse=False):
    if flatten or x.ndim == 0:
        x, axis = x.reshape(-1), 0
    if reverse:
        x = np.flip(x, axis)
    out = np.cumsum(x, axis=axis)
    if exclusive:
        out = out - x
    return np.flip(out, axis) if reverse else out


@kernel
def logsumexp(x, axis, keepdims=False, reduce_all=False):
    axes = _axes([] if reduce_all else axis, x.ndim)
    if x.size == 0:
        return np.full(np.sum(x, axis=axes, keepdims=keepdims).shape, -np.inf)
    m = np.max(x, axis=axes, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axes, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axes)


@kernel
def p_norm(x, porder, axis, keepdims=False, asvector=False):
    axes = _axes([] if asvector else axis, x.ndim)
    a = np.abs(x)
    if porder == 0:
        return np.sum(a != 0, axis=axes, keepdims=keepdims).astype(float)
    if np.isinf(porder):
        fn, init = (np.max, 0.0) if porder > 0 else (np.min, np.inf)
        return fn(a, axis=axes, keepdims=keepdims, initial=init)
    return np.sum(a ** porder, axis=axes, keepdims=keepdims) ** (1.0 / porder)


@kernel
def argext(fn, x, axis, keepdims=False, flatten=False):
    if flatten or x.ndim == 0:
        i = fn(x.reshape(-1)) if x.size else 0
        return np.full((1,) * x.ndim if keepdims else (), float(i))
    return fn(x, axis=axis, keepdims=keepdims).astype(float)


@kernel
def reduction_grad(x, out_grad, axis, keep_dim=False, reduce_all=False):
    axes = _axes([] if reduce_all else axis, x.ndim)
    g = np.asarray(out_grad)
    if not keep_dim:
        g = np.expand_dims(g, axes) if axes else g
    return np.broadcast_to(g, x.shape).copy()


@kernel
def unique(x, return_index, return_inverse, return_counts, axis):
    if axis:
        a = axis[0] % x.ndim
        out, index, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=a)
    else:
        out, index, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    z = np.zeros(())
    return (out, index.astype(float) if return_index else z, inverse.reshape(-1).astype(float) if return_inverse else z,
            counts.astype(float) if return_counts else z)


@kernel
def swiglu(x, y=None):
    if y is None:
        h = x.shape[-1] // 2
        x, y = x[..., :h], x[..., h:]
    return x / (1.0 + np.exp(-x)) * y


@kernel
def label_smooth(label, prior_dist=None, epsilon=0.0):
    if prior_dist is None:
        return (1.0 - epsilon) * label + epsilon / label.shape[-1]
    return (1.0 - epsilon) * label + epsilon * prior_dist


def _unbroadcast(g, shape):
    g = np.sum(g, axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
    axes = tuple(d for d, n in enumerate(shape) if n == 1 and g.shape[d] != 1)
    return np.sum(g, axis=axes, keepdims=True) if axes else g


@kernel
def binary_grad(op, x, y, out_grad):
    if op == "add":
        gx, gy = out_grad, out_grad
    elif op == "subtract":
        gx, gy = out_grad, -out_grad
    elif op == "multiply":
        gx, gy = out_grad * y, out_grad * x
    else:  # divide
        gx, gy = out_grad / y, -out_grad * x / (y * y)
    return _unbroadcast(gx, x.shape), _unbroadcast(gy, y.shape)


# ---- samplers --------------------------------------------------------------------------------

def _int64():
    """paddle.int64 when Paddle is loaded (its rules take only a DataType), else the name."""
    import sys
    paddle = sys.modules.get("paddle")
    return paddle.int64 if paddle is not None and hasattr(paddle, "int64") else "int64"


def _x(rng, mesh, opts, lo=1, hi=4):
    return tensor(rng, random_shape(rng, _rank(rng, lo, hi), mesh), mesh, opts)


def _axis(rng, ndim):
    a = int(rng.integers(0, max(ndim, 1)))
    return a - ndim if rng.random() < 0.3 and ndim else a


@sampler
def where(rng, mesh, opts):
    out = random_shape(rng, _rank(rng), mesh)
    shapes = [_broadcast_operand(rng, out, 0.15) if rng.random() < 0.3 else out for _ in range(3)]
    if rng.random() < 0.6:  # Paddle checks that condition and x have one rank
        shapes[0] = tuple(1 if rng.random() < 0.1 else n for n in out)
        shapes[1] = out
    return Sample([tensor(rng, s, mesh, opts) for s in shapes])


@sampler
def scan_axis(rng, mesh, opts):
    x = _x(rng, mesh, opts)
    return Sample([x], {"axis": _axis(rng, len(x.shape)), "dtype": _int64()})


def _indexed_grad(rng, mesh, opts, x_shape, idx_shape, axis):
    n = x_shape[axis] if x_shape else 1
    return (tensor(rng, x_shape, mesh, opts), TensorArg(tuple(idx_shape), tensor(rng, idx_shape, mesh, opts, False).placement, n),
            tensor(rng, idx_shape, mesh, opts))


@sampler
def scan_axis_grad(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng), mesh)
    axis = _axis(rng, len(shape))
    x, idx, og = _indexed_grad(rng, mesh, opts, shape, shape, axis)
    return Sample([x, idx, og], {"axis": axis, "dtype": _int64()})


@sampler
def topk(rng, mesh, opts):
    x = _x(rng, mesh, opts)
    axis = _axis(rng, len(x.shape))
    return Sample([x], {"axis": axis, "k": int(rng.integers(1, x.shape[axis] + 1))})


@sampler
def topk_grad(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng), mesh)
    axis = _axis(rng, len(shape))
    k = int(rng.integers(1, shape[axis] + 1))
    idx_shape = list(shape)
    idx_shape[axis] = k
    x, idx, og = _indexed_grad(rng, mesh, opts, shape, idx_shape, axis)
    return Sample([x, idx, og], {"axis": axis, "k": k})


@sampler
def argsort_grad(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng), mesh)
    axis = _axis(rng, len(shape))
    x, idx, og = _indexed_grad(rng, mesh, opts, shape, shape, axis)
    return Sample([idx, x, og], {"axis": axis})


@sampler
def cumsum(rng, mesh, opts):
    x = _x(rng, mesh, opts, 2, 4) if rng.random() < 0.9 else _x(rng, mesh, opts)
    axis = _axis(rng, len(x.shape))
    return Sample([x], {"axis": axis, "flatten": bool(rng.random() < 0.2)})


@sampler
def logsumexp(rng, mesh, opts):
    x = _x(rng, mesh, opts)
    return Sample([x], {"axis": _random_axes(rng, len(x.shape)), "reduce_all": bool(rng.random() < 0.2)})


@sampler
def p_norm(rng, mesh, opts):
    x = _x(rng, mesh, opts)
    porder = float(rng.choice([2.0, 2.0, 1.0, 3.0, 0.0, np.inf, -np.inf]))
    return Sample([x], {"porder": porder, "axis": _axis(rng, len(x.shape)), "asvector": bool(rng.random() < 0.2)})


@sampler
def argmax(rng, mesh, opts):
    x = _x(rng, mesh, opts)
    return Sample([x], {"axis": _axis(rng, len(x.shape)), "flatten": bool(rng.random() < 0.2)})


@sampler
def reduction_grad(rng, mesh, opts):
    x = _x(rng, mesh, opts)
    axis = _random_axes(rng, len(x.shape))
    keep, every = bool(rng.integers(2)), bool(rng.random() < 0.15)
    axes = _axes([] if every else axis, len(x.shape))
    g = tuple(1 if d in axes else n for d, n in enumerate(x.shape)) if keep else \
        tuple(n for d, n in enumerate(x.shape) if d not in axes)
    return Sample([x, tensor(rng, g, mesh, opts)], {"axis": axis, "keep_dim": keep, "reduce_all": every})


@sampler
def unique(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng, 1, 3), mesh)
    x = TensorArg(shape, tensor(rng, shape, mesh, opts, False).placement, 3)  # few distinct values
    axis = [] if rng.random() < 0.5 else [_axis(rng, len(shape))]
    return Sample([x], {"axis": axis, "dtype": _int64()})


@sampler
def swiglu(rng, mesh, opts):
    shape = list(random_shape(rng, _rank(rng), mesh))
    if rng.random() < 0.4:
        shape[-1] = 2 * max(1, shape[-1])
        return Sample([tensor(rng, shape, mesh, opts), None])
    return Sample([tensor(rng, shape, mesh, opts), tensor(rng, shape, mesh, opts)])


@sampler
def label_smooth(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng), mesh)
    eps = float(rng.choice([0.1, 0.2]))
    if rng.random() < 0.5:
        return Sample([tensor(rng, shape, mesh, opts), None], {"epsilon": eps})
    prior = (1, shape[-1])
    return Sample([tensor(rng, shape, mesh, opts), tensor(rng, prior, mesh, opts)], {"epsilon": eps})


@sampler
def binary_grad(rng, mesh, opts):
    out = random_shape(rng, _rank(rng), mesh)
    x, y = _broadcast_operand(rng, out), _broadcast_operand(rng, out)
    if len(x) < len(out) and len(y) < len(out):
        x = out
    full = tuple(max(a, b) for a, b in zip(((1,) * (len(out) - len(x)) + x), ((1,) * (len(out) - len(y)) + y)))
    return Sample([tensor(rng, x, mesh, opts), tensor(rng, y, mesh, opts), tensor(rng, full, mesh, opts)])
