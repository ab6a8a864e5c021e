"""Samplers and reference kernels of the JAX primitives added for full coverage
(rules_yaml/jax_special.yaml, jax_random.yaml, and the top_k / tile / stack / unstack /
reduce_xor / scatter entries; docs/jax_primitives.md).

Integer kernels read the sampled floats as int32 bit patterns (a fixed map, so shards and the
whole tensor agree); results come back as floats for the comparison.
"""
from __future__ import annotations

import numpy as np

from ..cases import Sample
from ..kernels import kernel
from ..samplers import _rank, random_dim, random_shape, sampler, tensor
from .jax_stablehlo import _x, hlo_scatter_combine


# ---- kernels ---------------------------------------------------------------------------------

@kernel
def special(name, *args):
    """scipy.special's function `name` (jax's special functions follow the same definitions)."""
    import scipy.special
    return np.asarray(getattr(scipy.special, name)(*args), dtype=float)


@kernel
def igamma_grad_a(a, x):
    """d/da of the regularized lower incomplete gamma (a central difference)."""
    import scipy.special
    h = 1e-4
    return (scipy.special.gammainc(a + h, x) - scipy.special.gammainc(a - h, x)) / (2 * h)


def _as_int32(x):
    return np.asarray(np.round(np.asarray(x, dtype=float) * 977.0), dtype=np.int64).astype(np.int32)


@kernel
def bits_unary(kind, x):
    v = _as_int32(x)
    u = v.view(np.uint32) if v.ndim else np.uint32(v.astype(np.int64) & 0xFFFFFFFF)
    u = np.asarray(u, dtype=np.uint64)
    if kind == "popcount":
        return np.asarray([bin(int(n)).count("1") for n in u.flat], dtype=float).reshape(u.shape)
    if kind == "clz":
        return np.asarray([32 - int(n).bit_length() for n in u.flat], dtype=float).reshape(u.shape)
    if kind == "bitcast":
        return np.asarray(np.asarray(np.asarray(x, dtype=np.float32)).view(np.uint32), dtype=float)
    raise ValueError(f"bits_unary: unknown kind {kind!r}")


@kernel
def bits_binary(kind, x, y):
    a = _as_int32(x).astype(np.int64)
    s = np.abs(_as_int32(y).astype(np.int64)) % 32
    ua = a & 0xFFFFFFFF
    if kind == "shl":
        out = (ua << s) & 0xFFFFFFFF
    elif kind == "shrl":
        out = ua >> s
    elif kind == "shra":
        out = a >> s
    elif kind == "mulhi":
        out = (ua * (_as_int32(y).astype(np.int64) & 0xFFFFFFFF)) >> 32
    else:
        raise ValueError(f"bits_binary: unknown kind {kind!r}")
    return np.asarray(out, dtype=float)


def _u32(x):
    return np.asarray(np.abs(np.round(np.asarray(x, dtype=float) * 7919.0)), dtype=np.uint64) & 0xFFFFFFFF


_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _threefry(k0, k1, x0, x1):
    """Threefry-2x32 (20 rounds) on uint64 arrays holding 32-bit words."""
    mask = 0xFFFFFFFF
    ks = (k0, k1, k0 ^ k1 ^ 0x1BD11BDA)
    x0, x1 = (x0 + ks[0]) & mask, (x1 + ks[1]) & mask
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = (x0 + x1) & mask
            x1 = ((x1 << r) | (x1 >> (32 - r))) & mask
            x1 = x1 ^ x0
        x0 = (x0 + ks[(i + 1) % 3]) & mask
        x1 = (x1 + ks[(i + 2) % 3] + i + 1) & mask
    return x0, x1


@kernel
def threefry2x32(key1, key2, x1, x2):
    shape = np.broadcast_shapes(np.shape(key1), np.shape(key2), np.shape(x1), np.shape(x2))
    args = [np.broadcast_to(_u32(a), shape) for a in (key1, key2, x1, x2)]
    y1, y2 = _threefry(*args)
    return y1.astype(float), y2.astype(float)


@kernel
def iota_2x32_shape(shape):
    counts = np.arange(int(np.prod(shape)), dtype=np.uint64).reshape(tuple(shape))
    return (counts >> 32).astype(float), (counts & 0xFFFFFFFF).astype(float)


@kernel
def rng_bit_generator(key, shape):
    """A generator whose state is the whole key vector: the new key and `shape` bits hash all of it."""
    words = _u32(key).reshape(-1)
    k0 = np.uint64(int(words.sum()) & 0xFFFFFFFF)
    k1 = np.uint64(int((words * np.arange(1, words.size + 1, dtype=np.uint64)).sum()) & 0xFFFFFFFF)
    counts = np.arange(int(np.prod(shape)) + words.size, dtype=np.uint64)
    y0, _ = _threefry(k0, k1, counts, counts)
    return y0[:words.size].reshape(np.shape(key)).astype(float), y0[words.size:].reshape(tuple(shape)).astype(float)


@kernel
def reduce_xor(operand, axes):
    v = _as_int32(operand)
    return np.bitwise_xor.reduce(v, axis=tuple(axes)).astype(float) if len(axes) else v.astype(float)


# ---- samplers --------------------------------------------------------------------------------

@sampler
def threefry2x32(rng, mesh, opts):
    x = _x(rng, mesh, opts, 0)
    keys = [tensor(rng, () if rng.random() < 0.7 else x.shape, mesh, opts) for _ in range(2)]
    return Sample([*keys, x, tensor(rng, x.shape, mesh, opts)])


@sampler
def iota_2x32_shape(rng, mesh, opts):  # noqa: F811 - sampler and kernel registries are separate
    return Sample([], {"shape": list(random_shape(rng, _rank(rng, 1, 3), mesh))})


@sampler
def rng_bit_generator(rng, mesh, opts):  # noqa: F811
    return Sample([tensor(rng, [int(rng.choice([2, 4]))], mesh, opts)],
                  {"shape": list(random_shape(rng, _rank(rng, 1, 3), mesh))})


@sampler
def jax_top_k(rng, mesh, opts):
    x = _x(rng, mesh, opts)
    axis = int(rng.integers(0, len(x.shape)))
    return Sample([x], {"k": int(rng.integers(1, x.shape[axis] + 1)), "axis": axis})


@sampler
def jax_tile(rng, mesh, opts):
    x = _x(rng, mesh, opts, 1, 3)
    return Sample([x], {"reps": [int(rng.choice([1, 1, 2, 3])) for _ in x.shape]})


@sampler
def jax_stack(rng, mesh, opts):
    shape = random_shape(rng, _rank(rng, 0, 3), mesh)
    xs = [tensor(rng, shape, mesh, opts) for _ in range(int(rng.integers(1, 4)))]
    return Sample([xs], {"axis": int(rng.integers(0, len(shape) + 1))})


@sampler
def jax_unstack(rng, mesh, opts):
    shape = list(random_shape(rng, _rank(rng, 1, 3), mesh))
    axis = int(rng.integers(0, len(shape)))
    shape[axis] = min(shape[axis], 5)
    return Sample([tensor(rng, shape, mesh, opts)], {"axis": axis})


# ---- fft -----------------------------------------------------------------------------------

@kernel
def jax_fft(operand, fft_type, fft_lengths):
    """lax.fft over the last len(fft_lengths) dims (0 FFT, 1 IFFT, 2 RFFT, 3 IRFFT); a complex
    result comes back as real + imag (one real number per element, as the checker compares)."""
    axes = tuple(range(operand.ndim - len(fft_lengths), operand.ndim))
    x = np.asarray(operand, dtype=float)
    if fft_type == 0:
        z = np.fft.fftn(x, axes=axes)
    elif fft_type == 1:
        z = np.fft.ifftn(x, axes=axes)
    elif fft_type == 2:
        z = np.fft.rfftn(x, s=list(fft_lengths), axes=axes)
    elif fft_type == 3:
        return np.fft.irfftn(x, s=list(fft_lengths), axes=axes)
    else:
        raise ValueError(f"jax_fft: fft_type {fft_type!r} is not 0..3")
    return z.real + z.imag


@sampler
def jax_fft(rng, mesh, opts):  # noqa: F811 - sampler and kernel registries are separate
    shape = list(random_shape(rng, _rank(rng, 1, 3), mesh))
    k = int(rng.integers(1, min(len(shape), 2) + 1))
    fft_type = int(rng.integers(0, 4))
    lengths = shape[len(shape) - k:]
    if fft_type == 3:  # irfft: the operand holds n // 2 + 1 of the last dim's n
        lengths[-1] = max(lengths[-1], 2)
        shape[-1] = lengths[-1] // 2 + 1
    return Sample([tensor(rng, shape, mesh, opts)], {"fft_type": fft_type, "fft_lengths": [int(n) for n in lengths]})


# ---- pooling grads ---------------------------------------------------------------------------

def _windows(shape, window_dimensions, window_strides, padding):
    """(padded shape, low pads, window count per dim) of a window op without dilations."""
    r = len(shape)
    strides = list(window_strides) or [1] * r
    pads = list(padding) or [0] * (2 * r)
    lo = [int(pads[2 * d]) for d in range(r)]
    padded = [n + int(pads[2 * d]) + int(pads[2 * d + 1]) for d, n in enumerate(shape)]
    counts = [(p - w) // s + 1 for p, w, s in zip(padded, window_dimensions, strides)]
    return padded, lo, counts, strides


def _selected(values, start, window_dimensions, select_prim):
    """The padded index of the window's selected element (the first max for ge, min for le)."""
    block = values[tuple(slice(a, a + w) for a, w in zip(start, window_dimensions))]
    flat = int(np.argmax(block) if select_prim == "ge" else np.argmin(block))
    return tuple(a + i for a, i in zip(start, np.unravel_index(flat, block.shape)))


def _pad_to(x, padded, lo, fill):
    out = np.full(padded, fill, dtype=float)
    out[tuple(slice(a, a + n) for a, n in zip(lo, x.shape))] = x
    return out


@kernel
def select_and_gather_add(tangents, operand, select_prim, window_dimensions, window_strides=(), padding=()):
    padded, lo, counts, strides = _windows(operand.shape, window_dimensions, window_strides, padding)
    fill = -np.inf if select_prim == "ge" else np.inf
    values, tans = _pad_to(operand, padded, lo, fill), _pad_to(tangents, padded, lo, 0.0)
    out = np.zeros(counts)
    for pos in np.ndindex(*counts):
        out[pos] = tans[_selected(values, [p * s for p, s in zip(pos, strides)], window_dimensions, select_prim)]
    return out


@kernel
def select_and_scatter_add(source, operand, select_prim, window_dimensions, window_strides=(), padding=()):
    return _scatter_add(source, operand, select_prim, window_dimensions, window_strides, padding)


def _scatter_add(source, operand, select_prim, window_dimensions, window_strides, padding):
    """Each window's source value added at its selected element (max for ge, min for le)."""
    padded, lo, counts, strides = _windows(operand.shape, window_dimensions, window_strides, padding)
    fill = -np.inf if select_prim == "ge" else np.inf
    values, out = _pad_to(operand, padded, lo, fill), np.zeros(padded)
    for pos in np.ndindex(*counts):
        out[_selected(values, [p * s for p, s in zip(pos, strides)], window_dimensions, select_prim)] += source[pos]
    return out[tuple(slice(a, a + n) for a, n in zip(lo, operand.shape))].copy()


@kernel
def hlo_select_and_scatter(operand, source, init_value, select, window_dimensions, window_strides=(), padding=()):
    """stablehlo.select_and_scatter with an add scatter: select_and_scatter_add on the init value."""
    if select not in ("ge", "le"):
        raise ValueError(f"hlo_select_and_scatter: no kernel for select {select!r}")
    return _scatter_add(source, operand, select, window_dimensions, window_strides, padding) + float(init_value)


def _window_attrs(rng, shape):
    window, strides, padding = [], [], []
    for n in shape:
        w = 1 if rng.random() < 0.4 else int(rng.integers(1, min(n, 3) + 1))
        window.append(w)
        strides.append(1 if rng.random() < 0.5 else int(rng.integers(1, 3)))
        padding += [0, 0] if rng.random() < 0.7 else [int(rng.integers(0, 2)), int(rng.integers(0, 2))]
    return {"select_prim": str(rng.choice(["ge", "le"])), "window_dimensions": window, "window_strides": strides,
            "padding": padding}


@sampler
def select_and_gather_add(rng, mesh, opts):  # noqa: F811 - sampler and kernel registries are separate
    shape = random_shape(rng, _rank(rng, 1, 3), mesh)
    return Sample([tensor(rng, shape, mesh, opts), tensor(rng, shape, mesh, opts)], _window_attrs(rng, shape))


@sampler
def select_and_scatter_add(rng, mesh, opts):  # noqa: F811
    shape = random_shape(rng, _rank(rng, 1, 3), mesh)
    attrs = _window_attrs(rng, shape)
    _, _, counts, _ = _windows(shape, attrs["window_dimensions"], attrs["window_strides"], attrs["padding"])
    return Sample([tensor(rng, counts, mesh, opts), tensor(rng, shape, mesh, opts)], attrs)


@sampler
def hlo_select_and_scatter(rng, mesh, opts):  # noqa: F811
    shape = random_shape(rng, _rank(rng, 1, 3), mesh)
    attrs = _window_attrs(rng, shape)
    attrs["select"] = attrs.pop("select_prim")
    _, _, counts, _ = _windows(shape, attrs["window_dimensions"], attrs["window_strides"], attrs["padding"])
    return Sample([tensor(rng, shape, mesh, opts), tensor(rng, counts, mesh, opts), tensor(rng, (), mesh, opts)], attrs)
