"""Checkpoint runs in a fresh process with virtual CPU devices (started by test_checkpoint*.py;
JAX fixes its device count at start). Prints JSON lines.

    resume MODEL DIR              8 devices: train 2 steps on 2x2 (Megatron dp x mp), save, 2 more
                                  steps (the uninterrupted run); load onto 2x4 with other placements
                                  (FSDP over mp, the batch over both dims), 2 steps there
    kill STAGE DIR                4 devices: save state A, then save state B paused at STAGE
                                  (SPMDKIT_CHECKPOINT_PAUSE) until the test kills this process
    two PID PORT MODEL DIR        one of two jax.distributed processes (4 devices each): `resume`
                                  across both, then train on until killed (the test kills one)
"""
import json
import os
import sys
import time
from pathlib import Path

LOCAL_DEVICES = {"resume": 8, "kill": 4, "two": 4}[sys.argv[1]]
os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + \
    f" --xla_force_host_platform_device_count={LOCAL_DEVICES}"

import jax  # noqa: E402
import numpy as np  # noqa: E402

from spmdkit.distributed import (ProcessMesh, Replicate, Shard, init, load_state_dict, parallelize,  # noqa: E402
                                 save_state_dict, shard_tensor)
from spmdkit.distributed.tensor import named_sharding  # noqa: E402

R = Replicate()


def emit(row: dict) -> None:
    print(json.dumps(row), flush=True)


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def host(x) -> np.ndarray:
    if isinstance(x, jax.Array) and not x.is_fully_addressable:
        from jax.experimental import multihost_utils
        return np.asarray(multihost_utils.process_allgather(x, tiled=True))
    return np.asarray(x)


def training(model: str, mesh, params_pl, batch_pl):
    """The example's AdamW step parallelized on `mesh`, its start state and batch."""
    from spmdkit.examples.optim import adamw, state_placements
    from spmdkit.examples.setups import SETUPS
    from spmdkit.examples.train import make_step
    setup = SETUPS[model]("2x2")
    init_state, update = adamw(0.01)
    state_pl = state_placements("adamw", params_pl)
    opt = init_state(setup.params)
    # traced on host values: tracing on arrays sharded over another mesh puts that mesh's
    # shardings into the jaxpr, which spmdkit's importer does not read yet
    example = jax.tree_util.tree_map(np.asarray, (setup.params, opt, *setup.batch))
    step = parallelize(make_step(setup.loss_fn, update), mesh, (params_pl, state_pl, batch_pl, batch_pl),
                       out_placements=(params_pl, state_pl, None, params_pl), example_args=example)
    return step, setup.params, opt, setup.batch


def megatron(model: str):
    from spmdkit.examples.setups import SETUPS
    setup = SETUPS[model]("2x2")
    return setup.param_placements, setup.batch_placements


def fsdp_over_mp(params: dict) -> dict:
    """Other placements on 2x4: every param's dim 0 split over mp (4 ways), whole over dp."""
    return {k: [R, Shard(0)] for k in params}


def like_on(mesh, params_pl: dict, state: dict) -> dict:
    """What load_state_dict is given: the params as arrays already on the new mesh (as a user
    who built the model there holds them), the optimizer state as shapes with shardings."""
    from spmdkit.examples.optim import state_placements
    params = {k: shard_tensor(np.zeros(v.shape, v.dtype), mesh, params_pl[k]) for k, v in state["params"].items()}
    opt_pl = state_placements("adamw", params_pl)

    def spec(x, pl):
        return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=named_sharding(mesh, pl or [R] * mesh.ndim, x.shape))
    opt = {"m": {k: spec(v, opt_pl["m"][k]) for k, v in state["opt"]["m"].items()},
           "v": {k: spec(v, opt_pl["v"][k]) for k, v in state["opt"]["v"].items()},
           "t": spec(state["opt"]["t"], None)}
    return {"params": params, "opt": opt}


def resume(model: str, folder: Path, mesh22, mesh24, with_values: bool = False) -> dict:
    pl22, batch22 = megatron(model)
    step22, params, opt, (inputs, targets) = training(model, mesh22, pl22, batch22)
    losses = []
    for i in range(4):
        params, opt, loss, _ = step22(params, opt, inputs, targets)
        losses.append(float(host(loss)))
        if i == 1:
            saved = {"params": params, "opt": opt}
            saved_host = jax.tree_util.tree_map(host, saved)
            t0 = time.perf_counter()
            save_state_dict(saved, folder)
            save_s = time.perf_counter() - t0
            # shards this process writes: the first replica of each shard its devices hold
            written_here = sum(s.replica_id == 0 for x in jax.tree_util.tree_leaves(saved)
                               for s in x.addressable_shards)

    pl24 = fsdp_over_mp(params)
    step24, *_ = training(model, mesh24, pl24, [Shard(0), Shard(0)])
    like = like_on(mesh24, pl24, saved_host)
    t0 = time.perf_counter()
    loaded = load_state_dict(folder, like)
    load_s = time.perf_counter() - t0
    leaves, like_leaves = jax.tree_util.tree_leaves(loaded), jax.tree_util.tree_leaves(like)
    layout_kept = all(x.sharding.is_equivalent_to(y.sharding, len(y.shape)) for x, y in zip(leaves, like_leaves))
    value_diff = max(float(np.max(np.abs(host(a) - b), initial=0.0))
                     for a, b in zip(leaves, jax.tree_util.tree_leaves(saved_host)))
    params, opt = loaded["params"], loaded["opt"]
    resumed = []
    for _ in range(2):
        params, opt, loss, _ = step24(params, opt, inputs, targets)
        resumed.append(float(host(loss)))
    row = {"uninterrupted": losses, "resumed": resumed, "shards_written_here": written_here,
           "loaded_layout_is_like": layout_kept, "loaded_value_diff": value_diff, "save_s": save_s, "load_s": load_s,
           "bytes": folder_bytes(folder), "files": sum(1 for p in folder.rglob("*") if p.is_file()),
           "state_bytes": sum(int(np.asarray(x).nbytes) for x in jax.tree_util.tree_leaves(saved_host)),
           "placements_2x2": {k: repr(v) for k, v in pl22.items() if k in ("h0.w_qkv", "w1")},
           "placements_2x4": {k: repr(v) for k, v in pl24.items() if k in ("h0.w_qkv", "w1")}}
    if with_values:   # what was saved, by key path (small models only)
        row["saved"] = {jax.tree_util.keystr(k): np.asarray(v).tolist()
                        for k, v in jax.tree_util.tree_flatten_with_path(saved_host)[0]}
    return row, (step24, params, opt, inputs, targets)


def kill_mid_save(stage: str, folder: Path) -> None:
    mesh = ProcessMesh(shape=(2, 2), dim_names=["dp", "mp"])

    def state(scale: float) -> dict:
        w = np.arange(64 * 32, dtype=np.float32).reshape(64, 32) * scale
        return {"w": shard_tensor(w, mesh, [Shard(0), Shard(1)]), "b": [np.full(5, scale, np.float32)],
                "step": np.int32(scale)}
    save_state_dict(state(1.0), folder)
    emit({"saved": 1})
    os.environ["SPMDKIT_CHECKPOINT_PAUSE"] = stage
    save_state_dict(state(2.0), folder)     # pauses; the test kills this process
    emit({"saved": 2})


def two_processes(pid: int, port: int, model: str, folder: Path) -> None:
    init(f"127.0.0.1:{port}", 2, pid, coordinator_bind_address=f"127.0.0.1:{port}")
    by_process = [[d for d in jax.devices() if d.process_index == p] for p in range(2)]
    ids22 = [[by_process[p][i].id for p in range(2)] for i in range(2)]   # mp across the processes
    ids24 = [[d.id for d in by_process[p]] for p in range(2)]
    mesh22, mesh24 = ProcessMesh(ids22, ["dp", "mp"]), ProcessMesh(ids24, ["dp", "mp"])
    row, (step24, params, opt, inputs, targets) = resume(model, folder, mesh22, mesh24, with_values=pid == 0)
    row.update(process=pid, processes=jax.process_count(), devices=len(jax.devices()),
               local_devices=jax.local_device_count())
    emit(row)
    # train on until the test kills the other process: this one must then exit, not hang
    for i in range(100000):
        params, opt, loss, _ = step24(params, opt, inputs, targets)
        emit({"process": pid, "step": i, "loss": float(host(loss))})


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "resume":
        mesh22 = ProcessMesh(shape=(2, 2), dim_names=["dp", "mp"])
        mesh24 = ProcessMesh(shape=(2, 4), dim_names=["dp", "mp"])
        emit(resume(sys.argv[2], Path(sys.argv[3]), mesh22, mesh24)[0])
    elif mode == "kill":
        kill_mid_save(sys.argv[2], Path(sys.argv[3]))
    else:
        two_processes(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], Path(sys.argv[5]))
