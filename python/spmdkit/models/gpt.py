"""A GPT block in pure JAX: the model the IR importer, propagation and training examples share.

Token + position embedding, pre-norm causal multi-head attention, a gelu MLP, a final layer norm,
tied output projection and a mean cross-entropy loss. Params are a flat dict of arrays so that a
sharding can be named per parameter. Sizes are small by default: tests trace and run it on CPU.
"""
from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp


@dataclass(frozen=True)
class GPTConfig:
    vocab: int = 64
    seq: int = 8
    d_model: int = 32
    n_heads: int = 4
    d_ff: int = 64
    n_layers: int = 1

    def __post_init__(self):
        for name in ("vocab", "seq", "d_model", "n_heads", "d_ff", "n_layers"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"GPTConfig.{name} must be a positive integer, got {v!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"GPTConfig: d_model={self.d_model} is not divisible by n_heads={self.n_heads}")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


def init_params(key, cfg: GPTConfig = GPTConfig()) -> dict:
    """Normal(0, 0.02) weights, zero biases, unit layer-norm scales; one block per layer."""
    keys = iter(jax.random.split(key, 2 + 4 * cfg.n_layers))
    w = lambda shape: 0.02 * jax.random.normal(next(keys), shape, jnp.float32)  # noqa: E731
    d, f = cfg.d_model, cfg.d_ff
    params = {"wte": w((cfg.vocab, d)), "wpe": w((cfg.seq, d)),
              "lnf_g": jnp.ones((d,)), "lnf_b": jnp.zeros((d,))}
    for i in range(cfg.n_layers):
        params.update({
            f"h{i}.ln1_g": jnp.ones((d,)), f"h{i}.ln1_b": jnp.zeros((d,)),
            f"h{i}.w_qkv": w((d, 3 * d)), f"h{i}.b_qkv": jnp.zeros((3 * d,)),
            f"h{i}.w_o": w((d, d)), f"h{i}.b_o": jnp.zeros((d,)),
            f"h{i}.ln2_g": jnp.ones((d,)), f"h{i}.ln2_b": jnp.zeros((d,)),
            f"h{i}.w_fc": w((d, f)), f"h{i}.b_fc": jnp.zeros((f,)),
            f"h{i}.w_proj": w((f, d)), f"h{i}.b_proj": jnp.zeros((d,)),
        })
    return params


def layer_norm(x, g, b, eps: float = 1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * g + b


def gelu(x):
    # the tanh approximation (GPT-2's), so the jaxpr has tanh and integer_pow
    return 0.5 * x * (1.0 + jnp.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def attention(x, w_qkv, b_qkv, w_o, b_o, n_heads: int):
    batch, seq, d = x.shape
    qkv = x @ w_qkv + b_qkv
    q, k, v = jnp.split(qkv, 3, axis=-1)
    heads = lambda t: t.reshape(batch, seq, n_heads, d // n_heads).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = heads(q), heads(k), heads(v)
    # constants in the compute dtype, so bf16 activations stay bf16 (float32 ones would promote)
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(jnp.asarray(d // n_heads, q.dtype))
    causal = jnp.tril(jnp.ones((seq, seq), bool))
    scores = jnp.where(causal, scores, jnp.asarray(-1e9, scores.dtype))
    probs = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("bhqk,bhkd->bhqd", probs, v).transpose(0, 2, 1, 3).reshape(batch, seq, d)
    return out @ w_o + b_o


def block(params: dict, x, i: int, n_heads: int):
    p = lambda name: params[f"h{i}.{name}"]  # noqa: E731
    x = x + attention(layer_norm(x, p("ln1_g"), p("ln1_b")), p("w_qkv"), p("b_qkv"), p("w_o"), p("b_o"), n_heads)
    h = gelu(layer_norm(x, p("ln2_g"), p("ln2_b")) @ p("w_fc") + p("b_fc"))
    return x + h @ p("w_proj") + p("b_proj")


def n_layers_of(params: dict) -> int:
    return len({k.split(".")[0] for k in params if k.startswith("h")})


def logits_fn(params: dict, tokens, n_heads: int = GPTConfig.n_heads):
    """Logits [batch, seq, vocab] of int tokens [batch, seq]."""
    if tokens.ndim != 2:
        raise ValueError(f"gpt: tokens must be [batch, seq], got shape {tuple(tokens.shape)}")
    seq = tokens.shape[1]
    if seq > params["wpe"].shape[0]:
        raise ValueError(f"gpt: sequence length {seq} exceeds the position table ({params['wpe'].shape[0]})")
    x = params["wte"][tokens] + params["wpe"][:seq]
    for i in range(n_layers_of(params)):
        x = block(params, x, i, n_heads)
    x = layer_norm(x, params["lnf_g"], params["lnf_b"])
    return x @ params["wte"].T


def cross_entropy(logits, targets):
    logp = jax.nn.log_softmax(logits, axis=-1)
    picked = jnp.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]
    return -jnp.mean(picked)


def loss_fn(params: dict, tokens, targets, n_heads: int = GPTConfig.n_heads):
    # the softmax and the mean in float32 also when the model computes in bf16 (no-op for float32)
    return cross_entropy(logits_fn(params, tokens, n_heads).astype(jnp.float32), targets)


def train_step(params: dict, tokens, targets, lr: float = 0.1, n_heads: int = GPTConfig.n_heads):
    """One SGD step: (new params, loss before the step)."""
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets, n_heads)
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), loss


def example_batch(key, cfg: GPTConfig = GPTConfig(), batch: int = 2):
    """Random tokens and next-token targets, both [batch, seq] int32."""
    data = jax.random.randint(key, (batch, cfg.seq + 1), 0, cfg.vocab, jnp.int32)
    return data[:, :-1], data[:, 1:]
