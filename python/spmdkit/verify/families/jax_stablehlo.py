"""Samplers and reference kernels of the JAX / StableHLO family (rules_yaml/jax_*.yaml).

Kernels follow the StableHLO spec (start indices clamped into range, as XLA and jax's default
gather/scatter mode do) and run on global tensors and on one rank's shards alike. Attribute
values are JAX's: dims are absolute (no negative counting), empty `axes` reduce nothing.
"""
from __future__ import annotations

import math

import numpy as np

from ..cases import Sample
from ..kernels import kernel
from ..samplers import _rank, random_dim, random_shape, sampler, tensor
from .slice_layout import concat_inputs


# ---- kernels ---------------------------------------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[float])


@kernel
def erf_elementwise(x):
    return _erf(x)


_COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
            "GE": np.greater_equal}


@kernel
def hlo_compare(x, y, direction):
    return _COMPARE[direction](x, y).astype(float)


@kernel
def select_n(which, cases):
    return np.choose(np.asarray(which).astype(np.int64), [np.asarray(c) for c in cases])


@kernel
def broadcast_in_dim(operand, shape, broadcast_dimensions):
    view = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        view[d] = operand.shape[i]
    return np.broadcast_to(np.reshape(operand, view), tuple(shape)).copy()


@kernel
def split_sizes(operand, sizes, axis):
    return tuple(np.split(operand, np.cumsum([int(n) for n in sizes])[:-1].tolist(), axis=axis))


@kernel
def hlo_slice(operand, start_indices, limit_indices, strides=()):
    strides = list(strides) or [1] * operand.ndim
    return operand[tuple(slice(a, b, s) for a, b, s in zip(start_indices, limit_indices, strides))].copy()


def _starts(operand, start_indices, sizes):
    """StableHLO's dynamic start: each index clamped so that the window fits."""
    return [int(np.clip(int(np.asarray(s)), 0, n - w)) for s, n, w in zip(start_indices, operand.shape, sizes)]


@kernel
def dynamic_slice(operand, start_indices, slice_sizes):
    # A window that spans its whole dim is that dim (split, a rank holds a shard of it).
    sizes = [min(w, n) for w, n in zip(slice_sizes, operand.shape)]
    s = _starts(operand, start_indices, sizes)
    return operand[tuple(slice(a, a + w) for a, w in zip(s, sizes))].copy()


@kernel
def dynamic_update_slice(operand, update, start_indices):
    out = operand.copy()
    s = _starts(operand, start_indices, update.shape)
    out[tuple(slice(a, a + w) for a, w in zip(s, update.shape))] = update
    return out


@kernel
def hlo_pad(operand, padding_value, low, high, interior):
    value = float(np.asarray(padding_value))
    x = operand
    for d, step in enumerate(interior):  # interior padding: `step` values between neighbours
        if step and x.shape[d] > 1:
            n = x.shape[d]
            shape = list(x.shape)
            shape[d] = n + (n - 1) * step
            y = np.full(shape, value)
            idx = [slice(None)] * x.ndim
            idx[d] = slice(0, shape[d], step + 1)
            y[tuple(idx)] = x
            x = y
    for d, (lo, hi) in enumerate(zip(low, high)):  # edges: negative values crop
        width = [(0, 0)] * x.ndim
        width[d] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, width, constant_values=value)
        idx = [slice(None)] * x.ndim
        idx[d] = slice(max(-lo, 0), x.shape[d] - max(-hi, 0))
        x = x[tuple(idx)]
    return x.copy()


@kernel
def jax_cumulative(fn, x, axis, reverse=False):
    if reverse:
        x = np.flip(x, axis)
    out = fn.accumulate(x, axis=axis)
    return np.flip(out, axis).copy() if reverse else out


_HLO_REDUCE = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply,
               "and": np.logical_and, "or": np.logical_or}


@kernel
def hlo_reduce(operand, init_value, dimensions, body):
    fn = _HLO_REDUCE[body]
    if body in ("and", "or"):
        operand, init_value = operand > 0, np.asarray(init_value) > 0
    out = fn.reduce(operand, axis=tuple(dimensions)) if len(dimensions) else operand
    return fn(out, init_value).astype(float)


def dot_letters(lhs_ndim, rhs_ndim, lhs_contracting, rhs_contracting, lhs_batching=(), rhs_batching=(), rhs_given=None):
    """A dot_general's einsum letters: (lhs's, rhs's, batch letters, free letters in result
    order). `rhs_given`: rhs dims already lettered (dim -> letter), neither batch nor free."""
    given = dict(rhs_given or {})
    letters = (c for c in "abcdefghijklmnopqrstuvwxyz" if c not in given.values())
    lhs_l, rhs_l = [None] * lhs_ndim, [given.get(d) for d in range(rhs_ndim)]
    batch = []
    for a, b in zip(lhs_batching, rhs_batching):
        lhs_l[a] = rhs_l[b] = c = next(letters)
        batch.append(c)
    for a, b in zip(lhs_contracting, rhs_contracting):
        lhs_l[a] = rhs_l[b] = next(letters)
    free = []
    for labels in (lhs_l, rhs_l):
        for d, c in enumerate(labels):
            if c is None:
                labels[d] = c = next(letters)
                free.append(c)
    return lhs_l, rhs_l, batch, free


@kernel
def dot_general(lhs, rhs, lhs_contracting, rhs_contracting, lhs_batching=(), rhs_batching=()):
    lhs_l, rhs_l, batch, free = dot_letters(lhs.ndim, rhs.ndim, lhs_contracting, rhs_contracting, lhs_batching,
                                            rhs_batching)
    return np.einsum(f"{''.join(lhs_l)},{''.join(rhs_l)}->{''.join(batch + free)}", lhs, rhs)


def _index_vectors(indices, index_vector_dim):
    """Indices with the index vector dim last (added when implicit), and its position."""
    idx = np.asarray(indices).astype(np.int64)
    ivd = idx.ndim - 1 if index_vector_dim < 0 else index_vector_dim
    if ivd == idx.ndim:
        idx = idx[..., None]
    return np.moveaxis(idx, ivd, -1), ivd


def _start(operand_shape, vector, batch_pos, start_map, operand_batching, indices_batching, ivd, windows):
    start = [0] * len(operand_shape)
    for k, d in enumerate(start_map):
        start[d] = int(vector[k])
    for od, idim in zip(operand_batching, indices_batching):
        start[od] = batch_pos[idim if idim < ivd else idim - 1]
    return [int(np.clip(s, 0, n - w)) for s, n, w in zip(start, operand_shape, windows)]


@kernel
def hlo_gather(operand, start_indices, offset_dims, collapsed_slice_dims, start_index_map, slice_sizes,
               operand_batching_dims=(), start_indices_batching_dims=(), index_vector_dim=-1):
    idx, ivd = _index_vectors(start_indices, index_vector_dim)
    # A window that spans its whole dim is that dim (split, a rank holds a shard of it).
    sizes = [min(w, n) for w, n in zip(slice_sizes, operand.shape)]
    window_dims = [d for d in range(operand.ndim) if d not in collapsed_slice_dims and d not in operand_batching_dims]
    out_rank = idx.ndim - 1 + len(offset_dims)
    batch_dims = [d for d in range(out_rank) if d not in offset_dims]
    shape = [0] * out_rank
    for d, n in zip(batch_dims, idx.shape[:-1]):
        shape[d] = n
    for d, od in zip(offset_dims, window_dims):
        shape[d] = sizes[od]
    out = np.zeros(shape)
    for pos in np.ndindex(*shape):
        b = [pos[d] for d in batch_dims]
        s = _start(operand.shape, idx[tuple(b)], b, start_index_map, operand_batching_dims,
                   start_indices_batching_dims, ivd, sizes)
        for d, od in zip(offset_dims, window_dims):
            s[od] += pos[d]
        out[pos] = operand[tuple(s)]
    return out


@kernel
def hlo_scatter_combine(fn, operand, scatter_indices, updates, update_window_dims, inserted_window_dims,
                        scatter_dims_to_operand_dims, input_batching_dims=(), scatter_indices_batching_dims=(),
                        index_vector_dim=-1):
    """A scatter whose combiner is `fn` (None: the update replaces the element), updates in order."""
    idx, ivd = _index_vectors(scatter_indices, index_vector_dim)
    window_dims = [d for d in range(operand.ndim) if d not in inserted_window_dims and d not in input_batching_dims]
    sizes = [1] * operand.ndim
    for d, od in zip(update_window_dims, window_dims):
        sizes[od] = updates.shape[d]
    scatter_dims = [d for d in range(updates.ndim) if d not in update_window_dims]
    out = np.array(operand, dtype=float)
    for pos in np.ndindex(*updates.shape):
        b = [pos[d] for d in scatter_dims]
        s = _start(operand.shape, idx[tuple(b)], b, scatter_dims_to_operand_dims, input_batching_dims,
                   scatter_indices_batching_dims, ivd, sizes)
        for d, od in zip(update_window_dims, window_dims):
            s[od] += pos[d]
        out[tuple(s)] = updates[pos] if fn is None else fn(out[tuple(s)], updates[pos])
    return out


@kernel
def hlo_scatter_add(operand, scatter_indices, updates, update_window_dims, inserted_window_dims,
                    scatter_dims_to_operand_dims, input_batching_dims=(), scatter_indices_batching_dims=(),
                    index_vector_dim=-1):
    return hlo_scatter_combine(np.add, operand, scatter_indices, updates, update_window_dims, inserted_window_dims,
                               scatter_dims_to_operand_dims, input_batching_dims, scatter_indices_batching_dims,
                               index_vector_dim)


# ---- samplers --------------------------------------------------------------------------------

def _x(rng, mesh, opts, lo=1, hi=4):
    return tensor(rng, random_shape(rng, _rank(rng, lo, hi), mesh), mesh, opts)


def _scalar(rng, mesh, opts, int_high=None):
    return tensor(rng, (), mesh, opts, int_high=int_high)


@sampler
def same_shape_binary(rng, mesh, opts):
    """JAX's binary ops: equal shapes, or one operand a rank-0 literal."""
    x = _x(rng, mesh, opts, 0)
    r = rng.random()
    y = _scalar(rng, mesh, opts) if r < 0.2 else tensor(rng, x.shape, mesh, opts)
    return Sample([y, x] if rng.random() < 0.3 else [x, y])


@sampler
def same_shape_ternary(rng, mesh, opts):
    x = _x(rng, mesh, opts, 0)
    return Sample([_scalar(rng, mesh, opts) if rng.random() < 0.25 else tensor(rng, x.shape, mesh, opts), x,
                   _scalar(rng, mesh, opts) if rng.random() < 0.25 else tensor(rng, x.shape, mesh, opts)])


@sampler
def hlo_compare(rng, mesh, opts):
    s = same_shape_binary(rng, mesh, opts)
    s.attrs = {"comparison_direction": str(rng.choice(list(_COMPARE)))}
    return s


@sampler
def integer_pow(rng, mesh, opts):
    return Sample([_x(rng, mesh, opts, 0)], {"y": int(rng.integers(-2, 4))})


@sampler
def select_n(rng, mesh, opts):
    x = _x(rng, mesh, opts, 0)
    n = int(rng.integers(1, 4))
    which_shape = () if rng.random() < 0.25 else x.shape
    return Sample([tensor(rng, which_shape, mesh, opts, int_high=n), [tensor(rng, x.shape, mesh, opts) for _ in range(n)]])


@sampler
def broadcast_in_dim(rng, mesh, opts):
    out = list(random_shape(rng, _rank(rng, 1, 4), mesh))
    keep = sorted(int(d) for d in rng.choice(len(out), size=int(rng.integers(0, len(out) + 1)), replace=False))
    operand = [1 if rng.random() < 0.25 else out[d] for d in keep]
    return Sample([tensor(rng, operand, mesh, opts)], {"shape": out, "broadcast_dimensions": keep})


def _rename(sample, old, new):
    sample.attrs[new] = sample.attrs.pop(old)
    return sample


@sampler
def jax_reshape(rng, mesh, opts):
    from ..samplers import reshape
    s = reshape(rng, mesh, opts)
    shape = s.attrs["shape"]
    if -1 in shape:  # jax gives the sizes resolved
        shape[shape.index(-1)] = int(np.prod(s.inputs[0].shape)) // int(np.prod([n for n in shape if n != -1]))
    return _rename(s, "shape", "new_sizes")


@sampler
def hlo_reshape(rng, mesh, opts):
    return _rename(jax_reshape(rng, mesh, opts), "new_sizes", "shape")


@sampler
def jax_squeeze(rng, mesh, opts):
    from ..samplers import squeeze
    s = squeeze(rng, mesh, opts)
    shape = s.inputs[0].shape
    axes = sorted({a % len(shape) for a in s.attrs.pop("axis")}) or [d for d, n in enumerate(shape) if n == 1][:1]
    s.attrs["dimensions"] = axes
    return s


@sampler
def jax_expand_dims(rng, mesh, opts):
    x = _x(rng, mesh, opts, 0, 3)
    n = int(rng.integers(1, 3))
    return Sample([x], {"dimensions": sorted(int(a) for a in rng.choice(len(x.shape) + n, size=n, replace=False))})


@sampler
def jax_transpose(rng, mesh, opts):
    x = _x(rng, mesh, opts, 0)
    return Sample([x], {"permutation": [int(p) for p in rng.permutation(len(x.shape))]})


@sampler
def jax_rev(rng, mesh, opts):
    x = _x(rng, mesh, opts)
    r = len(x.shape)
    return Sample([x], {"dimensions": sorted(int(a) for a in rng.choice(r, size=int(rng.integers(0, r + 1)), replace=False))})


@sampler
def jax_concatenate(rng, mesh, opts):
    xs, axis, _ = concat_inputs(rng, mesh, opts)  # Paddle's concat draws the same tensors
    return Sample([xs], {"dimension": axis})


@sampler
def jax_split(rng, mesh, opts):
    x = _x(rng, mesh, opts, 1, 3)
    axis = int(rng.integers(0, len(x.shape)))
    n = x.shape[axis]
    cuts = sorted(int(c) for c in rng.choice(np.arange(0, n + 1), size=int(rng.integers(0, 3))))
    sizes = [b - a for a, b in zip([0] + cuts, cuts + [n])]
    return Sample([x], {"sizes": sizes, "axis": axis})


@sampler
def jax_slice(rng, mesh, opts):
    x = _x(rng, mesh, opts)
    start, limit, strides = [], [], []
    for n in x.shape:
        if rng.random() < 0.5:
            start.append(0), limit.append(n), strides.append(1)
            continue
        a = int(rng.integers(0, n))
        start.append(a)
        limit.append(int(rng.integers(a, n + 1)))
        strides.append(int(rng.integers(1, 3)))
    return Sample([x], {"start_indices": start, "limit_indices": limit, "strides": [] if rng.random() < 0.3 and
                        all(s == 1 for s in strides) else strides})


@sampler
def dynamic_slice(rng, mesh, opts):
    x = _x(rng, mesh, opts)
    sizes = [n if rng.random() < 0.5 else int(rng.integers(0, n + 1)) for n in x.shape]
    starts = [_scalar(rng, mesh, opts, int_high=n + 1) for n in x.shape]
    return Sample([x, starts], {"slice_sizes": sizes})


@sampler
def dynamic_update_slice(rng, mesh, opts):
    x = _x(rng, mesh, opts)
    upd = [n if rng.random() < 0.5 else int(rng.integers(0, n + 1)) for n in x.shape]
    starts = [_scalar(rng, mesh, opts, int_high=n + 1) for n in x.shape]
    return Sample([x, tensor(rng, upd, mesh, opts), starts])


def _padding(rng, shape):
    lo, hi, interior = [], [], []
    for n in shape:
        if rng.random() < 0.5:
            lo.append(0), hi.append(0), interior.append(0)
            continue
        interior.append(int(rng.integers(0, 2)))
        lo.append(int(rng.integers(-min(n, 1), 3)))
        hi.append(int(rng.integers(-min(n, 1), 3)))
    return lo, hi, interior


@sampler
def hlo_pad(rng, mesh, opts):
    x = _x(rng, mesh, opts)
    lo, hi, interior = _padding(rng, x.shape)
    return Sample([x, _scalar(rng, mesh, opts)], {"edge_padding_low": lo, "edge_padding_high": hi,
                                                   "interior_padding": interior})


@sampler
def jax_pad(rng, mesh, opts):
    x = _x(rng, mesh, opts)
    config = [v for triple in zip(*_padding(rng, x.shape)) for v in triple]
    return Sample([x, _scalar(rng, mesh, opts)], {"padding_config": config})


def _axes_subset(rng, r):
    return sorted(int(a) for a in rng.choice(r, size=int(rng.integers(0, r + 1)), replace=False)) if r else []


@sampler
def jax_reduce(rng, mesh, opts):
    x = _x(rng, mesh, opts, 0)
    return Sample([x], {"axes": _axes_subset(rng, len(x.shape))})


@sampler
def jax_reduce_bool(rng, mesh, opts):
    x = _x(rng, mesh, opts, 1)
    return Sample([x], {"axes": _axes_subset(rng, len(x.shape))})


@sampler
def jax_arg_reduce(rng, mesh, opts):
    x = _x(rng, mesh, opts)
    return Sample([x], {"axes": [int(rng.integers(0, len(x.shape)))]})


@sampler
def jax_cumulative(rng, mesh, opts):
    x = _x(rng, mesh, opts)
    return Sample([x], {"axis": int(rng.integers(0, len(x.shape))), "reverse": bool(rng.integers(2))})


@sampler
def hlo_reduce(rng, mesh, opts):
    x = _x(rng, mesh, opts, 1)
    body = str(rng.choice(["sum", "sum", "max", "min", "prod", "and", "or"]))
    return Sample([x, _scalar(rng, mesh, opts)], {"dimensions": _axes_subset(rng, len(x.shape)), "body": body})


@sampler
def dot_general(rng, mesh, opts):
    nb, nc, nl, nr = (int(rng.integers(0, k)) for k in (3, 3, 3, 3))
    b = random_shape(rng, nb, mesh)
    c = random_shape(rng, nc, mesh)
    lf, rf = random_shape(rng, nl, mesh), random_shape(rng, nr, mesh)
    lhs_dims = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("f", i) for i in range(nl)]
    rhs_dims = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("f", i) for i in range(nr)]
    lhs_dims = [lhs_dims[i] for i in rng.permutation(len(lhs_dims))]
    rhs_dims = [rhs_dims[i] for i in rng.permutation(len(rhs_dims))]
    size = {"b": b, "c": c}
    lhs_shape = [size[k][i] if k != "f" else lf[i] for k, i in lhs_dims]
    rhs_shape = [size[k][i] if k != "f" else rf[i] for k, i in rhs_dims]
    pos = lambda dims, k, i: dims.index((k, i))  # noqa: E731
    return Sample([tensor(rng, lhs_shape, mesh, opts), tensor(rng, rhs_shape, mesh, opts)], {
        "lhs_contracting_dimensions": [pos(lhs_dims, "c", i) for i in range(nc)],
        "rhs_contracting_dimensions": [pos(rhs_dims, "c", i) for i in range(nc)],
        "lhs_batching_dimensions": [pos(lhs_dims, "b", i) for i in range(nb)],
        "rhs_batching_dimensions": [pos(rhs_dims, "b", i) for i in range(nb)]})


@sampler
def hlo_dot(rng, mesh, opts):
    m, k, n = (random_dim(rng, mesh) for _ in range(3))
    lhs = (k,) if rng.random() < 0.3 else (m, k)
    rhs = (k,) if rng.random() < 0.3 else (k, n)
    return Sample([tensor(rng, lhs, mesh, opts), tensor(rng, rhs, mesh, opts)])


def _ids(rng, shape, mesh, opts, high):
    return tensor(rng, shape, mesh, opts, int_high=max(int(high), 1))


def _general_gather(rng, mesh, opts):
    """Any valid dimension numbers: batching, collapsed and windowed operand dims, indexed dims
    in any order, free index batch dims, offset dims anywhere in the result."""
    r = int(rng.integers(1, 4))
    operand = [random_dim(rng, mesh) for _ in range(r)]
    dims = [int(d) for d in rng.permutation(r)]
    nb = int(rng.integers(0, min(2, r) + 1)) if r > 1 else 0
    batching = sorted(dims[:nb])
    rest = dims[nb:]
    collapsed = sorted(d for d in rest if rng.random() < 0.4)
    indexed = [d for d in rest if d in collapsed or rng.random() < 0.5]
    start_index_map = [indexed[i] for i in rng.permutation(len(indexed))]
    slice_sizes = [1 if d in batching or d in collapsed else int(rng.integers(1, operand[d] + 1)) for d in range(r)]
    free = [random_dim(rng, mesh) for _ in range(int(rng.integers(0, 3)))]
    batch = [("b", d) for d in batching] + [("f", i) for i in range(len(free))]
    batch = [batch[i] for i in rng.permutation(len(batch))]
    idx_shape = [operand[x] if k == "b" else free[x] for k, x in batch] + [len(start_index_map)]
    windows = [d for d in range(r) if d not in batching and d not in collapsed]
    out_rank = len(batch) + len(windows)
    offset_dims = sorted(int(d) for d in rng.choice(out_rank, size=len(windows), replace=False))
    high = max([operand[d] for d in start_index_map] + [1]) + 1
    attrs = {"offset_dims": offset_dims, "collapsed_slice_dims": collapsed, "start_index_map": start_index_map,
             "slice_sizes": slice_sizes, "operand_batching_dims": [d for k, d in batch if k == "b"],
             "start_indices_batching_dims": [i for i, (k, _) in enumerate(batch) if k == "b"]}
    return Sample([tensor(rng, operand, mesh, opts), _ids(rng, idx_shape, mesh, opts, high)], attrs)


@sampler
def hlo_gather(rng, mesh, opts):
    kind = rng.choice(["embedding", "along_axis", "window", "general", "general"])
    if kind == "general":
        return _general_gather(rng, mesh, opts)
    batch = list(random_shape(rng, _rank(rng, 1, 2), mesh))
    if kind == "embedding":  # operand [V, D...], ids [B..., 1]: rows of the table
        v, d = random_dim(rng, mesh), list(random_shape(rng, _rank(rng, 0, 2), mesh))
        implicit = rng.random() < 0.3
        ids = _ids(rng, batch if implicit else batch + [1], mesh, opts, v)
        attrs = {"offset_dims": list(range(len(batch), len(batch) + len(d))), "collapsed_slice_dims": [0],
                 "start_index_map": [0], "slice_sizes": [1] + d, "index_vector_dim": len(batch) if implicit else -1}
        return Sample([tensor(rng, [v] + d, mesh, opts), ids], attrs)
    if kind == "along_axis":  # operand [B, N], ids [B, K, 1] (take_along_axis, batching dims)
        n, k = random_dim(rng, mesh), random_dim(rng, mesh)
        operand = tensor(rng, batch[:1] + [n], mesh, opts)
        ids = _ids(rng, batch[:1] + [k, 1], mesh, opts, n)
        attrs = {"offset_dims": [], "collapsed_slice_dims": [1], "start_index_map": [1], "slice_sizes": [1, 1],
                 "operand_batching_dims": [0], "start_indices_batching_dims": [0]}
        return Sample([operand, ids], attrs)
    n, d = random_dim(rng, mesh), random_dim(rng, mesh)  # windows of rows: operand [N, D], ids [B, 1]
    w = int(rng.integers(1, n + 1))
    return Sample([tensor(rng, [n, d], mesh, opts), _ids(rng, batch + [1], mesh, opts, n)],
                  {"offset_dims": [len(batch), len(batch) + 1], "collapsed_slice_dims": [], "start_index_map": [0],
                   "slice_sizes": [w, d]})


def _general_scatter(rng, mesh, opts):
    """Any valid dimension numbers: the gather sampler's, read as a scatter (its result's shape
    is the updates' shape)."""
    g = _general_gather(rng, mesh, opts)
    operand, ids = g.inputs
    a = g.attrs
    windows = [d for d in range(len(operand.shape))
               if d not in a["collapsed_slice_dims"] and d not in a["operand_batching_dims"]]
    batch = [n for n in ids.shape[:-1]]
    upd = [0] * (len(batch) + len(windows))
    for pos, d in zip(a["offset_dims"], windows):
        upd[pos] = a["slice_sizes"][d]
    it = iter(batch)
    upd = [n if i in a["offset_dims"] else next(it) for i, n in enumerate(upd)]
    attrs = {"update_window_dims": a["offset_dims"], "inserted_window_dims": a["collapsed_slice_dims"],
             "scatter_dims_to_operand_dims": a["start_index_map"], "input_batching_dims": a["operand_batching_dims"],
             "scatter_indices_batching_dims": a["start_indices_batching_dims"]}
    return Sample([operand, ids, tensor(rng, upd, mesh, opts)], attrs)


@sampler
def hlo_scatter(rng, mesh, opts):
    kind = rng.choice(["embedding_grad", "along_axis", "general", "general"])
    if kind == "general":
        return _general_scatter(rng, mesh, opts)
    batch = list(random_shape(rng, _rank(rng, 1, 2), mesh))
    if kind == "embedding_grad":  # operand [V, D], ids [B..., 1], updates [B..., D]: rows added
        v, d = random_dim(rng, mesh), random_dim(rng, mesh)
        w = d if rng.random() < 0.7 else int(rng.integers(1, d + 1))
        return Sample([tensor(rng, [v, d], mesh, opts), _ids(rng, batch + [1], mesh, opts, v),
                       tensor(rng, batch + [w], mesh, opts)],
                      {"update_window_dims": [len(batch)], "inserted_window_dims": [0],
                       "scatter_dims_to_operand_dims": [0]})
    n, k = random_dim(rng, mesh), random_dim(rng, mesh)  # operand [B, N], ids [B, K, 1], updates [B, K]
    return Sample([tensor(rng, batch[:1] + [n], mesh, opts), _ids(rng, batch[:1] + [k, 1], mesh, opts, n),
                   tensor(rng, batch[:1] + [k], mesh, opts)],
                  {"update_window_dims": [], "inserted_window_dims": [1], "scatter_dims_to_operand_dims": [1],
                   "input_batching_dims": [0], "scatter_indices_batching_dims": [0]})


@kernel
def iota(shape, dimension):
    view = [1] * len(shape)
    view[dimension] = shape[dimension]
    return np.broadcast_to(np.arange(shape[dimension], dtype=float).reshape(view), tuple(shape)).copy()


@sampler
def iota(rng, mesh, opts):  # noqa: F811 - a sampler and a kernel may share a name (two registries)
    shape = list(random_shape(rng, _rank(rng, 1, 3), mesh))
    return Sample([], {"shape": shape, "dimension": int(rng.integers(0, len(shape)))})


@kernel
def hlo_constant(shape):
    """A constant whose value is fixed by its shape (its elements' flat positions)."""
    return np.arange(int(np.prod(shape)), dtype=float).reshape(tuple(shape))


@sampler
def hlo_constant(rng, mesh, opts):  # noqa: F811 - sampler and kernel registries are separate
    return Sample([], {"shape": list(random_shape(rng, _rank(rng, 0, 3), mesh))})
