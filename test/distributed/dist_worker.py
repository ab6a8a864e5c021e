"""Runs spmdkit.distributed on 8 virtual CPU devices and prints one JSON line per case; started by
test_dist_examples.py in a fresh process (XLA_FLAGS must be set before JAX starts, and other
test modules of the pytest process import JAX first).

Cases: "MODEL-MESH-OPTIMIZER-STRATEGY" (an example trained 5 steps, spmdkit.examples.train.run),
or "api" (shard_tensor, reshard, shard_map with a Partial result, placements_of, visualize)."""
import json
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import numpy as np  # noqa: E402

from spmdkit.distributed import (Partial, ProcessMesh, Replicate, Shard, parallelize, placements_of, reshard,  # noqa: E402
                          reshard_plan, shard_map, shard_tensor, visualize)


def api_case() -> dict:
    mesh = ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
    x = np.arange(8 * 6, dtype=np.float32).reshape(8, 6)
    xs = shard_tensor(x, mesh, [Shard(0), Replicate()])
    moved = reshard(xs, mesh, [Replicate(), Shard(1)])
    plan = reshard_plan(xs, mesh, [Replicate(), Shard(1)])
    line = ProcessMesh([3, 2, 1, 0], dim_names=["x"])  # another mesh: moved by JAX's device_put
    across = reshard(xs, line, [Shard(0)])
    # a partial result over dp is summed at the region's end: the column sums of x
    col_sums = shard_map(lambda a: a.sum(0, keepdims=True), mesh, ([Shard(0), Replicate()],),
                         [Partial(), Replicate()])(xs)
    # device (i, j) holds rows 4i..4i+3 after Shard(0) on dp; the local block's shape proves it
    local = shard_map(lambda a: a * 0 + jax.lax.axis_index("dp").astype(a.dtype), mesh,
                      ([Shard(0), Replicate()],), [Shard(0), Replicate()])(xs)
    # parallelize a one-result function; other shapes trace it again
    w = np.linspace(-1, 1, 6 * 4, dtype=np.float32).reshape(6, 4)
    layer = parallelize(lambda a, b: jax.numpy.tanh(a @ b), mesh, ([Shard(0), Replicate()], [Replicate(), Shard(1)]))
    layer_diffs = [float(np.abs(np.asarray(layer(x[:n], w)) - np.tanh(x[:n] @ w)).max()) for n in (8, 4)]
    return {"case": "api",
            "layer_diffs": layer_diffs, "layer_out": repr(layer.out_shardings),
            "shard_tensor_equal": bool(np.array_equal(np.asarray(xs), x)),
            "shard_tensor_local_shape": list(xs.addressable_shards[0].data.shape),
            "placements_of": repr(placements_of(moved, mesh)),
            "reshard_equal": bool(np.array_equal(np.asarray(moved), x)),
            "reshard_local_shape": list(moved.addressable_shards[0].data.shape),
            "reshard_kinds": [s.kind for s in plan.steps],
            "across_equal": bool(np.array_equal(np.asarray(across), x)),
            "across_placements": repr(placements_of(across, line)),
            "across_device_order": [int(d.id) for d in across.sharding.mesh.devices.flat],
            "col_sums_diff": float(np.abs(np.asarray(col_sums) - x.sum(0, keepdims=True)).max()),
            "row_owner": np.asarray(local)[:, 0].tolist(),
            "picture": visualize(moved, name="x")}


def example_case(case: str) -> dict:
    from spmdkit.examples.train import run
    model, mesh_key, optimizer, strategy = case.split("-")
    row = run(model, mesh_key, 5, optimizer, strategy)
    row["case"] = case
    return row


if __name__ == "__main__":
    for case in sys.argv[1:]:
        print(json.dumps(api_case() if case == "api" else example_case(case)), flush=True)
