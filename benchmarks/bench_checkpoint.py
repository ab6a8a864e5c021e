"""Checkpoint sizes and times: a GPT training state (params and AdamW's m and v, float32) laid out
Megatron-style on a 2x2 dp x mp mesh, saved with spmdkit.distributed.save_state_dict and loaded
onto a 2x4 mesh with other placements (every param's dim 0 over mp) by load_state_dict.
Prints sizes, the first save (imports, thread pools) apart, then medians of the rest.

    python benchmarks/bench_checkpoint.py [--repeat 5] [--folder /tmp/x]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import numpy as np  # noqa: E402

from spmdkit.distributed import (ProcessMesh, Replicate, Shard, load_state_dict, save_state_dict,  # noqa: E402
                                 shard_tensor)
from spmdkit.distributed.tensor import named_sharding  # noqa: E402
from spmdkit.models import gpt  # noqa: E402

R = Replicate()
CONFIGS = {"example": gpt.GPTConfig(),
           "larger": gpt.GPTConfig(vocab=4096, seq=128, d_model=512, n_heads=8, d_ff=2048, n_layers=4)}


def megatron(name: str) -> list:
    if name.endswith(("w_qkv", "w_fc")):
        return [R, Shard(1)]
    if name.endswith(("w_o", "w_proj", "b_qkv", "b_fc")):
        return [R, Shard(0)]
    return [R, R]


def state_on(mesh, params: dict, placements) -> dict:
    laid = {k: shard_tensor(np.asarray(v), mesh, placements(k)) for k, v in params.items()}
    return {"params": laid, "opt": {"m": laid, "v": laid, "t": np.float32(2)}}


def like_on(mesh, params: dict, placements) -> dict:
    def spec(k, v):
        return jax.ShapeDtypeStruct(v.shape, v.dtype, sharding=named_sharding(mesh, placements(k), v.shape))
    laid = {k: spec(k, v) for k, v in params.items()}
    return {"params": laid, "opt": {"m": laid, "v": laid, "t": np.float32(0)}}


def timed(fn) -> float:
    t = time.perf_counter()
    jax.block_until_ready(fn())
    return time.perf_counter() - t


def bench(name: str, cfg, folder: Path, repeat: int) -> None:
    params = gpt.init_params(jax.random.PRNGKey(0), cfg)
    mesh22 = ProcessMesh(shape=(2, 2), dim_names=["dp", "mp"])
    mesh24 = ProcessMesh(shape=(2, 4), dim_names=["dp", "mp"])
    state = state_on(mesh22, params, megatron)
    like = like_on(mesh24, params, lambda k: [R, Shard(0)])
    shutil.rmtree(folder, ignore_errors=True)
    saves = [timed(lambda: save_state_dict(state, folder)) for _ in range(repeat + 1)]
    loads = [timed(lambda: load_state_dict(folder, like)) for _ in range(repeat + 1)]
    loaded = load_state_dict(folder, like)
    same = all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in
               zip(jax.tree_util.tree_leaves(loaded), jax.tree_util.tree_leaves(state)))
    state_bytes = sum(np.asarray(x).nbytes for x in jax.tree_util.tree_leaves(state))
    files = [p for p in folder.rglob("*") if p.is_file()]
    on_disk = sum(p.stat().st_size for p in files)
    print(f"{name}: {len(params)} params, state {state_bytes / 1e6:.3f} MB (params, m, v), checkpoint "
          f"{on_disk / 1e6:.3f} MB in {len(files)} files; save on 2x2: first {saves[0]:.2f} s, then median "
          f"{statistics.median(saves[1:]):.3f} s; load onto 2x4 (other placements): first {loads[0]:.2f} s, then "
          f"median {statistics.median(loads[1:]):.3f} s; loaded == saved: {same}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--folder", type=Path)
    p.add_argument("--configs", nargs="+", choices=sorted(CONFIGS), default=["example", "larger"])
    args = p.parse_args(argv)
    base = args.folder or Path(tempfile.mkdtemp(prefix="spmdkit-bench-ckpt-"))
    try:
        for name in args.configs:
            bench(name, CONFIGS[name], base / name, args.repeat)
    finally:
        if args.folder is None:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
