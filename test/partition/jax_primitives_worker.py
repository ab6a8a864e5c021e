"""Partitions and runs, on 4 virtual CPU devices, programs made of the primitives that gained rules
for JAX coverage (docs/jax_primitives.md); prints one JSON line: case -> results equal JAX's.
Started by test_partition_jax_primitives.py (XLA_FLAGS must be set before JAX starts)."""
import json
import os

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import Mesh as JaxMesh  # noqa: E402

import spmdkit  # noqa: E402
from spmdkit.ir import import_jax  # noqa: E402
from spmdkit.partition import partition, to_jax  # noqa: E402
from spmdkit.sharding import Mesh, parse_sharding  # noqa: E402


def dropout_and_math(x, idx, key):
    k1, k2 = jax.random.split(key)
    keep = jax.random.bernoulli(k1, 0.8, x.shape)
    h = jnp.where(keep, x / 0.8, 0.0)
    h = jax.nn.gelu(h, approximate=False) + lax.erf_inv(jnp.tanh(x) * 0.5) + lax.cbrt(x) + lax.nextafter(x, h)
    v, i = lax.top_k(h, 3)
    s = jnp.sort(h, axis=1) + jnp.cumsum(h, axis=1) + lax.cummax(h, axis=1)
    t = h.at[:, 0].set(1.0).at[idx].mul(2.0).at[idx].max(0.5).at[idx].add(-1.0)
    r = jax.random.normal(k2, x.shape) * 0.01
    u = jnp.stack([h, x], axis=0).sum(0) + jnp.tile(x.reshape(8, 2, 4).sum(1), (1, 2)) + jnp.concatenate(jnp.unstack(h.reshape(8, 2, 4), axis=1), axis=1)
    return v.sum() + i.sum() + (s + t + r + u).sum(1) + jnp.argmax(h, axis=1) + lax.square(h).sum(1)


def spectral_and_round(x):
    # lax.fft of each type over the last dims (IntEnum params: fft_type), a complex constant,
    # and round (rounding_method, an IntEnum too)
    f = jnp.fft.rfft(x, axis=-1) * (1.0 + 0.5j)
    y = jnp.fft.irfft(f, n=x.shape[-1], axis=-1) + jnp.fft.ifft(jnp.fft.fft2(x)).real
    return jnp.round(y * 3.0) + jnp.round(x, 1)


def pooling_grad(x):
    import flax.linen as nn
    return jax.grad(lambda x: nn.max_pool(x, (2, 2), strides=(2, 2)).sum()
                    + jnp.tanh(nn.max_pool(x, (3, 3), padding="SAME")).sum())(x)


def products(x):
    # jnp.prod over a split dim, and its gradient: JAX reduces by a tree of halves whose reshape
    # transposes first (lax.reshape's `dimensions`), imported as a transpose and a plain reshape
    return jnp.prod(1.0 + 0.01 * x, axis=1) + jax.grad(lambda x: jnp.prod(1.0 + 0.01 * x, axis=1).sum())(x).sum(0)


def scan_gradients(x):
    # the gradients of cummax and cumsum over a split dim: JAX's associative scan slices odd
    # halves down to values with a dim of size 0, which propagation splits like their neighbours
    return jax.grad(lambda x: (lax.cummax(x, axis=1) * lax.cumsum(x, axis=1)).sum())(x)


def linear_algebra(a, b):
    # batched linear algebra (rules_yaml/jax_linalg.yaml): the batch dim split, the matrix dims
    # gathered; jnp.linalg.solve's custom_linear_solve, svd without U and V (norm ord 2), a grad
    spd = a @ jnp.swapaxes(a, -1, -2) + 4.0 * jnp.eye(a.shape[-1])
    chol = jnp.linalg.cholesky(spd)
    w, v = jnp.linalg.eigh(spd)
    q, r = jnp.linalg.qr(a)
    s = jnp.linalg.svd(a)[1]
    grad = jax.grad(lambda a: jnp.linalg.solve(a @ jnp.swapaxes(a, -1, -2) + 4.0 * jnp.eye(a.shape[-1]), b).sum())(a)
    return (chol.sum((1, 2)) + w.sum(1) + jnp.abs(v).sum((1, 2)) + jnp.abs(r).sum((1, 2)) + s.sum(1)
            + jnp.linalg.norm(a, ord=2, axis=(1, 2)) + jnp.linalg.slogdet(spd)[1]
            + jax.scipy.linalg.solve_triangular(chol, b, lower=True).sum((1, 2)) + grad.sum((1, 2)))


def remat_names(x):
    # checkpoint_name under a save_only_these_names policy (jax.name), an optimization barrier
    # over two values (one barrier each), named_call and reduce_precision
    from jax.ad_checkpoint import checkpoint_name

    def layer(w):
        h = checkpoint_name(jnp.tanh(x @ w), "h")
        return jnp.sin(h) @ w.T
    f = jax.checkpoint(layer, policy=jax.checkpoint_policies.save_only_these_names("h"))
    g = jax.grad(lambda w: f(w).sum())(x.T)
    a, b = lax.optimization_barrier((g, x))
    return jax.named_call(jnp.tanh, name="act")(a) + lax.reduce_precision(b, exponent_bits=5, mantissa_bits=10)


def grouped_matmuls(params, x):
    # a top-1 MoE written with lax.ragged_dot (tokens sorted by expert, one group per expert) and
    # its gradient, whose weight cotangents are ragged dots over a contracted ragged dim
    w1, w2, router = params

    def loss(w1, w2):
        expert = jnp.argmax(x @ router, axis=-1)
        order = jnp.argsort(expert)
        sizes = jnp.bincount(expert, length=w1.shape[0]).astype(jnp.int32)
        h = jax.nn.gelu(lax.ragged_dot(x[order], w1, sizes))
        return jnp.sum(jnp.zeros_like(x).at[order].set(lax.ragged_dot(h, w2, sizes)) ** 2)
    return jax.grad(loss, (0, 1))(w1, w2)


def run(fn, args, shardings, data_args, propagated=False):
    """`propagated`: partition from what propagation infers (the factor tables of every op), not
    from the arguments' annotations alone."""
    mesh = Mesh({"x": 2, "y": 2})
    program = import_jax(fn, *args, arg_shardings=[parse_sharding(s) if s else None for s in shardings],
                         meshes={"mesh": mesh}, inline_calls=True)
    if propagated:
        spmdkit.propagate(program)
    jax_mesh = JaxMesh(np.array(jax.devices()[:4]).reshape(2, 2), ("x", "y"))
    got = to_jax(partition(program), jax_mesh)(*data_args)
    want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
    return all(np.allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5) for g, w in zip(got, want))


def main():
    x = jnp.arange(64.0).reshape(8, 8) / 17 - 1.5
    idx = jnp.array([1, 3])
    key = jax.random.key(7)
    img = jnp.sin(jnp.arange(4 * 8 * 8 * 4.0)).reshape(4, 8, 8, 4)
    out = {}
    for propagated in (False, True):
        suffix = " propagated" if propagated else ""
        out["dropout_and_math" + suffix] = run(dropout_and_math, (x, idx, key),
                                               ['#sdy.sharding<@mesh, [{"x"}, {"y"}]>', None, None],
                                               (x, idx, jax.random.key_data(key)), propagated)
        out["pooling_grad" + suffix] = run(pooling_grad, (img,), ['#sdy.sharding<@mesh, [{"x"}, {}, {}, {"y"}]>'],
                                           (img,), propagated)
        out["scan_gradients" + suffix] = run(scan_gradients, (x,), ['#sdy.sharding<@mesh, [{"x"}, {"y"}]>'], (x,),
                                             propagated)
        # random: distinct eigenvalues (a matrix of sines has rank 2, and a repeated eigenvalue
        # leaves its eigenvectors to the algorithm)
        mats = jax.random.normal(jax.random.PRNGKey(1), (4, 8, 8))
        rhs = jax.random.normal(jax.random.PRNGKey(2), (4, 8, 4))
        out["linear_algebra" + suffix] = run(linear_algebra, (mats, rhs), ['#sdy.sharding<@mesh, [{"x"}, {}, {"y"}]>',
                                                                        '#sdy.sharding<@mesh, [{"x"}, {}, {"y"}]>'],
                                             (mats, rhs), propagated)
        out["remat_names" + suffix] = run(remat_names, (x,), ['#sdy.sharding<@mesh, [{"x"}, {"y"}]>'], (x,),
                                          propagated)
        experts = (jax.random.normal(jax.random.PRNGKey(3), (4, 8, 16)) * 0.3,
                   jax.random.normal(jax.random.PRNGKey(4), (4, 16, 8)) * 0.3, jax.random.normal(jax.random.PRNGKey(5), (8, 4)))
        tokens = jax.random.normal(jax.random.PRNGKey(6), (16, 8))
        out["grouped_matmuls" + suffix] = run(grouped_matmuls, (experts, tokens),
                                              ['#sdy.sharding<@mesh, [{}, {}, {"y"}]>', '#sdy.sharding<@mesh, [{}, {"y"}, {}]>',
                                               None, '#sdy.sharding<@mesh, [{"x"}, {}]>'],
                                              (*experts, tokens), propagated)
        out["products" + suffix] = run(products, (x,), ['#sdy.sharding<@mesh, [{"x"}, {"y"}]>'], (x,), propagated)
        out["spectral_and_round" + suffix] = run(spectral_and_round, (x,), ['#sdy.sharding<@mesh, [{"x"}, {"y"}]>'],
                                                 (x,), propagated)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
