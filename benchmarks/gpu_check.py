"""Checks and timings for a machine with one GPU; also runs on CPU-only machines (and says so).

    python benchmarks/gpu_check.py [--steps 20] [--model gpt|charlm] [--repeats 5] [--json]

1. The GPT example's training step (AdamW; the charlm model with --model charlm) through
   `spmdkit.distributed.parallelize` on a mesh of the one GPU: loss and gradients against the same
   step jitted on that device (within 1e-5), the median step time of both, and the same in bf16
   (mixed precision) against float32 (within 1e-2 relative).
2. A 1x2 mesh of the GPU and one host CPU device: JAX meshes hold devices of one platform, so
   this is tried and JAX's refusal is reported; where JAX accepts it, it runs like 1.
3. Rule and propagation timings on this machine: `matmul` infer_forward per call from Python,
   and `spmdkit.propagate` of the imported GPT step (median of repeats).
Without a GPU every check runs on one CPU device, and the report says "no GPU". Exit 1 when a
check fails. Figures measured on a GPU belong in docs/gpu.md.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def _devices():
    import jax
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:   # no GPU backend in this jaxlib, or no GPU
        gpus = []
    return gpus, jax.devices("cpu")


def _model(which: str):
    import jax

    from spmdkit.examples.charlm import CharLMConfig, batch_at, corpus
    from spmdkit.models import gpt
    if which == "charlm":
        cfg = CharLMConfig()
        x, y = batch_at(corpus(cfg.corpus_bytes), 0, cfg.batch, cfg.model.seq, cfg.seed)
        return cfg.model, gpt.init_params(jax.random.PRNGKey(0), cfg.model), (x, y)
    mcfg = gpt.GPTConfig()
    return mcfg, gpt.init_params(jax.random.PRNGKey(0), mcfg), gpt.example_batch(jax.random.PRNGKey(1), mcfg, 8)


def _train_step(loss_fn):
    import jax

    from spmdkit.examples.optim import adamw
    init, update = adamw(1e-3)

    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        new_params, new_state = update(params, opt_state, grads)
        return new_params, new_state, loss, grads
    return init, step


def _median_ms(fn, args, steps: int):
    """(outputs of the first call, losses of every call, median ms of the calls after the first)."""
    import jax
    times, losses, state, first = [], [], args, None
    for _ in range(steps):
        t = time.perf_counter()
        out = jax.block_until_ready(fn(*state))
        times.append((time.perf_counter() - t) * 1e3)
        first = first or out
        losses.append(float(out[2]))
        state = (out[0], out[1], *args[2:])
    return first, losses, statistics.median(times[1:] or times)


_REFERENCE: dict = {}


def check_mesh(devices, model: str, steps: int, precision: str = "f32") -> dict:
    """parallelize on a 1 x len(devices) mesh of `devices` against jax.jit on devices[0]."""
    import functools

    import jax
    import numpy as np

    from spmdkit.distributed import ProcessMesh, mixed_precision, parallelize
    from spmdkit.examples.setups import batch_placements, gpt_placements
    from spmdkit.models import gpt
    cfg, params, (x, y) = _model(model)
    loss_fn = functools.partial(gpt.loss_fn, n_heads=cfg.n_heads)
    init, step = _train_step(loss_fn if precision == "f32" else mixed_precision(loss_fn))
    if model not in _REFERENCE:   # the float32 step jitted once per model (compiled once per device)
        _REFERENCE[model] = jax.jit(_train_step(loss_fn)[1])
    mesh = ProcessMesh([[d.id for d in devices]], dim_names=["dp", "mp"])
    pp, bp = gpt_placements(params, "2x2"), batch_placements("2x2")
    sp = {"m": pp, "v": pp, "t": None}
    put = functools.partial(jax.device_put, device=devices[0])
    args = jax.tree_util.tree_map(put, (params, init(params), np.asarray(x), np.asarray(y)))
    t = time.perf_counter()
    ours = parallelize(step, mesh, (pp, sp, bp, bp), out_placements=(pp, sp, None, pp), example_args=args)
    trace_s = time.perf_counter() - t
    out, losses, ms = _median_ms(ours, args, steps)
    ref, ref_losses, ref_ms = _median_ms(_REFERENCE[model], args, steps)
    grad_diff = max(float(np.max(np.abs(np.asarray(out[3][k], np.float64) - np.asarray(ref[3][k], np.float64))))
                    for k in ref[3])
    rel = max(abs(a - b) / abs(b) for a, b in zip(losses, ref_losses))
    tol = 1e-5 if precision == "f32" else 1e-2
    return {"devices": [str(d) for d in devices], "model": model, "precision": precision,
            "trace_partition_s": round(trace_s, 3), "ms_per_step": round(ms, 3), "one_device_ms": round(ref_ms, 3),
            "loss": losses[-1], "one_device_loss": ref_losses[-1], "max_rel_loss_diff": rel,
            "max_grad_diff_step0": grad_diff, "plan_bytes": ours.plan.bytes_per_device,
            "ok": rel <= tol and (precision != "f32" or grad_diff <= 1e-5)}


def _first_line(e: Exception) -> str:
    return f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:200]}"


def check_mixed_mesh(gpu, cpus, model: str, steps: int) -> dict:
    """The GPU and one host CPU device in a 1x2 mesh. JAX is asked first (a sharded sum over
    such a mesh); its refusal is the expected answer and is reported. Where JAX accepts, the
    step runs through parallelize like check_mesh, and a failure there is ours (ok False)."""
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    if not cpus:
        return {"ok": True, "refused": "no CPU devices"}
    try:
        mesh = Mesh(np.array([gpu, cpus[0]], dtype=object).reshape(1, 2), ("dp", "mp"))
        x = jax.device_put(np.arange(8.0).reshape(2, 4), NamedSharding(mesh, PartitionSpec(None, "mp")))
        assert float(jax.jit(lambda a: a.sum())(x)) == 28.0
    except Exception as e:   # JAX wants one platform per mesh
        return {"ok": True, "refused": "JAX: " + _first_line(e)}
    try:
        return {**check_mesh([gpu, cpus[0]], model, steps), "refused": None}
    except Exception as e:
        return {"ok": False, "refused": "spmdkit (JAX accepts this mesh): " + _first_line(e)}


def rule_and_propagation_timings(repeats: int = 5) -> dict:
    import jax

    from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core, propagate
    from spmdkit.examples.setups import gpt_setup
    from spmdkit.ir import import_jax
    mesh = ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])

    def spec(shape, mapping):
        a = TensorDistAttr()
        a.process_mesh, a.dims_mapping = mesh, mapping
        return DistTensorSpec(shape, a)
    rule, a, b = core.get_phi_spmd_rule("matmul"), spec([64, 32], [1, 0]), spec([32, 48], [0, -1])
    calls, blocks = 2000, []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(calls):
            rule.infer_forward(a, b, False, False)
        blocks.append((time.perf_counter() - t) / calls * 1e6)
    setup = gpt_setup("2x2")
    _, step = _train_step(setup.loss_fn)
    from spmdkit.examples.optim import adamw
    state = adamw()[0](setup.params)
    props = []
    for _ in range(repeats):
        program = import_jax(step, setup.params, state, *setup.batch, inline_calls=True)
        t = time.perf_counter()
        propagate(program)
        props.append((time.perf_counter() - t) * 1e3)
    ops = len(list(program.main.body.ops))
    return {"matmul_infer_forward_us": round(statistics.median(blocks), 3),
            "propagate_gpt_step_ms": round(statistics.median(props), 3), "gpt_step_ops": ops,
            "jax": jax.__version__}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--model", choices=["gpt", "charlm"], default="gpt")
    p.add_argument("--repeats", type=int, default=5, help="timing repeats for the rule and propagation")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    import jax
    gpus, cpus = _devices()
    target = gpus[0] if gpus else cpus[0]
    print(f"jax {jax.__version__}, backend {jax.default_backend()}: "
          + (f"{len(gpus)} GPU(s), using {gpus[0].device_kind} ({gpus[0]})" if gpus
             else "no GPU: running every check on one CPU device"))
    rows = {"gpu": bool(gpus), "device": str(target), "one_device_mesh": check_mesh([target], args.model, args.steps),
            "bf16": check_mesh([target], args.model, args.steps, "bf16")}
    rows["gpu_plus_cpu_mesh"] = check_mixed_mesh(gpus[0], cpus, args.model, args.steps) if gpus else \
        {"ok": True, "refused": "no GPU"}
    rows["timings"] = rule_and_propagation_timings(args.repeats)
    for name in ("one_device_mesh", "bf16"):
        r = rows[name]
        print(f"{name:16s} [{'ok' if r['ok'] else 'FAIL'}] {r['precision']}: loss {r['loss']:.6f} vs one device "
              f"{r['one_device_loss']:.6f} (max rel diff {r['max_rel_loss_diff']:.1e}); "
              f"{r['ms_per_step']:.2f} ms/step, "
              f"jax.jit {r['one_device_ms']:.2f} ms; traced+partitioned in {r['trace_partition_s']:.2f} s")
    m = rows["gpu_plus_cpu_mesh"]
    print("gpu + cpu mesh   " + (f"not run: {m['refused']}" if m.get("refused") else
                                 f"[{'ok' if m['ok'] else 'FAIL'}] {m['ms_per_step']:.2f} ms/step"))
    t = rows["timings"]
    print(f"rules            matmul infer_forward {t['matmul_infer_forward_us']:.2f} us/call; propagate the GPT step "
          f"({t['gpt_step_ops']} ops) {t['propagate_gpt_step_ms']:.2f} ms")
    if args.json:
        print(json.dumps(rows))
    return 0 if all(rows[k]["ok"] for k in ("one_device_mesh", "bf16", "gpu_plus_cpu_mesh")) else 1


if __name__ == "__main__":
    sys.exit(main())
