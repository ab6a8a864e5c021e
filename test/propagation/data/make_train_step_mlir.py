"""Regenerate gpt_2x2x2_sgd_step.mlir: the GPT example's SGD training step on the dp x mp x fsdp
mesh, lowered by jax 0.10.2 (`jax.jit(step, in_shardings, out_shardings).lower(...).as_text()`),
shardings from spmdkit.examples' placements. Run from the repository root:
    XLA_FLAGS=--xla_force_host_platform_device_count=8 PYTHONPATH=python python test/propagation/data/make_train_step_mlir.py
"""
import os

import jax

from spmdkit.examples.optim import OPTIMIZERS, state_placements
from spmdkit.examples.setups import SETUPS, mesh_of
from spmdkit.examples.train import LR, _named_tree, make_step


def lowered(model: str, mesh_key: str, optimizer: str) -> str:
    setup, mesh = SETUPS[model](mesh_key), mesh_of(mesh_key)
    init, update = OPTIMIZERS[optimizer](LR[optimizer])
    step = make_step(setup.loss_fn, update)
    args = (setup.params, init(setup.params), *setup.batch)
    pp, bp, sp = setup.param_placements, setup.batch_placements, state_placements(optimizer, setup.param_placements)
    in_sh = _named_tree(mesh, (pp, sp, bp, bp), args, "in_placements")
    out_sh = _named_tree(mesh, (pp, sp, None, pp), jax.eval_shape(step, *args), "out_placements")
    return jax.jit(step, in_shardings=in_sh, out_shardings=out_sh).lower(*args).as_text()


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "gpt_2x2x2_sgd_step.mlir"), "w") as f:
        f.write(lowered("gpt", "2x2x2", "sgd"))
