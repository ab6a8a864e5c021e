"""Sampler and reference kernel of jax.ragged_dot_general (rules_yaml/jax_contraction.yaml): a
dot_general whose lhs ragged dim is cut, by position, into groups of sizes `group_sizes`.

The kernel is one einsum: a 0/1 membership tensor M[prefix..., position, group] (position p of
the ragged dim is in group g when the sizes before g sum to at most p and with g's to more)
joins the operands. A ragged free dim picks the rhs slice of its group (the rhs group dim is
summed against M); a ragged contracted dim sums within each group and puts the groups first in
the result. Both modes of JAX's; its third (a ragged batch dim) is not sampled.
"""
from __future__ import annotations

import numpy as np

from ..cases import Sample
from ..kernels import kernel
from ..samplers import random_dim, random_shape, sampler, tensor
from .jax_stablehlo import dot_letters


def _prefix(lhs_rank, contracting, batching, ragged) -> list[int]:
    """group_sizes' leading dims as lhs dims (jax's _ragged_dot_prefix_dims)."""
    if ragged in contracting:
        return list(batching) + list(contracting[:list(contracting).index(ragged)])
    return list(batching) + [d for d in range(ragged) if d not in contracting and d not in batching]


@kernel
def ragged_dot_general(lhs, rhs, group_sizes, lhs_contracting_dimensions, rhs_contracting_dimensions,
                       lhs_ragged_dimensions, lhs_batching_dimensions=(), rhs_batching_dimensions=(),
                       rhs_group_dimensions=()):
    lc, rc = list(lhs_contracting_dimensions), list(rhs_contracting_dimensions)
    lb, rb = list(lhs_batching_dimensions), list(rhs_batching_dimensions)
    (ragged,) = lhs_ragged_dimensions
    g = "z"  # the group letter: the rhs group dim's, and the result's first with a ragged contracted dim
    lhs_l, rhs_l, batch, free = dot_letters(lhs.ndim, rhs.ndim, lc, rc, lb, rb, {d: g for d in rhs_group_dimensions})
    sizes = np.rint(np.asarray(group_sizes)).astype(np.int64)
    ends = np.cumsum(sizes, axis=-1)
    starts = ends - sizes
    pos = np.arange(lhs.shape[ragged]).reshape(-1, 1)  # [position, group] after the prefix dims
    member = ((starts[..., None, :] <= pos) & (pos < ends[..., None, :])).astype(float)
    prefix = _prefix(lhs.ndim, lc, lb, ragged) if sizes.ndim > 1 else []  # [g]: the same groups everywhere
    m_l = [lhs_l[d] for d in prefix] + [lhs_l[ragged], g]
    out = ([g] if ragged in lc else []) + batch + free
    return np.einsum(f"{''.join(lhs_l)},{''.join(rhs_l)},{''.join(m_l)}->{''.join(out)}", lhs, rhs, member)


@sampler
def ragged_dot_general(rng, mesh, opts):
    """Batch, contracted and free dims in random order around one ragged dim (free or contracted),
    a group count of 1-4, group_sizes with or without its prefix dims."""
    contracted_ragged = bool(rng.integers(2))
    nb, nc, nl, nr = int(rng.integers(0, 2)), int(rng.integers(0, 2)), int(rng.integers(0, 2)), int(rng.integers(0, 2))
    b, c = random_shape(rng, nb, mesh), random_shape(rng, nc, mesh)
    lf, rf = random_shape(rng, nl, mesh), random_shape(rng, nr, mesh)
    groups, ragged = int(rng.integers(1, 5)), random_dim(rng, mesh)
    lhs_dims = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("f", i) for i in range(nl)] + [("r", 0)]
    rhs_dims = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("f", i) for i in range(nr)]
    rhs_dims += [("r", 0)] if contracted_ragged else [("g", 0)]
    lhs_dims = [lhs_dims[i] for i in rng.permutation(len(lhs_dims))]
    rhs_dims = [rhs_dims[i] for i in rng.permutation(len(rhs_dims))]
    size = {"b": b, "c": c, "r": (ragged,), "g": (groups,)}
    lhs_shape = [size[k][i] if k != "f" else lf[i] for k, i in lhs_dims]
    rhs_shape = [size[k][i] if k != "f" else rf[i] for k, i in rhs_dims]
    pos = lambda dims, k, i: dims.index((k, i))  # noqa: E731
    contract = [("c", i) for i in range(nc)] + ([("r", 0)] if contracted_ragged else [])
    contract = [contract[i] for i in rng.permutation(len(contract))]
    attrs = {"lhs_contracting_dimensions": [pos(lhs_dims, k, i) for k, i in contract],
             "rhs_contracting_dimensions": [pos(rhs_dims, k, i) for k, i in contract],
             "lhs_ragged_dimensions": [pos(lhs_dims, "r", 0)],
             "lhs_batching_dimensions": [pos(lhs_dims, "b", i) for i in range(nb)],
             "rhs_batching_dimensions": [pos(rhs_dims, "b", i) for i in range(nb)],
             "rhs_group_dimensions": [] if contracted_ragged else [pos(rhs_dims, "g", 0)]}
    prefix = _prefix(len(lhs_shape), attrs["lhs_contracting_dimensions"], attrs["lhs_batching_dimensions"],
                     attrs["lhs_ragged_dimensions"][0])
    gs_shape = ([lhs_shape[d] for d in prefix] if prefix and rng.integers(2) else []) + [groups]
    high = ragged // groups + 2  # group sums around the ragged dim's size, some past it
    return Sample([tensor(rng, lhs_shape, mesh, opts), tensor(rng, rhs_shape, mesh, opts),
                   tensor(rng, gs_shape, mesh, opts, int_high=high)], attrs)
