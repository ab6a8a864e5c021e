"""`K`: the numpy reference kernels that the YAML `verify.kernel` expressions call.

Each runs on whatever it is given, global tensors or one rank's shards; where a kernel needs to
know where its shard sits in the global tensor (embedding's vocabulary rows, squeeze's global
size-1 dims) the expression passes it from `ctx` (see context.py).
"""
from __future__ import annotations

from math import erf, prod

import numpy as np

_erf = np.vectorize(erf, otypes=[np.float64])


def _axes(axis, ndim) -> tuple[int, ...]:
    """An int or a list of ints, negatives counted from the end; [] means every dim."""
    if isinstance(axis, (int, np.integer)):
        axis = [axis]
    axis = list(axis)
    return tuple(range(ndim)) if not axis else tuple(sorted({a % ndim if ndim else 0 for a in axis}))


def matmul(x, y, trans_x=False, trans_y=False):
    if trans_x and x.ndim >= 2:
        x = np.swapaxes(x, -1, -2)
    if trans_y and y.ndim >= 2:
        y = np.swapaxes(y, -1, -2)
    return np.matmul(x, y)


def gelu(x, approximate=False):
    if approximate:
        return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))


def gelu_grad(x, out_grad, approximate=False):
    if approximate:
        k = np.sqrt(2.0 / np.pi)
        t = np.tanh(k * (x + 0.044715 * x ** 3))
        d = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t ** 2) * k * (1.0 + 3 * 0.044715 * x ** 2)
    else:
        d = 0.5 * (1.0 + _erf(x / np.sqrt(2.0))) + x * np.exp(-0.5 * x ** 2) / np.sqrt(2.0 * np.pi)
    return out_grad * d


def embedding(ids, weight, padding_idx=-1, vocab_offset=0):
    """Rows [vocab_offset, vocab_offset + len(weight)) of the table are here: ids outside that
    range (and the padding id) look up zeros, so row-split tables give partial sums."""
    local = np.asarray(ids, dtype=np.int64) - vocab_offset
    mine = (local >= 0) & (local < weight.shape[0])
    if padding_idx is not None and padding_idx >= 0:
        mine &= np.asarray(ids) != padding_idx
    out = weight[np.where(mine, local, 0)] if weight.shape[0] else np.zeros(ids.shape + weight.shape[1:])
    return np.where(mine[..., None], out, 0.0)


def layer_norm(x, scale, bias, epsilon=1e-5, begin_norm_axis=1):
    """(out, mean, variance); mean and variance keep x's leading dims (the rule's view)."""
    b = begin_norm_axis % x.ndim
    axes = tuple(range(b, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    out = (x - mean) / np.sqrt(var + epsilon)
    if scale is not None:
        out = out * scale.reshape(x.shape[b:])
    if bias is not None:
        out = out + bias.reshape(x.shape[b:])
    return out, mean.reshape(x.shape[:b]), var.reshape(x.shape[:b])


def reduce(fn, x, axis, keep_dim=False):
    """An empty shard reduces to the identity (max: -inf, min: +inf), as the partial needs."""
    identity = {np.max: -np.inf, np.amax: -np.inf, np.min: np.inf, np.amin: np.inf}.get(fn)
    extra = {"initial": identity} if identity is not None else {}
    return fn(x, axis=_axes(axis, x.ndim), keepdims=keep_dim, **extra)


# Paddle's ReduceType enum order.
_BY_TYPE = [np.sum, np.max, np.min, np.prod, np.mean,
            lambda a, **kw: np.any(a != 0, **kw).astype(a.dtype),
            lambda a, **kw: np.all(a != 0, **kw).astype(a.dtype)]


def reduce_by_type(x, axis, keep_dim, reduce_type):
    return reduce(_BY_TYPE[reduce_type], x, axis, keep_dim)


def flatten(x, start_axis=1, stop_axis=-1):
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start_axis % x.ndim, stop_axis % x.ndim
    return x.reshape(x.shape[:s] + (prod(x.shape[s:e + 1]),) + x.shape[e + 1:])


def squeeze(x, axis, global_shape=None):
    """Drops the named dims that are size 1 *globally* (all of them when axis is empty): a
    split dim whose shard happens to be size 1 stays."""
    shape = tuple(global_shape) if global_shape is not None else x.shape
    named = _axes(axis, len(shape)) if len(shape) else ()
    drop = tuple(d for d in named if shape[d] == 1)
    return np.squeeze(x, axis=drop) if drop else x


def unsqueeze(x, axis):
    if isinstance(axis, (int, np.integer)):
        axis = [axis]
    for a in axis:  # inserted one after another, negatives counted on the current rank
        x = np.expand_dims(x, a + x.ndim + 1 if a < 0 else a)
    return x


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def kernel(fn):
    """Registers a family module's kernel in this namespace (`K.name` in the YAML)."""
    if fn.__name__ in globals():  # two families (or a family and this module) claiming one name
        raise ValueError(f"kernel {fn.__name__!r} ({fn.__module__}) is already defined")
    globals()[fn.__name__] = fn
    return fn


def mostly_true(x, global_size: int):
    """A boolean view of normal noise `x` in which every element is true with probability
    0.9 ** (1 / global_size): the whole tensor is all-true 90% of the time, so shards almost
    always hold a true and are often all-true. Then a SUM of shard results differs from their
    ANY or ALL, and a wrong reduce type cannot pass by coincidence."""
    p = 0.9 ** (1.0 / max(int(global_size), 1))
    lo, hi = -10.0, 10.0  # the threshold t with P(N(0,1) > t) = p, by bisection on erf
    for _ in range(60):
        mid = (lo + hi) / 2
        if 0.5 * (1.0 - erf(mid / np.sqrt(2.0))) > p:
            lo = mid
        else:
            hi = mid
    return np.asarray(x) > lo
