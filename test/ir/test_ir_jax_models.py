"""The pure-JAX models the importer and training use: they learn, the GPT block is causal, and bad
configurations or inputs raise ValueError naming the field."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spmdkit.models import gpt, mlp

CFG = gpt.GPTConfig(n_layers=2)


@pytest.fixture(scope="module")
def gpt_state():
    return gpt.init_params(jax.random.PRNGKey(0), CFG), jax.jit(gpt.logits_fn)


def test_gpt_shapes_and_params(gpt_state):
    params, logits = gpt_state
    tokens, targets = gpt.example_batch(jax.random.PRNGKey(1), CFG, batch=3)
    assert tokens.shape == targets.shape == (3, CFG.seq) and tokens.dtype == jnp.int32
    assert logits(params, tokens).shape == (3, CFG.seq, CFG.vocab)
    assert gpt.n_layers_of(params) == 2 and params["h1.w_qkv"].shape == (CFG.d_model, 3 * CFG.d_model)
    # an untrained model is near uniform: loss close to log(vocab)
    assert abs(float(gpt.loss_fn(params, tokens, targets)) - np.log(CFG.vocab)) < 0.2


@settings(max_examples=8, deadline=None)
@given(position=st.integers(0, CFG.seq - 1), token=st.integers(0, CFG.vocab - 1), seed=st.integers(0, 100))
def test_gpt_is_causal(gpt_state, position, token, seed):
    """Changing token t never changes the logits of positions before t."""
    params, logits = gpt_state
    tokens, _ = gpt.example_batch(jax.random.PRNGKey(seed), CFG, batch=1)
    changed = tokens.at[0, position].set(token)
    a, b = logits(params, tokens), logits(params, changed)
    np.testing.assert_allclose(np.asarray(a[:, :position]), np.asarray(b[:, :position]), atol=1e-5)


def test_gpt_train_step_learns_a_fixed_batch():
    cfg = gpt.GPTConfig()
    params = gpt.init_params(jax.random.PRNGKey(3), cfg)
    tokens, targets = gpt.example_batch(jax.random.PRNGKey(4), cfg)
    step = jax.jit(gpt.train_step, static_argnames="n_heads")
    losses = []
    for _ in range(30):
        params, loss = step(params, tokens, targets, 0.5)
        losses.append(float(loss))
    assert losses[-1] < losses[0] - 0.5, losses


def test_mlp_train_step_learns():
    params = mlp.init_params(jax.random.PRNGKey(0))
    x, y = mlp.example_batch(jax.random.PRNGKey(1))
    step = jax.jit(mlp.train_step)
    first = None
    for _ in range(40):
        params, loss = step(params, x, y)
        first = float(loss) if first is None else first
    assert float(mlp.loss_fn(params, x, y)) < 0.7 * first


@pytest.mark.parametrize("kwargs, match", [
    ({"vocab": 0}, "vocab"), ({"d_model": 30, "n_heads": 4}, "not divisible"), ({"seq": 2.5}, "seq"),
    ({"n_layers": True}, "n_layers"),
])
def test_gpt_config_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gpt.GPTConfig(**kwargs)


def test_gpt_input_errors(gpt_state):
    params, _ = gpt_state
    with pytest.raises(ValueError, match="tokens must be \\[batch, seq\\]"):
        gpt.logits_fn(params, jnp.zeros((CFG.seq,), jnp.int32))
    with pytest.raises(ValueError, match="exceeds the position table"):
        gpt.logits_fn(params, jnp.zeros((1, CFG.seq + 1), jnp.int32))
    with pytest.raises(ValueError, match="d_hidden"):
        mlp.MLPConfig(d_hidden=-1)
