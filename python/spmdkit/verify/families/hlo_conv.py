"""Sampler and reference kernel of jax.conv_general_dilated | stablehlo.convolution
(rules_yaml/jax_region_ops.yaml): any dimension numbers, strides, padding, dilations and
feature or batch groups, as XLA computes them (checked against jax in the tests)."""
from __future__ import annotations

import numpy as np

from ..cases import Sample
from ..kernels import kernel
from ..samplers import random_dim, sampler, tensor
from .hlo_regions import _windows


@kernel
def conv_general(lhs, rhs, lhs_spec, rhs_spec, out_spec, window_strides=(), padding=(), lhs_dilation=(),
                 rhs_dilation=(), feature_group_count=1, batch_group_count=1):
    x = np.transpose(np.asarray(lhs, dtype=float), lhs_spec)   # [N, C, spatial...]
    w = np.transpose(np.asarray(rhs, dtype=float), rhs_spec)   # [O, I, spatial...]
    sp = x.ndim - 2
    ks = list(w.shape[2:])
    # windows of the spread, padded input: axes (n, 1, c, 1, p0, k0, p1, k1, ...)
    win = _windows(x, 0.0, [1, 1] + ks, [1, 1] + list(window_strides or [1] * sp),
                   [1, 1] + list(lhs_dilation or [1] * sp), [1, 1] + list(rhs_dilation or [1] * sp),
                   [0, 0, 0, 0] + list(padding or [0] * (2 * sp)))
    win = win[:, 0, :, 0]                                        # (n, c, p0, k0, p1, k1, ...)
    letters = "pqrstuvw"[:sp], "ijklmxyz"[:sp]
    spec_x = "nc" + "".join(p + k for p, k in zip(*letters))
    eq = f"{spec_x},oc{letters[1]}->no{letters[0]}"
    fg, bg = int(feature_group_count), int(batch_group_count)
    outs = []
    groups = max(fg, bg)
    og = w.shape[0] // groups
    for g in range(groups):
        wg = w[g * og:(g + 1) * og]
        if fg > 1:
            ic = w.shape[1]
            xg = win[:, g * ic:(g + 1) * ic]
        else:
            nb = win.shape[0] // bg
            xg = win[g * nb:(g + 1) * nb] if bg > 1 else win
        outs.append(np.einsum(eq, xg, wg))
    canon = np.concatenate(outs, axis=1)                         # [N, O, spatial...]
    return np.transpose(canon, np.argsort(out_spec)).copy()


def _spec(rng, rank):
    return [int(d) for d in rng.permutation(rank)]


@sampler
def conv_general(rng, mesh, opts):
    sp = int(rng.integers(1, 3))
    rank = sp + 2
    fg = int(rng.choice([1, 1, 1, 2]))
    bg = 1 if fg > 1 else int(rng.choice([1, 1, 1, 2]))
    groups = max(fg, bg)
    n = random_dim(rng, mesh) * bg
    i = random_dim(rng, mesh)
    o = random_dim(rng, mesh) * groups
    sizes, ks, strides, pads, ld, rd = [], [], [], [], [], []
    for _ in range(sp):
        size = int(rng.integers(1, 7))
        while True:
            k, s, a, b = int(rng.integers(1, 4)), int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(1, 3))
            lo, hi = (int(rng.integers(0, 3)) if rng.random() < 0.4 else 0 for _ in range(2))
            if (size - 1) * a + 1 + lo + hi >= (k - 1) * b + 1:
                break
        sizes.append(size), ks.append(k), strides.append(s), pads.extend([lo, hi]), ld.append(a), rd.append(b)
    lhs_spec, rhs_spec, out_spec = _spec(rng, rank), _spec(rng, rank), _spec(rng, rank)
    lhs_shape, rhs_shape = [0] * rank, [0] * rank
    for d, size in zip(lhs_spec, [n, i * fg] + sizes):
        lhs_shape[d] = size
    for d, size in zip(rhs_spec, [o, i] + ks):
        rhs_shape[d] = size
    plain = rng.random() < 0.4  # no padding, unit strides and dilations
    attrs = {"lhs_spec": lhs_spec, "rhs_spec": rhs_spec, "out_spec": out_spec,
             "window_strides": [1] * sp if plain else strides, "padding": [0] * (2 * sp) if plain else pads,
             "lhs_dilation": [1] * sp if plain else ld, "rhs_dilation": [1] * sp if plain else rd,
             "feature_group_count": fg, "batch_group_count": bg}
    if plain:  # unpadded: the input must hold the kernel
        for j in range(sp):
            lhs_shape[lhs_spec[2 + j]] = max(lhs_shape[lhs_spec[2 + j]], rhs_shape[rhs_spec[2 + j]])
    return Sample([tensor(rng, lhs_shape, mesh, opts), tensor(rng, rhs_shape, mesh, opts)], attrs)
