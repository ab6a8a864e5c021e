"""Samplers and kernels of the layout / slicing / indexing ops (layout_index family)."""
from __future__ import annotations

import numpy as np

from spmdkit.verify.cases import Sample, TensorArg
from spmdkit.verify.kernels import kernel
from spmdkit.verify.samplers import _rank, random_dim, random_shape, sampler, tensor


# ---- kernels --------------------------------------------------------------------------------
@kernel
def index_select_grad(x, index, out_grad, axis):
    """x's shape, with out_grad's slices added at the rows the index names."""
    axis = axis % x.ndim
    g = np.zeros(x.shape, dtype=np.result_type(out_grad, np.float64))
    moved = np.moveaxis(g, axis, 0)
    np.add.at(moved, np.asarray(index, dtype=np.int64), np.moveaxis(out_grad, axis, 0))
    return g


@kernel
def take_along_axis(x, index, axis):
    """Paddle's kernel: out has the index's shape and takes x at the index's own coordinates,
    `axis` replaced by the index value (the index may be shorter than x in the other dims)."""
    idx = list(np.indices(index.shape, sparse=True))
    idx[axis % x.ndim] = np.asarray(index, dtype=np.int64)
    return x[tuple(idx)]


@kernel
def take_along_axis_grad(x, index, out_grad, axis):
    axis = axis % x.ndim
    g = np.zeros(x.shape, dtype=np.result_type(out_grad, np.float64))
    idx = list(np.indices(index.shape, sparse=True))
    idx[axis] = np.asarray(index, dtype=np.int64)
    np.add.at(g, tuple(idx), out_grad)
    return g


# ---- samplers -------------------------------------------------------------------------------
@sampler
def matrix_batch(rng, mesh, opts):
    x = tensor(rng, random_shape(rng, _rank(rng, 2, 4), mesh), mesh, opts)
    return Sample([x], {"diagonal": int(rng.integers(-2, 3))})


@sampler
def expand_as(rng, mesh, opts):
    out = random_shape(rng, _rank(rng, 1, 4), mesh)
    keep = int(rng.integers(1, len(out) + 1))
    xs = tuple(1 if rng.random() < 0.4 else n for n in out[len(out) - keep:])
    return Sample([tensor(rng, xs, mesh, opts), tensor(rng, out, mesh, opts)], {"target_shape": list(out)})


def _axis(rng, rank):
    a = int(rng.integers(0, rank))
    return a - rank if rng.random() < 0.3 else a


def _gather(rng, mesh, opts, negative=True):
    x = tensor(rng, random_shape(rng, _rank(rng, 1, 3), mesh), mesh, opts)
    axis = _axis(rng, len(x.shape)) if negative else int(rng.integers(0, len(x.shape)))
    n = max(1, x.shape[axis])
    index = tensor(rng, (random_dim(rng, mesh),), mesh, opts, int_high=n)
    return Sample([x, index], {"axis": axis})


@sampler
def gather(rng, mesh, opts):
    """Non-negative axes only: Paddle 3.3.1's gather rule segfaults on a negative axis."""
    return _gather(rng, mesh, opts, negative=False)


@sampler
def index_select(rng, mesh, opts):
    return _gather(rng, mesh, opts)


@sampler
def index_select_grad(rng, mesh, opts):
    s = _gather(rng, mesh, opts)
    x, index = s.inputs
    axis = s.attrs["axis"] % len(x.shape)
    og = x.shape[:axis] + index.shape + x.shape[axis + 1:]
    return Sample([x, index, tensor(rng, og, mesh, opts)], s.attrs)


@sampler
def take_along_axis(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng, 1, 3), mesh)
    x = tensor(rng, shape, mesh, opts)
    axis = _axis(rng, len(shape))
    # the other dims of the index: x's, or sometimes shorter (Paddle's kernel reads its coordinates)
    ishape = [int(rng.integers(1, n)) if n > 1 and rng.random() < 0.2 else n for n in shape]
    ishape[axis] = random_dim(rng, mesh)
    index = tensor(rng, ishape, mesh, opts, int_high=max(1, shape[axis]))
    return Sample([x, index], {"axis": axis})


@sampler
def take_along_axis_grad(rng, mesh, opts):
    s = take_along_axis(rng, mesh, opts)
    x, index = s.inputs
    return Sample([x, index, tensor(rng, index.shape, mesh, opts)], s.attrs)


__all__ = ["TensorArg"]
