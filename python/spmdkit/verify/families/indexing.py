"""Samplers and reference kernels of the indexing / embedding / MoE family.

Index tensors hold global ids (`int_high` bounds them), so a kernel run on a rank's shards gathers
and scatters at global positions: a rule that splits a dim an index addresses shows up as wrong.
Where the op's result depends on the order of duplicate writes (overwriting scatters), the kernels
use numpy's order (the last write wins), which is the same on every rank that holds the writes.
"""
from __future__ import annotations

import numpy as np

from ..cases import Sample
from ..kernels import kernel
from ..samplers import _rank, random_dim, random_shape, sampler, tensor


def _ids(a):
    return np.asarray(a, dtype=np.int64)


def _axis(rng, rank):
    a = int(rng.integers(0, rank))
    return a - rank if rng.random() < 0.3 else a


def _shorter(rng, n, p=0.25):
    """n, or (with probability p) a size in [1, n) where n allows one."""
    return int(rng.integers(1, n)) if n > 1 and rng.random() < p else n


# ---- kernels --------------------------------------------------------------------------------
def _coords(index, shape):
    """The index's coordinates, each taken modulo x's global size in its dim (so that one random
    index tensor addresses every row of dims of different sizes)."""
    index = _ids(index)
    return tuple(index[..., j] % shape[j] for j in range(index.shape[-1]))


@kernel
def gather_nd(x, index, x_shape=None):
    """out[i...] = x[index[i..., 0], ..., index[i..., k-1], ...] (k = index.shape[-1])."""
    return x[_coords(index, x_shape or x.shape)]


@kernel
def scatter(x, index, updates, overwrite=True):
    """x with rows `index` replaced by the updates' rows (overwrite), or zeroed and then summed
    with every update row that names them."""
    out = np.array(x, dtype=np.result_type(x, updates, np.float64))
    index = _ids(index)
    updates = updates[:len(index)]  # Paddle's kernel takes updates with more rows and reads the first
    if overwrite:
        out[index] = updates
    else:
        out[index] = 0.0
        np.add.at(out, index, updates)
    return out


@kernel
def scatter_nd_add(x, index, updates, x_shape=None):
    out = np.array(x, dtype=np.result_type(x, updates, np.float64))
    np.add.at(out, _coords(index, x_shape or x.shape), updates)
    return out


def _along(index, axis):
    """Positions in x of every index element: its own coordinates, with `axis` from its value."""
    idx = list(np.indices(index.shape, sparse=True))
    idx[axis] = _ids(index)
    return tuple(idx)


_UFUNC = {"add": np.add, "mul": np.multiply, "multiply": np.multiply, "amax": np.maximum, "amin": np.minimum}


@kernel
def put_along_axis(x, index, value, axis, reduce="assign", include_self=True):
    """Paddle's put_along_axis on an index no longer than x in any dim: each index element sends
    its value to x at its own coordinates with `axis` replaced by the element."""
    axis = axis % x.ndim
    value = np.broadcast_to(value, index.shape)
    out = np.array(x, dtype=np.result_type(x, value, np.float64))
    pos = _along(index, axis)
    if reduce == "assign":
        out[pos] = value
        return out
    touched = np.zeros(x.shape, dtype=bool)
    touched[pos] = True
    if reduce == "mean":
        total = np.where(touched, 0.0, out) if not include_self else out.copy()
        count = np.where(touched, 1.0 if include_self else 0.0, 1.0)
        np.add.at(total, pos, value)
        np.add.at(count, pos, 1.0)
        return total / count
    fn = _UFUNC[reduce]
    if not include_self:
        start = {"add": 0.0, "mul": 1.0, "multiply": 1.0, "amax": -np.inf, "amin": np.inf}[reduce]
        out[touched] = start
    fn.at(out, pos, value)
    return out


@kernel
def put_along_axis_grad(x, index, value, out, out_grad, axis, reduce="assign", include_self=True):
    """(x_grad, value_grad). x_grad: out_grad where x survives (scaled by the product of the values
    sent there for mul, by 1/count for mean, masked to the winner for amax/amin); value_grad:
    out_grad at the positions each value went to (times out/value for mul, over count for mean,
    masked to the winners for amax/amin)."""
    axis = axis % x.ndim
    value = np.broadcast_to(value, index.shape)
    pos = _along(index, axis)
    touched = np.zeros(x.shape, dtype=bool)
    touched[pos] = True
    g = np.asarray(out_grad, dtype=np.float64)
    keep = np.ones(x.shape) if include_self else np.where(touched, 0.0, 1.0)
    if reduce == "assign":
        return np.where(touched, 0.0, g), g[pos]
    if reduce == "add":
        return g * keep, g[pos]
    if reduce in ("mul", "multiply"):
        prod = np.ones(x.shape)
        np.multiply.at(prod, pos, value)
        return g * keep * prod, (g * out)[pos] / value
    if reduce == "mean":
        count = np.where(touched, 1.0 if include_self else 0.0, 1.0)
        np.add.at(count, pos, 1.0)
        return g * keep / count, (g / count)[pos]
    win = np.asarray(out)
    return g * keep * (x == win), g[pos] * (value == win[pos])


@kernel
def index_put(x, indices, value, accumulate=False):
    out = np.array(x, dtype=np.result_type(x, value, np.float64))
    pos = tuple(_ids(i) for i in indices)
    if accumulate:
        np.add.at(out, pos, np.broadcast_to(value, out[pos].shape))
    else:
        out[pos] = value
    return out


@kernel
def index_put_grad(x, indices, value, out_grad, accumulate=False):
    """(x_grad, value_grad): out_grad, zeroed at the written positions unless accumulating; and
    out_grad's selected block summed down to value's shape."""
    pos = tuple(_ids(i) for i in indices)
    g = np.asarray(out_grad, dtype=np.float64)
    x_grad = g.copy()
    if not accumulate:
        x_grad[pos] = 0.0
    block = g[pos]
    lead = block.ndim - np.ndim(value)
    vg = block.sum(axis=tuple(range(lead))) if lead > 0 else block
    for d, n in enumerate(np.shape(value)):
        if n == 1 and vg.shape[d] != 1:
            vg = vg.sum(axis=d, keepdims=True)
    return x_grad, vg


@kernel
def embedding_grad(x, weight, out_grad, padding_idx=-1):
    """weight_grad [rows, out_grad's last dim]: out_grad's rows summed per id; the padding row 0."""
    ids = _ids(x)
    wg = np.zeros((weight.shape[0], out_grad.shape[-1]))
    np.add.at(wg, ids, out_grad)
    if padding_idx is not None and padding_idx >= 0 and padding_idx < wg.shape[0]:
        wg[padding_idx] = 0.0
    return wg


@kernel
def c_embedding(weight, x, start_index):
    """Rows [start_index, start_index + rows) of the table are here; other ids look up zeros."""
    local = _ids(x) - start_index
    mine = (local >= 0) & (local < weight.shape[0])
    out = weight[np.where(mine, local, 0)] if weight.shape[0] else np.zeros(np.shape(x) + weight.shape[1:])
    return np.where(mine[..., None], out, 0.0)


@kernel
def c_embedding_grad(weight, x, out_grad, start_index):
    local = _ids(x) - start_index
    mine = (local >= 0) & (local < weight.shape[0])
    wg = np.zeros((weight.shape[0], out_grad.shape[-1]))
    np.add.at(wg, local[mine], np.asarray(out_grad)[mine])
    return wg


@kernel
def moe_combine(x, combine_weights, scatter_index):
    """y[s] = sum_k x[scatter_index[s, k]] * combine_weights[s, k]."""
    return np.einsum("skh,sk->sh", x[_ids(scatter_index)], combine_weights)


@kernel
def moe_combine_grad(x, combine_weights, scatter_index, grad_y):
    """(x_grad, combine_weights_grad, scatter_index_grad = zeros)."""
    si = _ids(scatter_index)
    x_grad = np.zeros(x.shape)
    np.add.at(x_grad, si, grad_y[:, None, :] * combine_weights[:, :, None])
    cw_grad = np.einsum("sh,skh->sk", grad_y, x[si])
    return x_grad, cw_grad, np.zeros(si.shape)


@kernel
def moe_gate_dispatch(x, gate_logits, corr_bias, k, capacity, use_pad=True):
    """(y [E, C, H], combine_weights [S, K], scatter_index [K, S], expert_offset [E], expert_id [S, K]).

    Each token takes its top-k experts by gate_logits (+ corr_bias, for the choice only); the
    (token, choice) pairs are ordered by expert, then by choice-major source row k_idx * S + s;
    the c-th pair of expert e goes to y[e, c] and scatter_index = e * C + c, while pairs past the
    capacity are dropped (scatter_index 0, combine weight 0). expert_offset[e] counts the pairs of
    experts <= e, dropped ones included."""
    S, E = gate_logits.shape
    scores = gate_logits + (corr_bias if corr_bias is not None else 0.0)
    expert_id = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    weights = np.take_along_axis(gate_logits, expert_id, axis=1).astype(np.float64)
    src = np.arange(k)[None, :] * S + np.arange(S)[:, None]            # [S, K] source rows
    order = np.lexsort((src.ravel(), expert_id.ravel()))
    experts, sources = expert_id.ravel()[order], src.ravel()[order]
    expert_offset = np.searchsorted(experts, np.arange(E), side="right")
    y = np.zeros((E, capacity, x.shape[1]))
    scatter_index = np.zeros((k, S), dtype=np.int64)
    start = np.concatenate([[0], expert_offset[:-1]])
    for d, (e, r) in enumerate(zip(experts, sources)):
        c, kk, s = d - start[e], r // S, r % S
        if c < capacity:
            y[e, c] = x[s]
            scatter_index[kk, s] = e * capacity + c
        else:
            weights[s, kk] = 0.0
    return y, weights, scatter_index, expert_offset, expert_id


# ---- samplers -------------------------------------------------------------------------------
def _coordinates(rng, mesh, x):
    """k, and x with its first k dims (the ones the index addresses) of size 2 at least, so that
    coordinates vary and a split of those dims shows."""
    k = int(rng.integers(1, len(x) + 1))
    return k, tuple(max(2, n) if d < k else n for d, n in enumerate(x))


@sampler
def gather_nd(rng, mesh, opts):
    k, x = _coordinates(rng, mesh, random_shape(rng, _rank(rng, 1, 4), mesh))
    batch = random_shape(rng, int(rng.integers(0, 3)), mesh)
    index = tensor(rng, batch + (k,), mesh, opts, int_high=max(x[:k]))
    return Sample([tensor(rng, x, mesh, opts), index])


@sampler
def scatter(rng, mesh, opts):
    """x has more rows than there are updates, so some row is written by no update: a rule that
    leaves the output partial over split updates then counts that row once per rank, and shows."""
    m = random_dim(rng, mesh)
    x = random_shape(rng, _rank(rng, 1, 3), mesh)
    if x[0] <= m:
        x = (m + int(rng.integers(1, 4)),) + x[1:]
    u = m + int(rng.integers(1, 3)) if rng.random() < 0.2 else m  # sometimes more update rows than ids
    return Sample([tensor(rng, x, mesh, opts), tensor(rng, (m,), mesh, opts, int_high=x[0]),
                   tensor(rng, (u,) + x[1:], mesh, opts)])


@sampler
def scatter_nd_add(rng, mesh, opts):
    k, x = _coordinates(rng, mesh, random_shape(rng, _rank(rng, 1, 3), mesh))
    batch = random_shape(rng, int(rng.integers(0, 3)), mesh)
    index = tensor(rng, batch + (k,), mesh, opts, int_high=max(x[:k]))
    return Sample([tensor(rng, x, mesh, opts), index, tensor(rng, batch + x[k:], mesh, opts)])


_REDUCES = ["assign", "add", "mul", "multiply", "mean", "amin", "amax"]


@sampler
def put_along_axis(rng, mesh, opts):
    x = random_shape(rng, _rank(rng, 1, 3), mesh)
    axis = _axis(rng, len(x))
    a = axis % len(x)
    ishape = tuple(random_dim(rng, mesh) if d == a else _shorter(rng, n) for d, n in enumerate(x))
    return Sample([tensor(rng, x, mesh, opts), tensor(rng, ishape, mesh, opts, int_high=x[a]),
                   tensor(rng, ishape, mesh, opts)],
                  {"axis": axis, "reduce": str(rng.choice(_REDUCES))})


@sampler
def put_along_axis_grad(rng, mesh, opts):
    s = put_along_axis(rng, mesh, opts)
    x = s.inputs[0]
    return Sample(s.inputs + [tensor(rng, x.shape, mesh, opts), tensor(rng, x.shape, mesh, opts)], s.attrs)


def _index_put(rng, mesh, opts):
    x = random_shape(rng, _rank(rng, 1, 4), mesh)
    k = int(rng.integers(1, len(x) + 1))
    m = random_dim(rng, mesh)
    indices = [tensor(rng, (m,), mesh, opts, int_high=x[i]) for i in range(k)]
    v = 1 if rng.random() < 0.4 else (x[-1] if k < len(x) else m)
    return tensor(rng, x, mesh, opts), indices, tensor(rng, (v,), mesh, opts)


@sampler
def index_put(rng, mesh, opts):
    x, indices, value = _index_put(rng, mesh, opts)
    return Sample([x, indices, value])


@sampler
def index_put_grad(rng, mesh, opts):
    x, indices, value = _index_put(rng, mesh, opts)
    return Sample([x, indices, value, tensor(rng, x.shape, mesh, opts)])


def _ids_shape(rng, mesh):
    return random_shape(rng, _rank(rng, 1, 3), mesh)


@sampler
def embedding_grad(rng, mesh, opts):
    vocab, hidden = max(2, random_dim(rng, mesh)), random_dim(rng, mesh)
    ids = _ids_shape(rng, mesh)
    pad = -1 if vocab < 4 or rng.random() < 0.6 else int(rng.integers(0, vocab))
    return Sample([tensor(rng, ids, mesh, opts, int_high=vocab), tensor(rng, (vocab, hidden), mesh, opts),
                   tensor(rng, ids + (hidden,), mesh, opts)], {"padding_idx": pad, "sparse": False})


def _c_embedding(rng, mesh, opts):
    rows, hidden = random_dim(rng, mesh), random_dim(rng, mesh)
    start = int(rng.integers(0, 3))
    ids = _ids_shape(rng, mesh)
    while np.prod(ids) < 4:  # a few ids at least, so that some of them hit the table
        ids = _ids_shape(rng, mesh)
    # ids below, inside and above this table's rows (mostly inside)
    x = tensor(rng, ids, mesh, opts, int_high=start + rows + int(rng.integers(0, 3)))
    return tensor(rng, (rows, hidden), mesh, opts), x, start


@sampler
def c_embedding(rng, mesh, opts):
    weight, x, start = _c_embedding(rng, mesh, opts)
    return Sample([weight, x], {"start_index": start, "vocab_size": x.int_high})


@sampler
def c_embedding_grad(rng, mesh, opts):
    weight, x, start = _c_embedding(rng, mesh, opts)
    return Sample([weight, x, tensor(rng, x.shape + weight.shape[1:], mesh, opts)], {"start_index": start})


def _moe_combine(rng, mesh, opts):
    # several tokens: a rule that splits a 1-token dim can be right by leaving a rank empty
    s, h, rows = max(2, random_dim(rng, mesh)), random_dim(rng, mesh), random_dim(rng, mesh)
    k = int(rng.choice([1, 2, 2, 3, 4]))
    return (tensor(rng, (rows, h), mesh, opts), tensor(rng, (s, k), mesh, opts),
            tensor(rng, (s, k), mesh, opts, int_high=rows))


@sampler
def moe_combine(rng, mesh, opts):
    return Sample(list(_moe_combine(rng, mesh, opts)))


@sampler
def moe_combine_grad(rng, mesh, opts):
    x, cw, si = _moe_combine(rng, mesh, opts)
    return Sample([x, cw, si, tensor(rng, (cw.shape[0], x.shape[1]), mesh, opts)])


@sampler
def moe_gate_dispatch(rng, mesh, opts):
    s, h = random_dim(rng, mesh), random_dim(rng, mesh)
    e = max(2, random_dim(rng, mesh))
    k = int(rng.integers(1, min(e, 3) + 1))
    capacity = int(rng.integers(1, s + 2))
    bias = tensor(rng, (e,), mesh, opts) if rng.random() < 0.5 else None
    return Sample([tensor(rng, (s, h), mesh, opts), tensor(rng, (s, e), mesh, opts), bias],
                  {"k": k, "capacity": capacity, "use_pad": True})
