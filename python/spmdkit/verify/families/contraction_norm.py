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
    # Paddle's shape check (numpy would broadcast a label of the wrong shape): a soft label has
    # x's shape, a hard one x's shape with 1 at axis.
    want = tuple(x.shape) if soft_label else tuple(1 if d == axis else n for d, n in enumerate(x.shape))
    if tuple(np.shape(label)) != want:
        raise ValueError(f"label has shape {list(np.shape(label))}, {'soft' if soft_label else 'hard'} labels need {list(want)}")
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
def linear_v2(x, weight, bias=None, transpose_weight=False):
    """(out, reserve_space): x @ weight (+ bias); the workspace is an empty buffer."""
    w = weight.T if transpose_weight else weight
    out = np.matmul(x, w)
    return (out if bias is None else out + bias), np.zeros(())


@kernel
def gemm_epilogue(x, y, bias, trans_x=False, trans_y=False):
    """(out, reserve_space) of fused_gemm_epilogue: tanh(x @ y + bias). Paddle's rule takes no
    activation attribute, so it must hold for every epilogue; a nonlinear one is the strict check
    (an activation of a partial sum is not the sum of the activations)."""
    xt = np.swapaxes(x, -1, -2) if trans_x else x
    yt = np.swapaxes(y, -1, -2) if trans_y else y
    return np.tanh(np.matmul(xt, yt) + bias), np.zeros(())


@kernel
def fused_linear_param_grad_add(x, dout, dweight=None, dbias=None, multi_precision=True, has_bias=True):
    """(dweight_out, dbias_out): dweight + x^T dout summed over all leading dims; dbias + the sum of
    dout over them (an empty placeholder when has_bias is false)."""
    lead = tuple(range(x.ndim - 1))
    dw = np.tensordot(x, dout, axes=(lead, lead))
    if dweight is not None:
        dw = dw + dweight
    if not has_bias:
        return dw, np.zeros(())
    db = np.sum(dout, axis=lead)
    if dbias is not None:
        db = db + dbias
    return dw, db


def _einsum_parse(equation, shapes):
    """(operand label lists, result label list) with '...' spelled out as fresh labels,
    right-aligned as numpy broadcasts them; numpy's implicit result when there is no '->'."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    ops = lhs.split(",")
    used = set(equation)
    fresh = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    n_ell = max((len(s) - (len(o) - 3) for o, s in zip(ops, shapes) if "..." in o), default=0)
    ell = fresh[:n_ell]

    def expand(o, ndim):
        if "..." not in o:
            return list(o)
        k = ndim - (len(o) - 3)
        head, tail = o.split("...")
        return list(head) + ell[n_ell - k:] + list(tail)
    ins = [expand(o, len(s)) for o, s in zip(ops, shapes)]
    if arrow:
        out = list(rhs.replace("...", "".join(ell))) if "..." in rhs else list(rhs)
    else:
        counts = {}
        for o in ops:
            for c in o.replace("...", ""):
                counts[c] = counts.get(c, 0) + 1
        out = ell + sorted(c for c, n in counts.items() if n == 1)
    return ins, out


@kernel
def einsum(equation, xs):
    """numpy's einsum, and Paddle's result that repeats a label ("ij->ii"): the values on its
    diagonal, zeros elsewhere."""
    ins, out = _einsum_parse(equation, [x.shape for x in xs])
    uniq = list(dict.fromkeys(out))
    if len(uniq) == len(out):
        return np.einsum(equation, *xs)
    r = np.einsum(",".join("".join(o) for o in ins) + "->" + "".join(uniq), *xs)
    res = np.zeros(tuple(r.shape[uniq.index(l)] for l in out))
    grid = np.indices(r.shape, sparse=True)
    res[tuple(grid[uniq.index(l)] for l in out)] = r
    return res


einsum_kernel = einsum  # the sampler of the same name below takes the module name


@kernel
def einsum_grad(equation, xs, out_grad):
    """The grad of each operand: out is linear in it, so dx_i = einsum(the other operands,
    out_grad -> x_i's labels), spread onto the diagonal where x_i repeats a label."""
    ins, out = _einsum_parse(equation, [x.shape for x in xs])
    grads = []
    for i, x in enumerate(xs):
        labels = ins[i]
        uniq = list(dict.fromkeys(labels))
        size = {l: x.shape[labels.index(l)] for l in uniq}
        operands, subs = [], []
        for j, y in enumerate(xs):
            if j != i:
                operands.append(y)
                subs.append("".join(ins[j]))
        operands.append(out_grad)
        subs.append("".join(out))
        present = set("".join(subs))
        for l in uniq:  # a label only x_i has was summed: its grad is broadcast along it
            if l not in present:
                operands.append(np.ones(size[l]))
                subs.append(l)
        g = np.einsum(",".join(subs) + "->" + "".join(uniq), *operands)
        # A size-1 dim of x_i broadcast against a larger one: its grad sums over that dim.
        g = np.sum(g, axis=tuple(d for d, l in enumerate(uniq) if size[l] == 1 and g.shape[d] > 1), keepdims=True)
        g = np.broadcast_to(g, tuple(size[l] for l in uniq))  # ... or the others broadcast against x_i
        if len(uniq) == len(labels):
            grads.append(g)
            continue
        dx = np.zeros(x.shape)
        grid = np.indices(g.shape, sparse=True)
        dx[tuple(grid[uniq.index(l)] for l in labels)] = g
        grads.append(dx)
    return tuple(grads) if len(grads) != 1 else (grads[0],)


@kernel
def batch_norm(x, mean, variance, scale, bias, momentum=0.9, epsilon=1e-5):
    """Training-mode batch_norm over N and the spatial dims of an NC... tensor:
    (out, mean_out, variance_out, saved_mean, saved_variance (1/std), reserve_space)."""
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    m, v = x.mean(axis=axes), x.var(axis=axes)
    inv = 1.0 / np.sqrt(v + epsilon)
    out = (x - m.reshape(shape)) * inv.reshape(shape) * scale.reshape(shape) + bias.reshape(shape)
    return out, momentum * mean + (1 - momentum) * m, momentum * variance + (1 - momentum) * v, m, inv, np.zeros(1)


@kernel
def group_norm(x, scale, bias, epsilon=1e-5):
    """(out, mean, variance) of an NC... tensor; mean and variance are [N, groups]. The rule has no
    groups attribute: the kernel takes 4, 3 or 2 groups where C allows (else 1)."""
    n, c = x.shape[0], x.shape[1]
    g = next((k for k in (4, 3, 2) if c % k == 0), 1)
    xg = x.reshape((n, g, int(np.prod(x.shape[1:])) // g))
    m, v = xg.mean(axis=-1), xg.var(axis=-1)
    out = ((xg - m[..., None]) / np.sqrt(v[..., None] + epsilon)).reshape(x.shape)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if scale is not None:
        out = out * scale.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out, m, v


def _spatial(x):
    return tuple(range(2, x.ndim))


@kernel
def instance_norm(x, scale, bias, epsilon=1e-5):
    """(y, saved_mean, saved_variance (1/std)), statistics per (sample, channel): [N, C]."""
    axes, shape = _spatial(x), (1, -1) + (1,) * (x.ndim - 2)
    m, v = x.mean(axis=axes), x.var(axis=axes)
    inv = 1.0 / np.sqrt(v + epsilon)
    y = (x - m.reshape(m.shape + (1,) * len(axes))) * inv.reshape(inv.shape + (1,) * len(axes))
    if scale is not None:
        y = y * scale.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y, m, inv


@kernel
def instance_norm_grad(x, scale, saved_mean, saved_variance, y_grad, epsilon=1e-5):
    """(x_grad, scale_grad, bias_grad) from the saved mean and 1/std ([N, C], or [N*C] as Paddle's
    kernel holds them)."""
    axes, shape = _spatial(x), (1, -1) + (1,) * (x.ndim - 2)
    ex = x.shape[:2] + (1,) * len(axes)
    xhat = (x - saved_mean.reshape(ex)) * saved_variance.reshape(ex)
    g = y_grad * (scale.reshape(shape) if scale is not None else 1.0)
    n = np.prod([x.shape[a] for a in axes]) if axes else 1
    x_grad = saved_variance.reshape(ex) * (g - g.sum(axis=axes, keepdims=True) / n
                                           - xhat * (g * xhat).sum(axis=axes, keepdims=True) / n)
    red = (0,) + axes
    return x_grad, (y_grad * xhat).sum(axis=red), y_grad.sum(axis=red)


@kernel
def layer_norm_grad(x, scale, bias, mean, variance, out_grad, epsilon=1e-5, begin_norm_axis=1):
    """(x_grad, scale_grad, bias_grad); mean and variance have x's leading dims, or are them
    flattened (1-D, as Paddle's kernel holds them)."""
    b = begin_norm_axis % x.ndim if x.ndim else 0
    axes = tuple(range(b, x.ndim))
    ex = x.shape[:b] + (1,) * len(axes)
    inv = 1.0 / np.sqrt(np.abs(variance.reshape(ex)) + epsilon)  # random inputs: any sign
    xhat = (x - mean.reshape(ex)) * inv
    g = out_grad * (scale.reshape(x.shape[b:]) if scale is not None else 1.0)
    n = np.prod(x.shape[b:])
    x_grad = inv * (g - g.sum(axis=axes, keepdims=True) / n - xhat * (g * xhat).sum(axis=axes, keepdims=True) / n)
    lead = tuple(range(b))
    return x_grad, (out_grad * xhat).sum(axis=lead).reshape(-1), out_grad.sum(axis=lead).reshape(-1)


@kernel
def flash_attention_grad(q, k, v, attn_mask, out_grad, causal=False):
    """(q_grad, k_grad, v_grad) of flash_attention (no dropout), q,k,v [b, s, h, d]."""
    scale = 1.0 / np.sqrt(q.shape[-1])
    s = np.einsum("bshd,bthd->bhst", q, k) * scale
    if attn_mask is not None:
        s = s + attn_mask
    if causal:
        sq, sk = s.shape[-2], s.shape[-1]
        s = np.where(np.arange(sk)[None, :] > np.arange(sq)[:, None] + (sk - sq), -np.inf, s)
    p = np.exp(s - np.max(s, axis=-1, keepdims=True))
    p = p / np.sum(p, axis=-1, keepdims=True)
    dv = np.einsum("bhst,bshd->bthd", p, out_grad)
    dp = np.einsum("bshd,bthd->bhst", out_grad, v)
    ds = p * (dp - np.sum(dp * p, axis=-1, keepdims=True))
    return np.einsum("bhst,bthd->bshd", ds, k) * scale, np.einsum("bhst,bshd->bthd", ds, q) * scale, dv


def _c_softmax(ctx, x):
    """The rows of x whole along the class axis (the kernel's all-reduces over the ranks that
    split it), their log-sum-exp, and where this rank's class shard starts."""
    full, offset = ctx.gather("x", x.ndim - 1, x)
    m = np.max(full, axis=-1, keepdims=True) if full.shape[-1] else np.zeros(full.shape[:-1] + (1,))
    lse = np.log(np.sum(np.exp(full - m), axis=-1, keepdims=True)) + m
    return full, lse, offset


def _pick(full, label, ignore_index):
    lab = np.asarray(label, dtype=np.int64)
    safe = np.where(lab == ignore_index, 0, lab)
    return np.take_along_axis(full, safe, axis=-1), lab == ignore_index


@kernel
def c_softmax_with_cross_entropy(ctx, x, label, ignore_index=-100):
    """(softmax, loss): label holds global class ids, loss = log-sum-exp - picked logit."""
    full, lse, off = _c_softmax(ctx, x)
    picked, ignored = _pick(full, label, ignore_index)
    softmax = np.exp(full - lse)[..., off:off + x.shape[-1]]
    return softmax, np.where(ignored, 0.0, lse - picked)


@kernel
def c_softmax_with_multi_label_cross_entropy(ctx, x, label, smooth_weight, ignore_index=-100,
                                             sum_multi_label_loss=True):
    """(softmax, loss): per label (log-sum-exp - picked logit) * smooth_weight, summed over the
    labels (keeping a size-1 dim) when sum_multi_label_loss."""
    full, lse, off = _c_softmax(ctx, x)
    picked, ignored = _pick(full, label, ignore_index)
    loss = np.where(ignored, 0.0, (lse - picked) * smooth_weight)
    if sum_multi_label_loss:
        loss = np.sum(loss, axis=-1, keepdims=True)
    return np.exp(full - lse)[..., off:off + x.shape[-1]], loss


def _rope_one(t, sin, cos, neox):
    """Rotate the head dim of t [b, s, h, d] by per-row angles (sin, cos broadcast [b|1, s, 1, d])."""
    d = t.shape[-1]
    if neox:
        rot = np.concatenate([-t[..., d // 2:], t[..., :d // 2]], axis=-1)
    else:
        rot = np.stack([-t[..., 1::2], t[..., 0::2]], axis=-1).reshape(t.shape)
    return t * cos + rot * sin


@kernel
def fused_rope(q, k, v, sin, cos, position_ids, use_neox_rotary_style=True, time_major=False,
               rotary_emb_base=10000.0):
    """(out_q, out_k, out_v) of fused_rotary_position_embedding; an absent k or v gives an empty
    placeholder. Without sin/cos the angles of positions 0..s-1 are computed from the base."""
    sw = (lambda t: np.swapaxes(t, 0, 1)) if time_major else (lambda t: t)
    qb = sw(q)
    b, s, _, d = qb.shape
    if sin is None or cos is None:
        inv = rotary_emb_base ** (-np.arange(0, d, 2) / d)
        ang = np.arange(s)[:, None] * inv[None, :]
        rep = np.concatenate([ang, ang], -1) if use_neox_rotary_style else np.repeat(ang, 2, -1)
        sin_t, cos_t = np.sin(rep)[None, :, None, :], np.cos(rep)[None, :, None, :]
    else:
        sin2, cos2 = sin.reshape(sin.shape[-3] if sin.ndim == 4 else sin.shape[0], d), None
        cos2 = cos.reshape(sin2.shape)
        if position_ids is not None:
            ids = np.asarray(position_ids, dtype=np.int64)
            sin_t, cos_t = sin2[ids][:, :, None, :], cos2[ids][:, :, None, :]
        else:
            sin_t, cos_t = sin2[None, :, None, :], cos2[None, :, None, :]
    outs = []
    for t in (q, k, v):
        outs.append(np.zeros(()) if t is None else sw(_rope_one(sw(t), sin_t, cos_t, use_neox_rotary_style)))
    return tuple(outs)


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


def _value_head_dim(rng, mesh, d):
    """v's head dim (out's): q's and k's, or sometimes another size (flash attention allows it).
    Drawn from a child generator, so the rest of the case is drawn as it was before v could differ."""
    child = rng.spawn(1)[0]
    return random_dim(child, mesh) if child.random() < 0.3 else d


@sampler
def flash_attention(rng, mesh, opts):
    b, s, t, h, d = _attention_shapes(rng, mesh)
    e = _value_head_dim(rng, mesh, d)
    q = tensor(rng, (b, s, h, d), mesh, opts)
    k = tensor(rng, (b, t, h, d), mesh, opts)
    v = tensor(rng, (b, t, h, e), mesh, opts)
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
    x = tensor(rng, random_shape(rng, _rank(rng, 0, 2), mesh) + (k,), mesh, opts)
    tw = bool(rng.random() < 0.15)  # Paddle's rule rejects a transposed weight
    w = tensor(rng, (n, k) if tw else (k, n), mesh, opts)
    bias = tensor(rng, (n,), mesh, opts) if rng.random() < 0.9 else None
    return Sample([x, w, bias], {"transpose_weight": tw})


@sampler
def gemm_epilogue(rng, mesh, opts):
    m, k, n = (random_dim(rng, mesh) for _ in range(3))
    tx, ty = bool(rng.integers(2)), bool(rng.integers(2))
    batch = random_shape(rng, int(rng.integers(0, 2)) if rng.random() < 0.3 else 0, mesh)
    x = tensor(rng, batch + ((k, m) if tx else (m, k)), mesh, opts)
    y = tensor(rng, (n, k) if ty else (k, n), mesh, opts)
    return Sample([x, y, tensor(rng, (n,), mesh, opts)], {"trans_x": tx, "trans_y": ty})


@sampler
def linear_param_grad(rng, mesh, opts):
    k, n = random_dim(rng, mesh), random_dim(rng, mesh)
    lead = random_shape(rng, _rank(rng, 1, 2), mesh)
    x = tensor(rng, lead + (k,), mesh, opts)
    dout = tensor(rng, lead + (n,), mesh, opts)
    has_bias = bool(rng.random() < 0.8)
    # Paddle rejects a given dweight/dbias whose layout is not the grad's: mostly absent (the first
    # accumulation), sometimes given with some layout.
    dweight = tensor(rng, (k, n), mesh, opts) if rng.random() < 0.25 else None
    dbias = tensor(rng, (n,), mesh, opts) if has_bias and rng.random() < 0.25 else None
    return Sample([x, dout, dweight, dbias], {"multi_precision": bool(rng.integers(2)), "has_bias": has_bias})


_LOWER = "abcdefghijklmnopqrstuvwxyz"


def _einsum_case(rng, mesh):
    """(equation, operand shapes): 1-3 operands; explicit or implicit result; sometimes '...',
    a diagonal, an outer product, upper-case labels."""
    r = rng.random()
    n_ops = 1 if r < 0.3 else 2 if r < 0.94 else 3
    pool = list(_LOWER[:8]) + (list("IJK") if rng.random() < 0.2 else [])
    outer = n_ops == 2 and rng.random() < 0.2
    labels = [str(c) for c in rng.permutation(pool)[:int(rng.integers(1, 6))]]
    size = {l: random_dim(rng, mesh) for l in pool}
    ops = []
    if outer:
        cut = int(rng.integers(0, len(labels) + 1))
        ops = [labels[:cut], labels[cut:]]
    else:
        for _ in range(n_ops):
            k = int(rng.integers(0, min(3, len(labels)) + 1))
            ops.append([str(c) for c in rng.permutation(labels)[:k]])
    if not outer and rng.random() < 0.1:  # a diagonal: one label twice in an operand
        i = int(rng.integers(n_ops))
        if ops[i]:
            ops[i].insert(int(rng.integers(len(ops[i]) + 1)), ops[i][int(rng.integers(len(ops[i])))])
    ell = rng.random() < 0.12 and not outer
    n_ell = int(rng.integers(1, 3)) if ell else 0
    ell_sizes = random_shape(rng, n_ell, mesh)
    ell_k = [int(rng.integers(0, n_ell + 1)) if ell and rng.random() < 0.8 else 0 for _ in ops]
    if ell:
        ell_k[0] = n_ell
    present = [l for o in ops for l in o]
    once = [l for l in dict.fromkeys(present) if present.count(l) == 1]
    implicit = rng.random() < 0.1
    if outer:
        result = [str(c) for c in rng.permutation(present)]
    else:
        keep = [l for l in dict.fromkeys(present) if l not in once or rng.random() < 0.8]
        result = [str(c) for c in rng.permutation([l for l in keep if rng.random() < 0.7])]
        result = [l for l in result if not any(o.count(l) > 1 for o in ops)] if rng.random() < 0.5 else result
    dots = lambda k: "..." if k or (ell and rng.random() < 0.3) else ""
    lhs = ",".join(dots(k) + "".join(o) for k, o in zip(ell_k, ops))
    result = list(dict.fromkeys(result))
    if result and not implicit and rng.random() < 0.05:  # a label twice in the result (Paddle's "ij->ii")
        result.insert(int(rng.integers(len(result) + 1)), result[int(rng.integers(len(result)))])
    eq = lhs if implicit else lhs + "->" + ("..." if ell else "") + "".join(result)
    shapes = [tuple(ell_sizes[n_ell - k:]) + tuple(size[l] for l in o) for k, o in zip(ell_k, ops)]
    shared = [l for l in dict.fromkeys(present) if sum(l in o for o in ops) > 1 and size[l] > 1]
    if shared and rng.random() < 0.1:  # a size-1 dim of a label broadcast against the larger one
        l = shared[int(rng.integers(len(shared)))]
        i = next(i for i, o in enumerate(ops) if l in o)
        off = ell_k[i]  # the leading dims of operand i are its "..." dims
        shapes[i] = tuple(1 if j >= off and ops[i][j - off] == l else d for j, d in enumerate(shapes[i]))
    return eq, shapes


@sampler
def einsum(rng, mesh, opts):
    eq, shapes = _einsum_case(rng, mesh)
    return Sample([[tensor(rng, s, mesh, opts) for s in shapes]], {"equation": eq})


@sampler
def einsum_grad(rng, mesh, opts):
    eq, shapes = _einsum_case(rng, mesh)
    out = einsum_kernel(eq, [np.zeros(s) for s in shapes]).shape
    xs = [tensor(rng, s, mesh, opts) for s in shapes]
    cache = [tensor(rng, s, mesh, opts) for s in shapes]  # not read by the grad
    return Sample([xs, cache, tensor(rng, out, mesh, opts)], {"equation": eq})


def _ncs(rng, mesh, lo=2, hi=5):
    return random_shape(rng, _rank(rng, lo, hi), mesh)


@sampler
def batch_norm(rng, mesh, opts):
    x = tensor(rng, _ncs(rng, mesh), mesh, opts)
    c = (x.shape[1],)
    return Sample([x] + [tensor(rng, c, mesh, opts, allow_partial=False) for _ in range(4)])


@sampler
def group_norm(rng, mesh, opts):
    x = tensor(rng, _ncs(rng, mesh, 3, 5), mesh, opts)
    c = (x.shape[1],)
    return Sample([x] + [_param(rng, c, mesh, opts) if rng.random() < 0.95 else None for _ in range(2)])


def _instance_shape(rng, mesh):
    r = rng.random()  # Paddle's rule wants NCHW; rank 3 corrupts its heap (paddle_hazards.py)
    return random_shape(rng, 4 if r < 0.85 else 3 if r < 0.93 else 5, mesh)


@sampler
def instance_norm(rng, mesh, opts):
    x = tensor(rng, _instance_shape(rng, mesh), mesh, opts)
    c = (x.shape[1],)
    return Sample([x] + [_param(rng, c, mesh, opts) if rng.random() < 0.95 else None for _ in range(2)])


@sampler
def instance_norm_grad(rng, mesh, opts):
    shape = _instance_shape(rng, mesh)
    c, nc = (shape[1],), shape[:2]
    if rng.random() < 0.3:  # 1-D, as Paddle's kernel holds them
        nc = (nc[0] * nc[1],)
    stats = [tensor(rng, nc, mesh, opts, allow_partial=False) for _ in range(2)]
    return Sample([tensor(rng, shape, mesh, opts), _param(rng, c, mesh, opts), _param(rng, c, mesh, opts)]
                  + stats + [tensor(rng, shape, mesh, opts)])


@sampler
def layer_norm_grad(rng, mesh, opts):
    from math import prod
    shape = random_shape(rng, _rank(rng, 2, 4), mesh)
    b = int(rng.integers(1, len(shape)))
    n = (prod(shape[b:]),)
    stats = (prod(shape[:b]),) if rng.random() < 0.3 else shape[:b]  # 1-D, as Paddle's kernel holds them
    return Sample([tensor(rng, shape, mesh, opts), _param(rng, n, mesh, opts), _param(rng, n, mesh, opts),
                   tensor(rng, stats, mesh, opts, allow_partial=False),
                   tensor(rng, stats, mesh, opts, allow_partial=False),
                   tensor(rng, shape, mesh, opts)], {"begin_norm_axis": b})


@sampler
def flash_attention_grad(rng, mesh, opts):
    b, s, t, h, d = _attention_shapes(rng, mesh)
    e = _value_head_dim(rng, mesh, d)
    q = tensor(rng, (b, s, h, d), mesh, opts)
    k = tensor(rng, (b, t, h, d), mesh, opts)
    v = tensor(rng, (b, t, h, e), mesh, opts)
    out = tensor(rng, (b, s, h, e), mesh, opts)
    lse = tensor(rng, (b, h, s), mesh, opts)
    seed = TensorArg((2,), Placement.replicated(1), int_high=1000)
    mask = tensor(rng, (b, 1 if rng.random() < 0.5 else h, s, t), mesh, opts) if rng.random() < 0.7 else None
    return Sample([q, k, v, out, lse, seed, mask, tensor(rng, (b, s, h, e), mesh, opts)],
                  {"dropout": 0.0, "causal": bool(rng.integers(2)) and s == t})


def _classes(rng, mesh):
    lead = random_shape(rng, _rank(rng, 0, 2), mesh)
    c = random_dim(rng, mesh)
    return lead, max(c, 2)


@sampler
def c_softmax_ce(rng, mesh, opts):
    lead, c = _classes(rng, mesh)
    x = tensor(rng, lead + (c,), mesh, opts)
    label = tensor(rng, lead + (1,), mesh, opts, int_high=c)
    ignore = -100 if rng.random() < 0.7 else int(rng.integers(0, c))
    return Sample([x, label], {"ignore_index": ignore, "rank": 0, "nranks": 1})


@sampler
def c_softmax_multi_label_ce(rng, mesh, opts):
    lead, c = _classes(rng, mesh)
    n_labels = random_dim(rng, mesh)
    x = tensor(rng, lead + (c,), mesh, opts)
    label = tensor(rng, lead + (n_labels,), mesh, opts, int_high=c)
    weight = tensor(rng, lead + (n_labels,), mesh, opts, allow_partial=False)
    ignore = -100 if rng.random() < 0.7 else int(rng.integers(0, c))
    return Sample([x, label, weight], {"ignore_index": ignore, "sum_multi_label_loss": bool(rng.integers(2)),
                                       "rank": 0, "nranks": 1})


@sampler
def fused_rope(rng, mesh, opts):
    b, s, h = (random_dim(rng, mesh) for _ in range(3))
    d = 2 * int(rng.integers(1, 4)) * (2 if rng.random() < 0.5 else 1)
    time_major = bool(rng.random() < 0.25)
    shape = (s, b, h, d) if time_major else (b, s, h, d)
    q = tensor(rng, shape, mesh, opts)
    k = tensor(rng, shape, mesh, opts) if rng.random() < 0.7 else None
    v = tensor(rng, shape, mesh, opts) if rng.random() < 0.5 else None
    r = rng.random()
    sin = cos = ids = None
    if r < 0.75:  # sin/cos given: row by row, or a table looked up by position_ids
        with_ids = rng.random() < 0.35
        rows = s + int(rng.integers(0, 4)) if with_ids else s
        tab = (rows, d) if rng.random() < 0.5 else (1, rows, 1, d)
        sin, cos = tensor(rng, tab, mesh, opts, allow_partial=False), tensor(rng, tab, mesh, opts, allow_partial=False)
        if with_ids:
            ids = tensor(rng, (b, s), mesh, opts, int_high=rows)
    return Sample([q, k, v, sin, cos, ids], {"use_neox_rotary_style": bool(rng.integers(2)), "time_major": time_major,
                                             "rotary_emb_base": 10000.0})


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
