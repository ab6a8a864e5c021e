"""A small transformer encoder of the auto-sharding checks' own (issue 17: a step of >= 4 layers on
a 2x4 mesh with only the batch placed): RMS norm, multi-head self-attention without a mask, a
SwiGLU feed-forward, residuals, mean pooling and a linear regression head with a squared loss.
Different from spmdkit.models.gpt on purpose (no embedding, no causal mask, gated MLP, separate
q/k/v weights), so the search meets ops and shapes the GPT example does not have.

Its hand placements (Megatron's, spmdkit.examples.setups) column-split q, k, v, gate and up over
mp and row-split o and down, everything else replicated; the batch over dp.
"""
from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp


@dataclass(frozen=True)
class EncoderConfig:
    n_layers: int = 4
    d_model: int = 16
    n_heads: int = 4
    d_ff: int = 32
    seq: int = 8
    d_in: int = 8

    def __post_init__(self):
        for name in ("n_layers", "d_model", "n_heads", "d_ff", "seq", "d_in"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"EncoderConfig.{name} must be a positive integer, got {v!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"EncoderConfig: d_model={self.d_model} is not divisible by n_heads={self.n_heads}")


WEIGHTS = ("wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down")


def init_params(key, cfg: EncoderConfig = EncoderConfig()) -> dict:
    keys = iter(jax.random.split(key, 2 + len(WEIGHTS) * cfg.n_layers))
    w = lambda shape: jax.random.normal(next(keys), shape, jnp.float32) / shape[0] ** 0.5  # noqa: E731
    d, f = cfg.d_model, cfg.d_ff
    params = {"w_in": w((cfg.d_in, d)), "w_head": w((d, 1))}
    for i in range(cfg.n_layers):
        params.update({f"l{i}.norm1": jnp.ones((d,)), f"l{i}.norm2": jnp.ones((d,)),
                       f"l{i}.wq": w((d, d)), f"l{i}.wk": w((d, d)), f"l{i}.wv": w((d, d)), f"l{i}.wo": w((d, d)),
                       f"l{i}.w_gate": w((d, f)), f"l{i}.w_up": w((d, f)), f"l{i}.w_down": w((f, d))})
    return params


def n_layers_of(params: dict) -> int:
    return sum(1 for k in params if k.endswith(".wq"))


def rms_norm(x, g, eps: float = 1e-6):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * g


def attention(x, p: dict, i: int, n_heads: int):
    b, s, d = x.shape
    split = lambda t: t.reshape(b, s, n_heads, d // n_heads)  # noqa: E731
    q, k, v = split(x @ p[f"l{i}.wq"]), split(x @ p[f"l{i}.wk"]), split(x @ p[f"l{i}.wv"])
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) * (d // n_heads) ** -0.5
    out = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores, axis=-1), v)
    return out.reshape(b, s, d) @ p[f"l{i}.wo"]


def feed_forward(x, p: dict, i: int):
    return (jax.nn.silu(x @ p[f"l{i}.w_gate"]) * (x @ p[f"l{i}.w_up"])) @ p[f"l{i}.w_down"]


def loss_fn(params: dict, inputs, targets, n_heads: int = EncoderConfig.n_heads):
    x = inputs @ params["w_in"]
    for i in range(n_layers_of(params)):
        x = x + attention(rms_norm(x, params[f"l{i}.norm1"]), params, i, n_heads)
        x = x + feed_forward(rms_norm(x, params[f"l{i}.norm2"]), params, i)
    pred = jnp.mean(x, axis=1) @ params["w_head"]
    return jnp.mean(jnp.square(pred[:, 0] - targets))


def example_batch(key, cfg: EncoderConfig = EncoderConfig(), batch: int = 8):
    k1, k2 = jax.random.split(key)
    return (jax.random.normal(k1, (batch, cfg.seq, cfg.d_in), jnp.float32),
            jax.random.normal(k2, (batch,), jnp.float32))
