"""Train an example on a mesh of virtual CPU devices with spmdkit.dist and check every step
against one device: the loss, every gradient (max abs diff), the collectives our plan chose, the
ones the compiled program runs, and what XLA's own partitioning (jax.jit with NamedSharding
inputs) runs for the same step. `run(...)` returns the numbers; `report(...)` prints them.

JAX must see enough devices: import this module only after XLA_FLAGS has
--xla_force_host_platform_device_count (spmdkit.examples.cli sets it, or re-executes itself).
"""
from __future__ import annotations

import time

import jax
import numpy as np
from jax.sharding import NamedSharding

from ..dist import parallelize, visualize
from ..dist.compare import compiled_report, counts_text, xla_auto_report
from ..dist.placements import to_spec
from ..dist.parallelize import flat_placements
from .optim import OPTIMIZERS, state_placements
from .setups import SETUPS, mesh_of

TOL = 1e-5
LR = {"sgd": 0.1, "adamw": 0.01}


def make_step(loss_fn, update):
    def train_step(params, opt_state, inputs, targets):
        """Forward, backward, optimizer update: (new params, new state, loss, gradients)."""
        loss, grads = jax.value_and_grad(loss_fn)(params, inputs, targets)
        new_params, new_state = update(params, opt_state, grads)
        return new_params, new_state, loss, grads
    return train_step


def host(x) -> np.ndarray:
    """The global value of an array, also one spread over several processes."""
    if isinstance(x, jax.Array) and not x.is_fully_addressable:
        from jax.experimental import multihost_utils
        return np.asarray(multihost_utils.process_allgather(x, tiled=True))
    return np.asarray(x)


def max_abs(a, b) -> float:
    return float(np.max(np.abs(host(a).astype(np.float64) - host(b).astype(np.float64)), initial=0.0))


def run(model: str = "gpt", mesh_key: str = "2x2", steps: int = 5, optimizer: str = "adamw",
        strategy: str = "propagate", device_ids=None, xla: bool = True) -> dict:
    setup = SETUPS[model](mesh_key)
    mesh = mesh_of(mesh_key, device_ids)
    init, update = OPTIMIZERS[optimizer](LR[optimizer])
    step = make_step(setup.loss_fn, update)
    params, opt_state = setup.params, init(setup.params)
    inputs, targets = setup.batch
    pp, bp = setup.param_placements, setup.batch_placements
    sp = state_placements(optimizer, pp)
    args = (params, opt_state, inputs, targets)

    t0 = time.perf_counter()
    ours = parallelize(step, mesh, (pp, sp, bp, bp), out_placements=(pp, sp, None, pp), strategy=strategy,
                       example_args=args)
    plan_s = time.perf_counter() - t0
    hlo = compiled_report(ours.lower(*args).compile().as_text())
    reference = jax.jit(step)

    row = {"case": f"{model}-{mesh_key}-{optimizer}", "strategy": strategy, "steps": []}
    if xla:
        jm = mesh.jax_mesh()
        named = lambda entries, tree, what: [NamedSharding(jm, to_spec(e or [], mesh, np.shape(x)) if e else  # noqa: E731
                                                           jax.sharding.PartitionSpec())
                                             for e, x in zip(flat_placements(entries, tree, what),
                                                             jax.tree_util.tree_leaves(tree))]
        in_sh = named((pp, sp, bp, bp), args, "in_placements")
        out_tree = jax.eval_shape(step, *args)
        out_sh = named((pp, sp, None, pp), out_tree, "out_placements")
        treedef_in = jax.tree_util.tree_structure(args)
        treedef_out = jax.tree_util.tree_structure(out_tree)
        xla_rep, _ = xla_auto_report(step, args, jax.tree_util.tree_unflatten(treedef_in, in_sh),
                                     jax.tree_util.tree_unflatten(treedef_out, out_sh))
        row["xla"] = xla_rep
    ours_state, ref_state = args, args
    for i in range(steps):
        t = time.perf_counter()
        out = jax.block_until_ready(ours(*ours_state))
        ms = (time.perf_counter() - t) * 1e3
        ref = jax.block_until_ready(reference(*ref_state))
        grads = {k: max_abs(out[3][k], ref[3][k]) for k in sorted(ref[3])}
        loss, ref_loss = float(host(out[2])), float(ref[2])
        row["steps"].append({"loss": loss, "ref_loss": ref_loss, "loss_diff": abs(loss - ref_loss),
                             "grad_diff": grads, "param_diff": max(max_abs(out[0][k], ref[0][k]) for k in ref[0]),
                             "ms": ms})
        ours_state = (out[0], out[1], inputs, targets)
        ref_state = (ref[0], ref[1], inputs, targets)
    plan = ours.plan
    row.update({"plan": {"counts": plan.collectives, "bytes": plan.bytes_per_device, "cost_us": plan.cost_us},
                "hlo": hlo, "partition_s": plan_s,
                "pictures": [visualize(ours_state[0][k], name=k) for k in setup.shown]})
    row["checks"] = checks(row)
    return row


def checks(row: dict) -> dict[str, bool]:
    """The pass/fail of each claim (all must hold)."""
    out = {
        "loss within 1e-5": all(s["loss_diff"] <= TOL for s in row["steps"]),
        "every gradient within 1e-5": all(max(s["grad_diff"].values()) <= TOL for s in row["steps"]),
        "compiled collectives == plan": row["hlo"]["counts"] == row["plan"]["counts"] and
        abs(row["hlo"]["bytes"] - row["plan"]["bytes"]) <= 1e-6 * max(1.0, row["plan"]["bytes"]),
    }
    if row["case"].endswith("-sgd"):  # AdamW divides by sqrt(v) + eps: rounding in near-zero grads is amplified
        out["params within 1e-5"] = all(s["param_diff"] <= TOL for s in row["steps"])
    if "xla" in row:
        out["bytes <= XLA's"] = row["plan"]["bytes"] <= row["xla"]["bytes"] + 1e-9
    return out


def report(row: dict) -> str:
    lines = [f"== {row['case']} (shardings: {row['strategy']}; traced+propagated+partitioned in "
             f"{row['partition_s']:.2f} s)"]
    for i, s in enumerate(row["steps"]):
        worst = max(s["grad_diff"], key=s["grad_diff"].get)
        lines.append(f"step {i}: loss {s['loss']:.6f}  one device {s['ref_loss']:.6f}  |diff| {s['loss_diff']:.1e}"
                     f"  max grad diff {s['grad_diff'][worst]:.1e} ({worst}, {len(s['grad_diff'])} grads)"
                     f"  params {s['param_diff']:.1e}  {s['ms']:.1f} ms")
    p, h = row["plan"], row["hlo"]
    lines.append(f"collectives per step, our plan:     {counts_text(p['counts'])}; {p['bytes']:.0f} B/device; "
                 f"modeled {p['cost_us']:.1f} us")
    lines.append(f"collectives per step, compiled HLO: {counts_text(h['counts'])}; {h['bytes']:.0f} B/device")
    if "xla" in row:
        x = row["xla"]
        lines.append(f"XLA automatic partitioning:         {counts_text(x['counts'])}; {x['bytes']:.0f} B/device")
    lines.extend(row["pictures"])
    for name, ok in row["checks"].items():
        lines.append(f"[{'ok' if ok else 'FAIL'}] {name}")
    return "\n".join(lines)
