"""Each example's model, data and placements per mesh: the dims are named by role, `dp` (data
parallel: the batch), `mp` (Megatron tensor parallel: column-split then row-split weights) and, on
2x2x2, `fsdp` (fully sharded data parallel: the batch again, and the weights' other dim)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import jax

from ..distributed import ProcessMesh, Replicate, Shard
from ..models import encoder, gpt, mlp

MESHES = {"2x2": ((2, 2), ("dp", "mp")), "2x2x2": ((2, 2, 2), ("dp", "mp", "fsdp")), "2x4": ((2, 4), ("dp", "mp"))}
R = Replicate()


@dataclass
class Setup:
    params: dict
    batch: tuple
    loss_fn: Callable
    param_placements: dict
    batch_placements: list
    shown: tuple            # params drawn in the report


def mesh_of(key: str, device_ids=None) -> ProcessMesh:
    shape, names = MESHES[key]
    if device_ids is None:
        return ProcessMesh(shape=shape, dim_names=names)
    import numpy as np
    return ProcessMesh(np.asarray(device_ids).reshape(shape), dim_names=names)


def _p(mesh_key: str, mp=None, fsdp=None) -> list:
    """Placements of a param split along `mp` on tensor dim `mp` and along fsdp on `fsdp`."""
    out = [R, Shard(mp) if mp is not None else R]
    if mesh_key == "2x2x2":
        out.append(Shard(fsdp) if fsdp is not None else R)
    return out


def _pin_rest(placements: dict, params: dict, mesh_key: str) -> dict:
    """Every param not split by `placements` replicated, in and out. A step's state must come
    back in the layout it went in: left open, propagation may return a bias split over fsdp, and
    moving it back before the next step is a collective outside the step's plan (and its bytes)."""
    return {k: placements.get(k, _p(mesh_key)) for k in params}


def _batch(mesh_key: str) -> list:
    return [Shard(0), R] + ([Shard(0)] if mesh_key == "2x2x2" else [])


def mlp_setup(mesh_key: str) -> Setup:
    params = mlp.init_params(jax.random.PRNGKey(0))
    batch = mlp.example_batch(jax.random.PRNGKey(1), batch=8)
    pl = {"w1": _p(mesh_key, mp=1, fsdp=0), "b1": _p(mesh_key, mp=0), "w2": _p(mesh_key, mp=0, fsdp=1)}
    return Setup(params, batch, mlp.loss_fn, _pin_rest(pl, params, mesh_key), _batch(mesh_key), ("w1", "w2"))


def gpt_placements(params: dict, mesh_key: str) -> dict:
    """Megatron splits of every block's weights (columns then rows over mp, the other dim over
    fsdp); embeddings, norms and the remaining biases replicated."""
    pl = {}
    for i in range(gpt.n_layers_of(params)):
        pl.update({f"h{i}.w_qkv": _p(mesh_key, mp=1, fsdp=0), f"h{i}.b_qkv": _p(mesh_key, mp=0),
                   f"h{i}.w_o": _p(mesh_key, mp=0, fsdp=1), f"h{i}.w_fc": _p(mesh_key, mp=1, fsdp=0),
                   f"h{i}.b_fc": _p(mesh_key, mp=0), f"h{i}.w_proj": _p(mesh_key, mp=0, fsdp=1)})
    return _pin_rest(pl, params, mesh_key)


def batch_placements(mesh_key: str) -> list:
    return _batch(mesh_key)


def gpt_setup(mesh_key: str, cfg: gpt.GPTConfig = gpt.GPTConfig(), batch_size: int = 8) -> Setup:
    params = gpt.init_params(jax.random.PRNGKey(0), cfg)
    batch = gpt.example_batch(jax.random.PRNGKey(1), cfg, batch=batch_size)
    return Setup(params, batch, gpt.loss_fn, gpt_placements(params, mesh_key), _batch(mesh_key),
                 ("h0.w_qkv", "h0.w_proj"))


def encoder_placements(params: dict, mesh_key: str) -> dict:
    """Megatron over mp: q, k, v, gate and up column-split, o and down row-split, the rest
    replicated."""
    cols, rows = ("wq", "wk", "wv", "w_gate", "w_up"), ("wo", "w_down")
    pl = {k: _p(mesh_key, mp=1 if k.split(".")[-1] in cols else 0) for k in params
          if k.split(".")[-1] in cols + rows}
    return _pin_rest(pl, params, mesh_key)


def encoder_setup(mesh_key: str) -> Setup:
    """The auto-sharding checks' own 4-layer encoder (models/encoder.py), Megatron by hand."""
    params = encoder.init_params(jax.random.PRNGKey(0))
    batch = encoder.example_batch(jax.random.PRNGKey(1))
    return Setup(params, batch, encoder.loss_fn, encoder_placements(params, mesh_key), _batch(mesh_key),
                 ("l0.wq", "l0.w_down"))


def gptwide_setup(mesh_key: str) -> Setup:
    """A wider GPT (d_model 256, d_ff 1024, 8 heads, batch 16 x 64 tokens) where compute, not
    launch overhead, decides step times (the auto benchmarks' ranking check)."""
    cfg = gpt.GPTConfig(vocab=512, seq=64, d_model=256, n_heads=8, d_ff=1024)
    setup = gpt_setup(mesh_key, cfg, batch_size=16)
    setup.loss_fn = lambda params, tokens, targets: gpt.loss_fn(params, tokens, targets, n_heads=cfg.n_heads)
    return setup


SETUPS = {"mlp": mlp_setup, "gpt": gpt_setup, "encoder": encoder_setup, "gptwide": gptwide_setup}
