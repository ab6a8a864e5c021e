"""Child-process checks of the calibration, the plan evaluator and the mesh-shape search on 8
virtual CPU devices (started by test_auto_calibrate.py and test_auto_meshes.py; XLA_FLAGS must be
set before JAX starts). Prints one JSON line per job named on the command line."""
import json
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402

from spmdkit.distributed import Replicate, Shard, parallelize  # noqa: E402
from spmdkit.examples.optim import OPTIMIZERS  # noqa: E402
from spmdkit.examples.setups import SETUPS, mesh_of  # noqa: E402
from spmdkit.examples.train import LR, make_step, max_abs  # noqa: E402


def _mlp():
    setup = SETUPS["mlp"]("2x2")
    init, update = OPTIMIZERS["sgd"](LR["sgd"])
    step = make_step(setup.loss_fn, update)
    return setup, step, (setup.params, init(setup.params), *setup.batch)


def calibrate_job() -> dict:
    """The calibrated model of a 2x2 mesh; the MLP searched with it; the evaluator's cost of the
    partitioned plan against the search's own figures."""
    from spmdkit.auto import AutoCostModel, set_default_cost
    from spmdkit.auto.evaluate import modeled_cost
    mesh = mesh_of("2x2")
    model = AutoCostModel.calibrated(mesh, reps=5)
    setup, step, args = _mlp()
    set_default_cost(model)
    bp = setup.batch_placements
    auto = parallelize(step, mesh, (None, None, bp, bp), strategy="auto", example_args=args)
    r = auto.search_report
    m = modeled_cost(auto.partitioned, model)
    set_default_cost(None)
    return {"job": "calibrate", "flops_per_s": model.flops_per_s,
            "links": {a: [l.alpha_us, l.gbytes_per_s] for a, l in model.reshard.links},
            "report": {"compute_us": r.compute_us, "comm_us": r.comm_us, "bytes": r.comm_bytes},
            "evaluated": {"compute_us": m.compute_us, "comm_us": m.comm_us, "bytes": m.bytes,
                          "unpriced": m.unpriced},
            "plan_bytes": auto.plan.bytes_per_device}


def meshes_job() -> dict:
    """search_meshes over 2-dim shapes of 8 devices for the MLP, the batch over dim 0."""
    from spmdkit.auto import search_meshes
    setup, step, args = _mlp()
    batch = lambda m: [Shard(0)] + [Replicate()] * (m.ndim - 1)  # noqa: E731
    found = search_meshes(step, 8, lambda m: (None, None, batch(m), batch(m)), args, max_ndim=2)
    best = found.best
    out, want = best.step(*args), jax.jit(step)(*args)
    return {"job": "meshes", "text": str(found),
            "candidates": [{"shape": list(c.shape), "objective_us": c.objective_us, "error": c.error,
                            "report_objective_us": c.step.search_report.objective_us if c.step else None}
                           for c in found.candidates],
            "best": list(best.shape),
            "loss_diff": abs(float(out[2]) - float(want[2])),
            "grad_diff": max(max_abs(out[3][k], want[3][k]) for k in want[3])}


def memory_loop_job() -> dict:
    """parallelize's memory check on the compiled program (distributed/parallelize.py): the MLP
    with AdamW on 2x2 under a limit one byte below its replicated state, once as it compiles and
    once with a pretend overhead of `extra` bytes added to every compiled figure (standing in for
    temporaries the model does not count): each compiled figure and the limit searched under."""
    import importlib

    import numpy as np
    par = importlib.import_module("spmdkit.distributed.parallelize")   # the module, not the function
    from spmdkit.auto import AutoShardingError
    setup = SETUPS["mlp"]("2x2")
    init, update = OPTIMIZERS["adamw"](LR["adamw"])
    step = make_step(setup.loss_fn, update)
    args = (setup.params, init(setup.params), *setup.batch)
    limit = sum(np.asarray(x).nbytes for x in jax.tree_util.tree_leaves(args[:2])) - 1
    real = par.compiled_peak_bytes
    out = {"job": "memory_loop", "limit": limit, "runs": {}}
    bp = setup.batch_placements
    for name, extra in (("as_compiled", 0.0), ("never_fits", 1e9)):
        seen = []

        def peak(run, leaves, named, extra=extra, seen=seen):
            got = real(run, leaves, named) + extra
            seen.append(got)
            return got
        par.compiled_peak_bytes = peak
        row = {"peaks": seen}
        try:
            auto = parallelize(step, mesh_of("2x2"), (None, None, bp, bp), strategy="auto", example_args=args,
                               memory_limit=limit)
            r = auto.search_report
            row.update(compiled=r.compiled_memory, searched=r.searched_limit, modeled=r.memory_bytes,
                       text=str(r))
        except AutoShardingError as e:
            row.update(error=str(e), smallest_feasible=e.smallest_feasible)
        out["runs"][name] = row
    par.compiled_peak_bytes = real
    return out


if __name__ == "__main__":
    jobs = {"calibrate": calibrate_job, "meshes": meshes_job, "memory_loop": memory_loop_job}
    for name in sys.argv[1:]:
        print(json.dumps(jobs[name]()), flush=True)
