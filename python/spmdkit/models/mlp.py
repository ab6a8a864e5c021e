"""A two-layer MLP regressor in pure JAX: the smallest model for importer and training tests."""
from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp


@dataclass(frozen=True)
class MLPConfig:
    d_in: int = 16
    d_hidden: int = 32
    d_out: int = 8

    def __post_init__(self):
        for name in ("d_in", "d_hidden", "d_out"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"MLPConfig.{name} must be a positive integer, got {v!r}")


def init_params(key, cfg: MLPConfig = MLPConfig()) -> dict:
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (cfg.d_in, cfg.d_hidden), jnp.float32) / cfg.d_in ** 0.5,
            "b1": jnp.zeros((cfg.d_hidden,)),
            "w2": jax.random.normal(k2, (cfg.d_hidden, cfg.d_out), jnp.float32) / cfg.d_hidden ** 0.5,
            "b2": jnp.zeros((cfg.d_out,))}


def forward(params: dict, x):
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    return h @ params["w2"] + params["b2"]


def loss_fn(params: dict, x, y):
    """Mean squared error."""
    return jnp.mean((forward(params, x) - y) ** 2)


def train_step(params: dict, x, y, lr: float = 0.05):
    """One SGD step: (new params, loss before the step)."""
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), loss


def example_batch(key, cfg: MLPConfig = MLPConfig(), batch: int = 8):
    kx, ky = jax.random.split(key)
    return (jax.random.normal(kx, (batch, cfg.d_in), jnp.float32),
            jax.random.normal(ky, (batch, cfg.d_out), jnp.float32))
