"""Regenerate cnn_pool_step.mlir: a small CNN's SGD training step (convolution, relu,
reduce_precision, a 2x2 max pool and its gradient, StableHLO's select_and_scatter, a dense
layer, softmax cross entropy) on a dp x mp mesh, lowered by jax 0.10.2
(`jax.jit(step, in_shardings).lower(...).as_text()`). Run from the repository root:
    XLA_FLAGS=--xla_force_host_platform_device_count=8 PYTHONPATH=python python test/propagation/data/make_cnn_pool_step_mlir.py
"""
import os

import jax, jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("dp", "mp"))
def loss(p, x, y):
    h = lax.conv_general_dilated(x, p["k"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    h = lax.reduce_precision(jax.nn.relu(h), exponent_bits=5, mantissa_bits=10)
    h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    logits = h.reshape(h.shape[0], -1) @ p["w"]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, -1))
def step(p, x, y):
    l, g = jax.value_and_grad(loss)(p, x, y)
    return jax.tree.map(lambda a, b: a - 0.1 * b, p, g), l
p = {"k": jnp.ones((3, 3, 4, 8)), "w": jnp.ones((4 * 4 * 8, 16))}
x = jnp.ones((8, 8, 8, 4)); y = jnp.ones((8, 16))
ps = {"k": NamedSharding(mesh, P(None, None, None, "mp")), "w": NamedSharding(mesh, P(None, "mp"))}
d = NamedSharding(mesh, P("dp"))
txt = jax.jit(step, in_shardings=(ps, d, d)).lower(p, x, y).as_text()
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "cnn_pool_step.mlir"), "w").write(txt)
