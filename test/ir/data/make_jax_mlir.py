"""Regenerate the jax_*.mlir test files: `jax.jit(f).lower(...).as_text()` of a few functions.

Run from the repository root (4 fake CPU devices give a 2x2 mesh):
    XLA_FLAGS=--xla_force_host_platform_device_count=4 python test/ir/data/make_jax_mlir.py
The tests also lower some of these live; the files pin what jax 0.10.2 printed.
"""
import os
import sys

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

HERE = os.path.dirname(os.path.abspath(__file__))


def mesh():
    return jax.make_mesh((2, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))


def spec(shape, m, *axes, dtype=jnp.float32):
    return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(m, P(*axes)))


def control_flow(m):
    def f(x, w):
        y = jnp.tanh(x @ w)
        y = jax.lax.with_sharding_constraint(y, NamedSharding(m, P("data", None)))
        _, z = jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, y))
        z = jax.lax.cond(z.sum() > 0, lambda a: a + 1, lambda a: a - 1, z)
        z = jax.lax.optimization_barrier(z)
        return jnp.sum(z, axis=0), jax.nn.softmax(z)
    return jax.jit(f).lower(spec((8, 16), m, "data", None), spec((16, 32), m, None, "model"))


def shard_map_psum(m):
    def g(x):
        return jax.shard_map(lambda a: jax.lax.psum(a, "data"), mesh=m, in_specs=P("data", None),
                             out_specs=P(None, None))(x)
    return jax.jit(g).lower(spec((8, 16), m, "data", None))


def gpt_block_train_step(m):
    """One GPT block (layer norm, causal attention, MLP), its loss, grads and an SGD update."""
    d, heads, seq, batch, vocab = 32, 4, 16, 4, 64

    def layer_norm(x, g):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(var + 1e-5) * g

    def block(p, tokens):
        x = p["emb"][tokens]
        h = layer_norm(x, p["ln1"])
        q, k, v = jnp.split(h @ p["wqkv"], 3, axis=-1)
        split = lambda t: t.reshape(batch, seq, heads, d // heads).transpose(0, 2, 1, 3)
        q, k, v = split(q), split(k), split(v)
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(d // heads)
        s = jnp.where(jnp.tril(jnp.ones((seq, seq), bool)), s, -1e9)
        a = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s), v).transpose(0, 2, 1, 3).reshape(batch, seq, d)
        x = x + a @ p["wo"]
        x = x + jax.nn.gelu(layer_norm(x, p["ln2"]) @ p["w1"]) @ p["w2"]
        return x @ p["emb"].T

    def loss(p, tokens, labels):
        logits = block(p, tokens)
        logp = jax.nn.log_softmax(logits)
        return -jnp.take_along_axis(logp, labels[..., None], axis=-1).mean()

    def step(p, tokens, labels):
        l, g = jax.value_and_grad(loss)(p, tokens, labels)
        return l, jax.tree.map(lambda a, b: a - 0.1 * b, p, g)

    params = {"emb": spec((vocab, d), m, None, "model"), "ln1": spec((d,), m), "ln2": spec((d,), m),
              "wqkv": spec((d, 3 * d), m, None, "model"), "wo": spec((d, d), m, "model", None),
              "w1": spec((d, 4 * d), m, None, "model"), "w2": spec((4 * d, d), m, "model", None)}
    tokens = spec((batch, seq), m, "data", None, dtype=jnp.int32)
    return jax.jit(step).lower(params, tokens, tokens)


def main():
    if jax.device_count() < 4:
        sys.exit("needs XLA_FLAGS=--xla_force_host_platform_device_count=4")
    m = mesh()
    for name, make in [("jax_control_flow", control_flow), ("jax_shard_map", shard_map_psum),
                       ("jax_gpt_block_train_step", gpt_block_train_step)]:
        with open(os.path.join(HERE, name + ".mlir"), "w") as f:
            f.write(make(m).as_text())
        print("wrote", name)


if __name__ == "__main__":
    main()
