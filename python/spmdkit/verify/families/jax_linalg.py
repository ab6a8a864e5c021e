"""Samplers and reference kernels of JAX's linear algebra primitives (rules_yaml/jax_linalg.yaml).

The rules keep each operand's trailing matrix dims whole and split only the batch dims, so every
rank factors whole matrices. The kernels make the sampled matrices well posed first (symmetric
positive definite for cholesky, diagonally dominant for the solves), a fixed map of each matrix
alone, so the shards and the whole tensor compute the same numbers.
"""
from __future__ import annotations

import numpy as np

from ..cases import Sample
from ..kernels import kernel
from ..samplers import random_dim, random_shape, sampler, tensor


def _t(x):
    return np.swapaxes(x, -1, -2)


def _dominant(x):
    """x with its diagonal raised above the rest of its row: well conditioned."""
    n = x.shape[-1]
    return x + np.eye(n) * (np.abs(x).sum(-1, keepdims=True) + 1.0)


# ---- kernels ---------------------------------------------------------------------------------

@kernel
def linalg_cholesky(x):
    return np.linalg.cholesky(x @ _t(x) + np.eye(x.shape[-1]) * x.shape[-1])


@kernel
def linalg_triangular_solve(a, b, left_side, lower, transpose_a, unit_diagonal):
    t = np.tril(_dominant(a)) if lower else np.triu(_dominant(a))
    if unit_diagonal:
        t = t - np.eye(t.shape[-1]) * t + np.eye(t.shape[-1])
    op = _t(t) if transpose_a else t
    if left_side:  # op(a) x = b
        return np.linalg.solve(op, b)
    return _t(np.linalg.solve(_t(op), _t(b)))  # x op(a) = b


def _lu_one(m):
    import scipy.linalg
    lu, piv = scipy.linalg.lu_factor(m, check_finite=False)
    perm = np.arange(m.shape[0])
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    return lu, piv, perm


@kernel
def linalg_lu(x):
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    lu, piv, perm = np.empty(x.shape), np.empty(batch + (min(m, n),)), np.empty(batch + (m,))
    for idx in np.ndindex(*batch):
        lu[idx], piv[idx], perm[idx] = _lu_one(x[idx])
    return lu, piv, perm


@kernel
def linalg_pivots_to_permutation(pivots, permutation_size):
    pivots = np.asarray(pivots).astype(np.int64)
    out = np.empty(pivots.shape[:-1] + (permutation_size,))
    for idx in np.ndindex(*pivots.shape[:-1]):
        perm = np.arange(permutation_size)
        for i, p in enumerate(pivots[idx]):
            perm[i], perm[p] = perm[p], perm[i]
        out[idx] = perm
    return out


@kernel
def linalg_eigh(x, lower=True):
    w, v = np.linalg.eigh(x + _t(x), UPLO="L" if lower else "U")
    return v, w


@kernel
def linalg_qr(x, full_matrices=False):
    return tuple(np.linalg.qr(x, mode="complete" if full_matrices else "reduced"))


@kernel
def linalg_svd(x, full_matrices=True):
    u, s, vt = np.linalg.svd(x, full_matrices=full_matrices)
    return s, u, vt


@kernel
def linalg_tridiagonal_solve(dl, d, du, b):
    """Row i of the matrix: dl[i] left of the diagonal, d[i] on it (made dominant), du[i] right
    of it (dl[0] and du[-1] are not read, as in JAX)."""
    m = d.shape[-1]
    lower, upper = dl * (np.arange(m) > 0), du * (np.arange(m) < m - 1)
    diag = np.abs(d) + np.abs(lower) + np.abs(upper) + 1.0
    a = (np.eye(m) * diag[..., :, None] + np.eye(m, k=-1) * lower[..., :, None]
         + np.eye(m, k=1) * upper[..., :, None])
    return np.linalg.solve(a, b)


@kernel
def linalg_geqrf(a):
    """LAPACK's geqrf per matrix (scipy's raw QR): the Householder form and its taus."""
    import scipy.linalg
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    out, taus = np.empty(a.shape), np.empty(batch + (min(m, n),))
    for idx in np.ndindex(*batch):
        (out[idx], taus[idx]), _ = scipy.linalg.qr(a[idx], mode="raw")
    return out, taus


@kernel
def linalg_householder_product(a, taus):
    """LAPACK's orgqr per matrix: the product of the Householder reflectors (m >= n >= k)."""
    import scipy.linalg
    out = np.empty(a.shape)
    for idx in np.ndindex(*a.shape[:-2]):
        out[idx] = scipy.linalg.lapack.dorgqr(np.asarray(a[idx], np.float64), np.asarray(taus[idx], np.float64))[0]
    return out


# ---- samplers --------------------------------------------------------------------------------

def _batch(rng, mesh):
    return random_shape(rng, int(rng.integers(0, 3)), mesh)


@sampler
def jax_square_matrices(rng, mesh, opts):
    n = random_dim(rng, mesh)
    return Sample([tensor(rng, _batch(rng, mesh) + (n, n), mesh, opts)])


@sampler
def jax_matrices(rng, mesh, opts):
    return Sample([tensor(rng, _batch(rng, mesh) + (random_dim(rng, mesh), random_dim(rng, mesh)), mesh, opts)])


@sampler
def jax_triangular_solve(rng, mesh, opts):
    batch, m, n = _batch(rng, mesh), random_dim(rng, mesh), random_dim(rng, mesh)
    left = bool(rng.integers(2))
    b = batch + ((m, n) if left else (n, m))
    return Sample([tensor(rng, batch + (m, m), mesh, opts), tensor(rng, b, mesh, opts)],
                  {"left_side": left, "lower": bool(rng.integers(2)), "transpose_a": bool(rng.integers(2)),
                   "unit_diagonal": bool(rng.integers(2))})


@sampler
def jax_lu_pivots(rng, mesh, opts):
    k = random_dim(rng, mesh)
    size = k + int(rng.integers(0, 3))
    return Sample([tensor(rng, _batch(rng, mesh) + (k,), mesh, opts, int_high=size)], {"permutation_size": size})


@sampler
def jax_qr(rng, mesh, opts):
    return Sample(jax_matrices(rng, mesh, opts).inputs, {"full_matrices": bool(rng.integers(2))})


@sampler
def jax_svd(rng, mesh, opts):
    return Sample(jax_matrices(rng, mesh, opts).inputs, {"full_matrices": bool(rng.integers(2)), "compute_uv": True})


@sampler
def jax_tridiagonal_solve(rng, mesh, opts):
    batch, m, n = _batch(rng, mesh), random_dim(rng, mesh), random_dim(rng, mesh)
    diag = [tensor(rng, batch + (m,), mesh, opts) for _ in range(3)]
    return Sample(diag + [tensor(rng, batch + (m, n), mesh, opts)])


@sampler
def jax_householder_product(rng, mesh, opts):
    batch, n = _batch(rng, mesh), random_dim(rng, mesh)
    m, k = n + int(rng.integers(0, 3)), int(rng.integers(1, n + 1))
    return Sample([tensor(rng, batch + (m, n), mesh, opts), tensor(rng, batch + (k,), mesh, opts)])
