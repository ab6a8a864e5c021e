"""Named random case generators (`verify.sampler` in the YAML).

A sampler gets an rng, a mesh shape and options and returns a `Sample`: the op's tensor inputs
in order (global shapes and placements) and the attributes it must choose itself. The shapes mix
mesh-divisible sizes, non-divisible ones and size-1 dims (never split); placements sometimes
split one tensor dim over several mesh dims and sometimes make an input partial.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Callable

import numpy as np

from .cases import Sample, TensorArg
from .placement import Placement, block_count

SAMPLERS: dict[str, Callable] = {}


def sampler(fn):
    if fn.__name__ in SAMPLERS:  # two families claiming one name: one would silently win
        raise ValueError(f"sampler {fn.__name__!r} ({fn.__module__}) is already defined")
    SAMPLERS[fn.__name__] = fn
    return fn


@dataclass(frozen=True)
class Options:
    partial_types: tuple[str, ...] = ("sum",)   # what the backend can express on inputs
    p_partial: float = 0.15                     # per mesh dim, per tensor
    p_split: float = 0.6
    p_multi: float = 0.3                        # splitting an already split dim again
    even_only: bool = False                     # only splits that divide the dim evenly


def random_mesh(rng: np.random.Generator, max_ranks: int = 8) -> tuple[int, ...]:
    while True:
        shape = tuple(int(s) for s in rng.choice([1, 2, 2, 2, 3, 4], size=rng.integers(1, 4)))
        if prod(shape) <= max_ranks and prod(shape) > 1:
            return shape


def random_dim(rng, mesh_shape) -> int:
    r = rng.random()
    if r < 0.15:
        return 1
    if r < 0.6:  # divisible by some mesh dims
        return int(prod(rng.choice(mesh_shape, size=rng.integers(1, len(mesh_shape) + 1))) * rng.integers(1, 3))
    return int(rng.integers(2, 8))


def random_shape(rng, ndim, mesh_shape) -> tuple[int, ...]:
    return tuple(random_dim(rng, mesh_shape) for _ in range(ndim))


def random_placement(rng, shape, mesh_shape, opts: Options, allow_partial=True) -> Placement:
    dims: list[list[int]] = [[] for _ in shape]
    partial: dict[int, str] = {}
    for m in rng.permutation(len(mesh_shape)):
        m = int(m)
        if mesh_shape[m] == 1:
            continue
        r = rng.random()
        if allow_partial and opts.partial_types and r < opts.p_partial:
            partial[m] = str(rng.choice(opts.partial_types))
        elif r < opts.p_partial + opts.p_split:
            ok = [d for d, n in enumerate(shape)
                  if n > 1 and n >= block_count(dims[d] + [m], mesh_shape)
                  and not (opts.even_only and n % block_count(dims[d] + [m], mesh_shape))
                  and (not dims[d] or rng.random() < opts.p_multi)]
            if ok:
                dims[int(rng.choice(ok))].append(m)
    return Placement.make(dims, partial)


def tensor(rng, shape, mesh_shape, opts, allow_partial=True, int_high=None) -> TensorArg:
    shape = tuple(int(s) for s in shape)
    return TensorArg(shape, random_placement(rng, shape, mesh_shape, opts, allow_partial and int_high is None), int_high)


def _rank(rng, lo=1, hi=4) -> int:
    return int(rng.integers(lo, hi + 1))


@sampler
def unary(rng, mesh, opts):
    return Sample([tensor(rng, random_shape(rng, _rank(rng), mesh), mesh, opts)])


@sampler
def unary_grad(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng), mesh)
    return Sample([tensor(rng, shape, mesh, opts), tensor(rng, shape, mesh, opts)])


@sampler
def mean_all_grad(rng, mesh, opts):
    return Sample([tensor(rng, random_shape(rng, _rank(rng), mesh), mesh, opts), tensor(rng, (), mesh, opts)])


def _broadcast_operand(rng, out_shape, p_one=0.25):
    """A shape that broadcasts to out_shape: a suffix of it, some dims 1."""
    keep = int(rng.integers(0, len(out_shape) + 1)) if rng.random() < 0.4 else len(out_shape)
    return tuple(1 if rng.random() < p_one else n for n in out_shape[len(out_shape) - keep:])


@sampler
def binary_broadcast(rng, mesh, opts):
    out = random_shape(rng, _rank(rng), mesh)
    x, y = _broadcast_operand(rng, out), _broadcast_operand(rng, out)
    if not x and not y:
        x = out
    return Sample([tensor(rng, x, mesh, opts), tensor(rng, y, mesh, opts)])


def _batch(rng, batch, rank):
    """The last `rank` batch dims, some of them 1 (broadcast)."""
    return tuple(1 if rng.random() < 0.2 else n for n in batch[len(batch) - rank:]) if rank > 0 else ()


@sampler
def matmul(rng, mesh, opts):
    m, k, n = (random_dim(rng, mesh) for _ in range(3))
    batch = random_shape(rng, int(rng.integers(0, 3)), mesh)
    xr, yr = int(rng.integers(1, 3 + len(batch))), int(rng.integers(1, 3 + len(batch)))
    tx, ty = xr > 1 and bool(rng.integers(2)), yr > 1 and bool(rng.integers(2))  # 1-D operands: no transpose
    x = (k,) if xr == 1 else _batch(rng, batch, xr - 2) + ((k, m) if tx else (m, k))
    y = (k,) if yr == 1 else _batch(rng, batch, yr - 2) + ((n, k) if ty else (k, n))
    return Sample([tensor(rng, x, mesh, opts), tensor(rng, y, mesh, opts)], {"trans_x": tx, "trans_y": ty})


def _random_axes(rng, ndim) -> list[int]:
    if rng.random() < 0.15:
        return []
    axes = sorted(int(a) for a in rng.choice(ndim, size=rng.integers(1, ndim + 1), replace=False))
    return [a - ndim if rng.random() < 0.3 else a for a in axes]


@sampler
def reduce(rng, mesh, opts):
    x = tensor(rng, random_shape(rng, _rank(rng), mesh), mesh, opts)
    return Sample([x], {"axis": _random_axes(rng, len(x.shape)), "keep_dim": bool(rng.integers(2))})


@sampler
def reduce_base(rng, mesh, opts):
    s = reduce(rng, mesh, opts)
    s.attrs["reduce_type"] = int(rng.integers(0, 5))  # sum max min prod avg
    return s


@sampler
def axis(rng, mesh, opts):
    x = tensor(rng, random_shape(rng, _rank(rng), mesh), mesh, opts)
    return Sample([x], {"axis": int(rng.integers(-len(x.shape), len(x.shape)))})


@sampler
def permutation(rng, mesh, opts):
    x = tensor(rng, random_shape(rng, _rank(rng), mesh), mesh, opts)
    return Sample([x], {"perm": [int(p) for p in rng.permutation(len(x.shape))]})


def _factors(n: int) -> list[int]:
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


@sampler
def reshape(rng, mesh, opts):
    x = tensor(rng, random_shape(rng, _rank(rng), mesh), mesh, opts)
    factors = list(rng.permutation(_factors(prod(x.shape))))
    rank = int(rng.integers(1, 5))
    target = [1] * rank
    for f in factors:  # group the prime factors into `rank` dims (some stay 1)
        target[int(rng.integers(rank))] *= int(f)
    if rng.random() < 0.25:
        target[int(rng.integers(rank))] = -1
    return Sample([x], {"shape": target})


@sampler
def flatten(rng, mesh, opts):
    x = tensor(rng, random_shape(rng, _rank(rng), mesh), mesh, opts)
    r = len(x.shape)
    start = int(rng.integers(0, r))
    stop = int(rng.integers(start, r))
    if rng.random() < 0.3:
        start, stop = start - r, stop - r
    return Sample([x], {"start_axis": start, "stop_axis": stop})


@sampler
def squeeze(rng, mesh, opts):
    shape = list(random_shape(rng, _rank(rng, 1, 3), mesh))
    for _ in range(int(rng.integers(1, 3))):
        shape.insert(int(rng.integers(0, len(shape) + 1)), 1)
    ones = [d for d, n in enumerate(shape) if n == 1]
    if rng.random() < 0.2:
        axes = []
    else:
        axes = sorted(int(a) for a in rng.choice(ones, size=rng.integers(1, len(ones) + 1), replace=False))
        axes = [a - len(shape) if rng.random() < 0.3 else a for a in axes]
    return Sample([tensor(rng, shape, mesh, opts)], {"axis": axes})


@sampler
def unsqueeze(rng, mesh, opts):
    x = tensor(rng, random_shape(rng, _rank(rng, 1, 3), mesh), mesh, opts)
    r = len(x.shape)
    if rng.random() < 0.3:
        axes = [int(rng.integers(-r - 1, 0))]
    else:  # ascending, each a position in the rank reached so far
        n = int(rng.integers(1, 3))
        axes = sorted(int(a) for a in rng.choice(r + n, size=n, replace=False))
    return Sample([x], {"axis": axes})


@sampler
def layer_norm(rng, mesh, opts):
    x = tensor(rng, random_shape(rng, _rank(rng, 2, 4), mesh), mesh, opts)
    b = int(rng.integers(1, len(x.shape)))
    n = (prod(x.shape[b:]),)

    def param():
        if rng.random() < 0.7:
            return TensorArg(n, Placement.replicated(1))
        return tensor(rng, n, mesh, opts, allow_partial=False)
    return Sample([x, param(), param()], {"begin_norm_axis": b})


@sampler
def embedding(rng, mesh, opts):
    vocab, hidden = max(2, random_dim(rng, mesh)), random_dim(rng, mesh)
    shape = random_shape(rng, _rank(rng, 1, 3), mesh)
    for _ in range(8):  # a few ids at least: all of them hitting padding_idx would zero the output
        if prod(shape) >= 4:
            break
        shape = random_shape(rng, _rank(rng, 1, 3), mesh)
    ids = tensor(rng, shape, mesh, opts, int_high=vocab)
    weight = tensor(rng, (vocab, hidden), mesh, opts)
    # a padding row only where the vocabulary is large enough for ids to miss it sometimes
    pad = -1 if vocab < 4 or rng.random() < 0.6 else int(rng.integers(0, vocab))
    return Sample([ids, weight], {"padding_idx": pad, "sparse": False})
