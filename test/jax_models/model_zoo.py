"""Small training steps built from flax (linen and nnx), equinox and optax layers, for the JAX
primitive coverage test: each entry is (function, example args, args for spmdkit.ir.evaluate)."""
from __future__ import annotations

import jax
import jax.numpy as jnp

IDS = jnp.array([[1, 4, 7, 2, 9, 0, 3, 5], [6, 2, 8, 1, 0, 4, 4, 7]], jnp.int32)
X = jnp.sin(jnp.arange(2 * 8 * 16, dtype=jnp.float32)).reshape(2, 8, 16)
IMG = jnp.cos(jnp.arange(2 * 8 * 8 * 3, dtype=jnp.float32)).reshape(2, 8, 8, 3)


def _data(key):
    """A key argument as spmdkit's programs take it: its uint32 data."""
    return jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key


def linen_step():
    import flax.linen as nn

    class Block(nn.Module):
        @nn.compact
        def __call__(self, ids, x, img, train):
            h = nn.Dense(16)(nn.Embed(50, 16)(ids) + x)
            h = nn.LayerNorm()(h)
            h = nn.MultiHeadDotProductAttention(num_heads=2)(h, h)
            h = nn.Dropout(0.1, deterministic=not train)(nn.gelu(h, approximate=False))
            c = nn.max_pool(nn.Conv(4, (3, 3))(img), (2, 2), strides=(2, 2))
            return jnp.mean(h ** 2) + jnp.mean(c)

    model = Block()
    params = jax.jit(model.init, static_argnums=4)({"params": jax.random.key(0), "dropout": jax.random.key(1)},
                                                    IDS, X, IMG, True)

    def step(params, key):
        return jax.value_and_grad(lambda p: model.apply(p, IDS, X, IMG, True, rngs={"dropout": key}))(params)

    key = jax.random.key(2)
    return step, (params, key), (params, _data(key))


def nnx_step():
    from flax import nnx

    class Block(nnx.Module):
        def __init__(self, rngs):
            self.emb = nnx.Embed(50, 16, rngs=rngs)
            self.lin = nnx.Linear(16, 16, rngs=rngs)
            self.ln = nnx.LayerNorm(16, rngs=rngs)
            self.att = nnx.MultiHeadAttention(num_heads=2, in_features=16, decode=False, rngs=rngs)
            self.drop = nnx.Dropout(0.1, rngs=rngs)
            self.conv = nnx.Conv(3, 4, (3, 3), rngs=rngs)

        def __call__(self, ids, x, img):
            h = self.att(self.ln(self.lin(self.emb(ids) + x)))
            h = self.drop(nnx.gelu(h, approximate=False))
            return jnp.mean(h ** 2) + jnp.mean(self.conv(img))

    graphdef, params, rest = jax.jit(lambda: nnx.split(Block(nnx.Rngs(0, dropout=1)), nnx.Param, ...))()

    def step(params, rest):  # the dropout key and its count are in `rest`
        return nnx.grad(lambda m: m(IDS, X, IMG))(nnx.merge(graphdef, params, rest))

    flat = jax.tree_util.tree_map(lambda a: _data(a) if jnp.issubdtype(a.dtype, jax.dtypes.prng_key) else a, rest)
    return step, (params, rest), (params, flat)


def equinox_step():
    import equinox as eqx

    def make(k):
        return (eqx.nn.Linear(16, 16, key=k), eqx.nn.LayerNorm(16), eqx.nn.Embedding(50, 16, key=k),
                eqx.nn.MultiheadAttention(2, 16, key=k), eqx.nn.Conv2d(3, 4, 3, key=k), eqx.nn.Dropout(0.1))

    layers = eqx.filter_jit(make)(jax.random.key(0))  # one compile, not one per initializer op
    params, static = eqx.partition(layers, eqx.is_inexact_array)

    def loss(params, key):
        lin, ln, emb, att, conv, drop = eqx.combine(params, static)
        h = jax.vmap(ln)(jax.vmap(lin)(jax.vmap(emb)(IDS[0]) + X[0]))
        h = drop(jax.nn.gelu(att(h, h, h), approximate=False), key=key)
        return jnp.mean(h ** 2) + jnp.mean(conv(IMG[0].transpose(2, 0, 1)))

    def step(params, key):
        return jax.grad(loss)(params, key)

    key = jax.random.key(3)
    return step, (params, key), (params, _data(key))


def optax_steps():
    import optax

    params = {"w": jnp.linspace(-1.0, 1.0, 16).reshape(4, 4), "b": jnp.linspace(0.5, 1.0, 4)}
    grads = jax.tree_util.tree_map(lambda a: jnp.cos(a), params)
    out = {}
    for name, opt in [("adam", optax.adam(1e-3)), ("adamw", optax.adamw(1e-3)),
                      ("sgd_momentum", optax.sgd(1e-2, momentum=0.9)),
                      ("clip_adam", optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3)))]:
        state = opt.init(params)

        def step(params, state, grads, opt=opt):
            updates, state = opt.update(grads, state, params)
            return optax.apply_updates(params, updates), state

        out[f"optax_{name}"] = (step, (params, state, grads), (params, state, grads))
    return out


def all_steps() -> dict:
    return {"flax_linen": linen_step(), "flax_nnx": nnx_step(), "equinox": equinox_step(), **optax_steps()}
