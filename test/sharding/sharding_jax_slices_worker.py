"""Run in a subprocess (JAX needs 8 CPU devices set before it starts): read cases as JSON on
stdin, print, per case, JAX's NamedSharding device -> index map as JSON."""
import json
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402

devices = jax.devices()
out = []
for case in json.load(sys.stdin):
    grid = np.array([devices[i] for i in case["device_ids"]], dtype=object).reshape(case["mesh_shape"])
    mesh = Mesh(grid, tuple(case["axis_names"]))
    spec = PartitionSpec(*[tuple(d) if d else None for d in case["dims"]])
    index = NamedSharding(mesh, spec).devices_indices_map(tuple(case["shape"]))
    out.append({str(d.id): [[s.start or 0, n if s.stop is None else s.stop] for s, n in zip(idx, case["shape"])]
                for d, idx in index.items()})
print(json.dumps(out))
