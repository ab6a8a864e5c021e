"""Contractions, normalisations, losses and attention: samplers and numpy reference kernels.

Kernels run on global tensors or on one rank's shards; every dim they normalise over (the
softmax class axis, the attention key axis, the rms-norm hidden dim) is one the rules keep
whole, so the kernels need no communication.
"""
from __future__ import annotations

import numpy as np

from ..cases import Sample, TensorArg
from ..kernels import kernel
from ..placement import Placement
from ..samplers import _rank, random_dim, random_shape, sampler, tensor


# ---- kernels -------------------------------------------------------------------------------
@kernel
def bmm_grad(x, y, out_grad):
    return np.matmul(out_grad, np.swapaxes(y, -1, -2)), np.matmul(np.swapaxes(x, -1, -2), out_grad)


@kernel
def rms_norm(x, scale, epsilon=1e-5):
    """(out, invvar): normalised over the last dim; invvar keeps the leading dims."""
    invvar = 1.0 / np.sqrt(np.mean(x * x, axis=-1) + epsilon)
    out = x * invvar[..., None]
    if scale is not None:
        out = out * scale
    return out, invvar


@kernel
def rms_norm_grad(x, scale, invvar, out_grad, epsilon=1e-5):
    """(x_grad, scale_grad) of out = x * invvar * scale."""
    n = x.shape[-1]
    xhat = x * invvar[..., None]
    g = out_grad * scale
    x_grad = invvar[..., None] * (g - xhat * np.sum(g * xhat, axis=-1, keepdims=True) / n)
    scale_grad = np.sum(out_grad * xhat, axis=tuple(range(x.ndim - 1)))
    return x_grad, scale_grad


def _softmax(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


@kernel
def cross_entropy_with_softmax(x, label, soft_label, use_softmax, numeric_stable_mode, ignore_index, axis):
    """(softmax, loss): loss has x's shape with size 1 at `axis`."""
    axis = axis % x.ndim
    p = _softmax(x, axis) if use_softmax else x
    logp = np.log(p)
    if soft_label:
        loss = -np.sum(label * logp, axis=axis, keepdims=True)
    else:
        lab = np.asarray(label, dtype=np.int64)
        safe = np.where(lab == ignore_index, 0, lab)
        picked = np.take_along_axis(logp, safe, axis=axis)
        loss = np.where(lab == ignore_index, 0.0, -picked)
    return p, loss


@kernel
def cross_entropy_with_softmax_grad(label, softmax, loss_grad, soft_label, use_softmax, numeric_stable_mode,
                                    ignore_index, axis):
    axis = axis % softmax.ndim
    if soft_label:
        g = softmax - label
    else:
        lab = np.asarray(label, dtype=np.int64)
        onehot = np.zeros_like(softmax)
        np.put_along_axis(onehot, np.where(lab == ignore_index, 0, lab), 1.0, axis=axis)
        g = np.where(lab == ignore_index, 0.0, softmax - onehot)
    return g * loss_grad


@kernel
def flash_attention(q, k, v, fixed_seed_offset, attn_mask, dropout=0.0, causal=False, return_softmax=False,
                    is_test=False):
    """(out, softmax, softmax_lse, seed_offset) of q,k,v [b, s, h, d] (no dropout)."""
    s = np.einsum("bshd,bthd->bhst", q, k) / np.sqrt(q.shape[-1])
    if attn_mask is not None:
        s = s + attn_mask
    if causal:
        sq, sk = s.shape[-2], s.shape[-1]
        s = np.where(np.arange(sk)[None, :] > np.arange(sq)[:, None] + (sk - sq), -np.inf, s)
    m = np.max(s, axis=-1, keepdims=True)
    e = np.exp(s - m)
    z = np.sum(e, axis=-1, keepdims=True)
    p = e / z
    out = np.einsum("bhst,bthd->bshd", p, v)
    lse = (np.log(z) + m)[..., 0]
    seed = np.zeros(2) if fixed_seed_offset is None else np.asarray(fixed_seed_offset, float)
    return out, p, lse, seed


@kernel
def softmax_grad(out, out_grad, axis=-1):
    return out * (out_grad - np.sum(out * out_grad, axis=axis, keepdims=True))


@kernel
def one_hot(x, num_classes):
    return (np.asarray(x, dtype=np.int64)[..., None] == np.arange(num_classes)).astype(np.float64)


@kernel
def linear(x, weight, bias=None, transpose_weight=False):
    w = weight.T if transpose_weight else weight
    out = np.matmul(x, w)
    return out if bias is None else out + bias


@kernel
def fused_linear_param_grad_add(x, dout, dweight=None, dbias=None, multi_precision=True, has_bias=True):
    """(dweight_out, dbias_out): dweight += x^T dout over all leading dims; dbias += sum dout."""
    lead = tuple(range(x.ndim - 1))
    dw = np.tensordot(x, dout, axes=(lead, lead))
    if dweight is not None:
        dw = dw + dweight
    db = np.sum(dout, axis=lead)
    if dbias is not None:
        db = db + dbias
    return dw, db


# ---- samplers ------------------------------------------------------------------------------
@sampler
def bmm(rng, mesh, opts):
    b, m, k, n = (random_dim(rng, mesh) for _ in range(4))
    return Sample([tensor(rng, (b, m, k), mesh, opts), tensor(rng, (b, k, n), mesh, opts)])


@sampler
def bmm_grad(rng, mesh, opts):
    b, m, k, n = (random_dim(rng, mesh) for _ in range(4))
    return Sample([tensor(rng, (b, m, k), mesh, opts), tensor(rng, (b, k, n), mesh, opts),
                   tensor(rng, (b, m, n), mesh, opts)])


def _param(rng, n, mesh, opts, p_rep=0.6):
    if rng.random() < p_rep:
        return TensorArg(n, Placement.replicated(len(n)))
    return tensor(rng, n, mesh, opts, allow_partial=False)


@sampler
def rms_norm(rng, mesh, opts):
    x = tensor(rng, random_shape(rng, _rank(rng, 2, 4), mesh), mesh, opts)
    return Sample([x, _param(rng, x.shape[-1:], mesh, opts)])


@sampler
def rms_norm_grad(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng, 2, 4), mesh)
    return Sample([tensor(rng, shape, mesh, opts), _param(rng, shape[-1:], mesh, opts),
                   tensor(rng, shape[:-1], mesh, opts), tensor(rng, shape, mesh, opts)])


@sampler
def cross_entropy(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng, 1, 3), mesh)
    if shape[-1] == 1:
        shape = shape[:-1] + (int(rng.integers(2, 8)),)
    x = tensor(rng, shape, mesh, opts)
    axis = -1 if rng.random() < 0.7 else int(rng.integers(-len(shape), len(shape)))
    a = axis % len(shape)
    soft = bool(rng.random() < 0.3)
    classes = shape[a]
    if soft:
        label = tensor(rng, shape, mesh, opts, allow_partial=False)
    else:
        label = tensor(rng, shape[:a] + (1,) + shape[a + 1:], mesh, opts, int_high=max(classes, 1))
    ignore = -100 if rng.random() < 0.6 else int(rng.integers(0, max(classes, 1)))
    return Sample([x, label], {"soft_label": soft, "use_softmax": True, "axis": axis, "ignore_index": ignore})


@sampler
def cross_entropy_grad(rng, mesh, opts):
    s = cross_entropy(rng, mesh, opts)
    x, label = s.inputs
    shape = x.shape
    a = s.attrs["axis"] % len(shape)
    loss_grad = tensor(rng, shape[:a] + (1,) + shape[a + 1:], mesh, opts)
    return Sample([label, tensor(rng, shape, mesh, opts), loss_grad], s.attrs)


def _attention_shapes(rng, mesh):
    b, s, h, d = (random_dim(rng, mesh) for _ in range(4))
    t = s if rng.random() < 0.6 else random_dim(rng, mesh)
    return b, s, t, h, d


@sampler
def flash_attention(rng, mesh, opts):
    b, s, t, h, d = _attention_shapes(rng, mesh)
    q = tensor(rng, (b, s, h, d), mesh, opts)
    k = tensor(rng, (b, t, h, d), mesh, opts)
    v = tensor(rng, (b, t, h, d), mesh, opts)
    seed = TensorArg((2,), Placement.replicated(1), int_high=1000)
    mask = tensor(rng, (b, 1 if rng.random() < 0.5 else h, s, t), mesh, opts)
    return Sample([q, k, v, seed, mask], {"dropout": 0.0, "causal": bool(rng.integers(2)) and s == t})


@sampler
def softmax_grad(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng), mesh)
    return Sample([tensor(rng, shape, mesh, opts), tensor(rng, shape, mesh, opts)],
                  {"axis": int(rng.integers(-len(shape), len(shape)))})


@sampler
def one_hot(rng, mesh, opts):
    n = max(2, random_dim(rng, mesh))
    x = tensor(rng, random_shape(rng, _rank(rng, 1, 3), mesh), mesh, opts, int_high=n)
    return Sample([x], {"num_classes": n})


@sampler
def linear_v2(rng, mesh, opts):
    k, n = random_dim(rng, mesh), random_dim(rng, mesh)
    x = tensor(rng, random_shape(rng, _rank(rng, 1, 3), mesh) + (k,), mesh, opts)
    tw = bool(rng.integers(2))
    w = tensor(rng, (n, k) if tw else (k, n), mesh, opts)
    bias = tensor(rng, (n,), mesh, opts) if rng.random() < 0.8 else None
    return Sample([x, w, bias], {"transpose_weight": tw})


@sampler
def gemm_epilogue(rng, mesh, opts):
    m, k, n = (random_dim(rng, mesh) for _ in range(3))
    tx, ty = bool(rng.integers(2)), bool(rng.integers(2))
    x = tensor(rng, (k, m) if tx else (m, k), mesh, opts)
    y = tensor(rng, (n, k) if ty else (k, n), mesh, opts)
    return Sample([x, y, tensor(rng, (n,), mesh, opts)], {"trans_x": tx, "trans_y": ty})


@sampler
def linear_param_grad(rng, mesh, opts):
    k, n = random_dim(rng, mesh), random_dim(rng, mesh)
    lead = random_shape(rng, _rank(rng, 1, 2), mesh)
    x = tensor(rng, lead + (k,), mesh, opts)
    dout = tensor(rng, lead + (n,), mesh, opts)
    return Sample([x, dout, tensor(rng, (k, n), mesh, opts), tensor(rng, (n,), mesh, opts)],
                  {"multi_precision": True, "has_bias": True})


def _sum_to(g, shape):
    """Sum a broadcast result back to `shape` (leading extra dims, then size-1 dims)."""
    g = np.sum(g, axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
    ones = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    return np.sum(g, axis=ones, keepdims=True) if ones else g


@kernel
def matmul_grad(x, y, out_grad, trans_x=False, trans_y=False):
    xt = np.swapaxes(x, -1, -2) if trans_x else x
    yt = np.swapaxes(y, -1, -2) if trans_y else y
    dxt = _sum_to(np.matmul(out_grad, np.swapaxes(yt, -1, -2)), xt.shape)
    dyt = _sum_to(np.matmul(np.swapaxes(xt, -1, -2), out_grad), yt.shape)
    return (np.swapaxes(dxt, -1, -2) if trans_x else dxt), (np.swapaxes(dyt, -1, -2) if trans_y else dyt)


@sampler
def matmul_grad(rng, mesh, opts):
    from ..samplers import matmul as matmul_sampler
    while True:
        s = matmul_sampler(rng, mesh, opts)
        x, y = s.inputs
        if len(x.shape) >= 2 and len(y.shape) >= 2:
            break
    out = np.matmul(np.zeros(_t(x.shape, s.attrs["trans_x"])), np.zeros(_t(y.shape, s.attrs["trans_y"]))).shape
    return Sample([x, y, tensor(rng, out, mesh, opts)], s.attrs)


def _t(shape, trans):
    return shape[:-2] + (shape[-1], shape[-2]) if trans else shape
