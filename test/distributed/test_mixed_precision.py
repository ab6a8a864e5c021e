"""bf16 compute with float32 master weights through parallelize (spmdkit.distributed.mixed_precision):
the GPT example, 20 AdamW steps on a 2x2 mesh (a child process), stays within 1e-2 relative of the
float32 one-device loss; every bf16 value the plan reshards is priced at 2 bytes per element (half
what the same reshard moves at float32) and the program handed to XLA moves what the plan says."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from child_process import json_rows, run_child  # noqa: E402
from dist_support import has_jax_rules, has_propagation  # noqa: E402

needs_rules = pytest.mark.skipif(not (has_jax_rules() and has_propagation()),
                                 reason="this build of spmdkit._core lacks the jax.* rules or propagation")

CHILD = """
import json, os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
from spmdkit.distributed import parallelize
from spmdkit.examples.optim import OPTIMIZERS, state_placements
from spmdkit.examples.setups import SETUPS, mesh_of
from spmdkit.examples.train import make_step, run
row = run("gpt", "2x2", 20, "adamw", precision="bf16", xla=False)   # against the float32 one-device run
row.pop("pictures")
print(json.dumps(row))
setup = SETUPS["gpt"]("2x2")                    # the float32 step's plan, for its bytes (no need to run it)
init, update = OPTIMIZERS["adamw"](0.01)
pp, bp = setup.param_placements, setup.batch_placements
sp = state_placements("adamw", pp)
f32 = parallelize(make_step(setup.loss_fn, update), mesh_of("2x2"), (pp, sp, bp, bp), (pp, sp, None, pp),
                  example_args=(setup.params, init(setup.params), *setup.batch))
print(json.dumps({"plan": {"counts": f32.plan.collectives, "bytes": f32.plan.bytes_per_device}}))
"""


@pytest.fixture(scope="module")
def rows():
    bf16, f32 = json_rows(run_child(["-c", CHILD], timeout=300).stdout)
    return {"f32": f32, "bf16": bf16}


@needs_rules
def test_bf16_loss_within_1e2_of_float32_over_20_steps(rows):
    bf16 = rows["bf16"]
    assert all(bf16["checks"].values()), bf16["checks"]
    assert len(bf16["steps"]) == 20
    for s in bf16["steps"]:   # ref_loss: the float32 step jitted on one device
        assert abs(s["loss"] - s["ref_loss"]) <= 1e-2 * abs(s["ref_loss"])
    assert bf16["steps"][-1]["ref_loss"] < 0.5 * bf16["steps"][0]["ref_loss"]   # it trains
    assert max(s["loss_diff"] for s in bf16["steps"]) > 1e-6    # and it did compute in bf16


@needs_rules
def test_bf16_collectives_move_half_the_bytes(rows):
    bf16, f32 = rows["bf16"], rows["f32"]
    low = bf16["low_precision"]
    assert low["reshards"] >= 10 and low["itemsizes"] == [2]
    assert 2 * low["bytes"] == low["as_f32"]
    # the same collectives as the float32 plan; only the bf16 ones got cheaper, by half
    assert bf16["plan"]["counts"] == f32["plan"]["counts"]
    assert bf16["plan"]["bytes"] == pytest.approx(f32["plan"]["bytes"] - low["bytes"])
    # the program we emit moves exactly that; XLA:CPU then upcasts bf16 collectives to float32
    # (GPUs run them in bf16), so the compiled CPU program has the plan's collectives at f32 bytes
    assert bf16["emitted"]["counts"] == bf16["plan"]["counts"]
    assert bf16["emitted"]["bytes"] == pytest.approx(bf16["plan"]["bytes"])
    assert bf16["hlo"]["counts"] == bf16["plan"]["counts"]


def test_bf16_values_count_two_bytes():
    from types import SimpleNamespace

    from spmdkit.partition.partitioner import itemsize
    sizes = {d: itemsize(SimpleNamespace(type=SimpleNamespace(dtype=d))) for d in ("bf16", "f16", "f32", "f64", "i1")}
    assert sizes == {"bf16": 2, "f16": 2, "f32": 4, "f64": 8, "i1": 1}


def test_mixed_precision_keeps_float32_masters():
    import jax
    import jax.numpy as jnp

    from spmdkit.distributed import DistError, cast_floating, mixed_precision
    from spmdkit.models import gpt
    cfg = gpt.GPTConfig()
    params = jax.eval_shape(lambda: gpt.init_params(jax.random.PRNGKey(0), cfg))   # shapes only: nothing runs
    tokens = targets = jax.ShapeDtypeStruct((2, cfg.seq), jnp.int32)
    loss_bf16 = mixed_precision(gpt.loss_fn)
    jaxpr = str(jax.make_jaxpr(loss_bf16)(params, tokens, targets))
    assert "bf16[2,8,96]" in jaxpr and "bf16[2,4,8,8]" in jaxpr   # the qkv projection and attention in bf16
    loss, grads = jax.eval_shape(jax.value_and_grad(loss_bf16), params, tokens, targets)
    assert loss.dtype == jnp.float32                                # the loss and every gradient: float32
    assert {g.dtype for g in jax.tree_util.tree_leaves(grads)} == {jnp.dtype("float32")}
    cast = cast_floating({"w": jnp.ones(2), "ids": jnp.arange(2)}, jnp.bfloat16)
    assert cast["w"].dtype == jnp.bfloat16 and cast["ids"].dtype == jnp.int32
    with pytest.raises(DistError, match="floating"):
        mixed_precision(gpt.loss_fn, jnp.int32)
    with pytest.raises(DistError, match="loss_scale"):
        mixed_precision(gpt.loss_fn, loss_scale=0.0)
    params = {"w": np.float32(1.1), "x": np.float32(1.0 / 3)}
    product = lambda p: p["w"] * p["x"]  # noqa: E731
    in_bf16 = float(jnp.bfloat16(1.1) * jnp.bfloat16(1.0 / 3))
    assert in_bf16 != float(product(params))
    assert float(mixed_precision(product)(params)) == in_bf16            # computed in bf16
    assert float(mixed_precision(product, loss_scale=8.0)(params)) == 8 * in_bf16
