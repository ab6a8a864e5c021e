"""SGD and AdamW as pure functions of (params, state, grads): the update is part of the traced
training step, so it is partitioned with the rest (its state sharded like the params)."""
from __future__ import annotations

import jax
import jax.numpy as jnp


def sgd(lr: float = 0.1):
    def init(params):
        return {}

    def update(params, state, grads):
        return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), state
    return init, update


def adamw(lr: float = 0.01, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8, weight_decay: float = 0.01):
    def init(params):
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        return {"m": zeros, "v": jax.tree_util.tree_map(jnp.zeros_like, params), "t": jnp.zeros((), jnp.float32)}

    def update(params, state, grads):
        t = state["t"] + 1.0
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], grads)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], grads)
        c1, c2 = 1.0 - b1 ** t, 1.0 - b2 ** t   # bias corrections
        new = jax.tree_util.tree_map(
            lambda p, m, v: p - lr * ((m / c1) / (jnp.sqrt(v / c2) + eps) + weight_decay * p), params, m, v)
        return new, {"m": m, "v": v, "t": t}
    return init, update


OPTIMIZERS = {"sgd": sgd, "adamw": adamw}


def state_placements(optimizer: str, param_placements: dict):
    """The optimizer state's placements: moments like their params, the step count replicated."""
    return {} if optimizer == "sgd" else {"m": param_placements, "v": param_placements, "t": None}
