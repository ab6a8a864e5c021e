"""device_slices agrees with JAX's NamedSharding on which block each device holds (8 CPU devices,
random meshes with permuted device ids, full axes, divisible shapes)."""
import json
import random
import subprocess
import sys
from pathlib import Path

from spmdkit.sharding import DimSharding, Mesh, TensorSharding, device_slices


def _random_case(rng: random.Random):
    shapes = [[8], [2, 4], [4, 2], [2, 2, 2], [2, 4, 1]]
    mesh_shape = rng.choice(shapes)
    names = ["x", "y", "z"][:len(mesh_shape)]
    ids = list(range(8))
    rng.shuffle(ids)
    rank = rng.randint(1, 3)
    dims = [[] for _ in range(rank)]
    for n in names:
        slot = rng.randint(-1, rank - 1)
        if slot >= 0:
            dims[slot].insert(rng.randint(0, len(dims[slot])), n)
    size = dict(zip(names, mesh_shape))
    shape = []
    for d in dims:
        count = 1
        for n in d:
            count *= size[n]
        shape.append(count * rng.randint(1, 3))
    return {"mesh_shape": mesh_shape, "axis_names": names, "device_ids": ids, "dims": dims, "shape": shape}


def test_device_slices_match_jax_named_sharding():
    rng = random.Random(8)
    cases = [_random_case(rng) for _ in range(40)]
    worker = Path(__file__).with_name("sharding_jax_slices_worker.py")
    done = subprocess.run([sys.executable, str(worker)], input=json.dumps(cases), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    for case, jax_map in zip(cases, json.loads(done.stdout)):
        mesh = Mesh(dict(zip(case["axis_names"], case["mesh_shape"])), case["device_ids"])
        sharding = TensorSharding(mesh, [DimSharding(d) for d in case["dims"]])
        ours = {str(dev): [[s.start, s.stop] for s in sl]
                for dev, sl in device_slices(sharding, case["shape"]).items()}
        assert ours == jax_map, (case, str(sharding))
