"""Runs reshard plans with real XLA collectives on 8 virtual CPU devices; prints one JSON line per
case. Arguments: N_RANDOM SEED [check_vma | cross | grad | logical]. Started by test_reshard_jax.py in a fresh process, because XLA_FLAGS must be set before JAX
starts (other test modules in the same pytest process also import JAX)."""
import json
import os
import random
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402

from spmdkit.reshard import AxisLink, CostModel, Layout, MeshSpec, parse_layout, plan_reshard  # noqa: E402
from spmdkit.reshard.execute_jax import axis_names_on, factor_mesh, partition_spec, reshard_function  # noqa: E402
from spmdkit.reshard.hlo_collectives import collective_bytes, count_collectives  # noqa: E402

# bandwidth only: the plan with the fewest bytes, to compare with XLA's byte count
BYTES_ONLY = CostModel.make(intra=AxisLink(0.0, 87.7), inter=AxisLink(0.0, 87.7))

REDUCE = {"sum": np.sum, "avg": np.mean, "max": np.max, "min": np.min,
          "all": np.bitwise_and.reduce, "any": np.bitwise_or.reduce}
LOGICAL = ("all", "any")  # run on booleans (jnp.all / jnp.any of split or partial flags)

MESHES = {"2x2": "x=2,y=2", "2x4": "x=2,y=4", "2x2x2": "x=2,y=2,z=2"}

FIXED = [  # (mesh, shape, source, target): one of each move, and the brief's examples
    ("2x4", (8, 16), '[{"x"}, {}]', '[{}, {"x", "y"}]'),
    ("2x4", (8, 16), '[{"x", "y"}, {}]', '[{"y", "x"}, {}]'),
    ("2x2", (4, 8), '[{"x"}, {"y"}]', '[{"y"}, {"x"}]'),
    ("2x4", (8, 16), '[{}, {}] partial={"x", "y"}:sum', '[{"x"}, {"y"}]'),
    ("2x4", (8, 16), '[{}, {}] partial={"x"}:max', '[{"y"}, {"x"}]'),
    ("2x2x2", (8, 8), '[{}, {"z"}] partial={"x", "y"}:min', '[{}, {}]'),
    ("2x2x2", (8, 8, 4), '[{}, {}, {}] partial={"y"}:avg', '[{"y"}, {"x"}, {"z"}]'),
    ("2x2x2", (8, 8), '[{"y"}, {}]', '[{}, {}] partial={"x", "z"}:sum'),
    ("2x2x2", (8, 8), '[{"x", "y", "z"}, {}]', '[{}, {"z", "y", "x"}]'),
    ("2x2", (4, 4), '[{"x"}, {}]', '[{"x"}, {}]'),
    ("2x4", (8, 8), '[{"y", "x"}, {}]', '[{"y"}, {}] partial={"x"}:sum'),   # a free zero-pad
    # one collective over two axes not in mesh order (JAX linearises the tuple as given)
    ("2x2x2", (8, 8), '[{}, {}] partial={"x", "y"}:sum', '[{"y", "x"}, {}]'),
    ("2x2x2", (8, 8), '[{"z", "x"}, {}]', '[{}, {}]'),
    ("2x2x2", (8, 8), '[{"z", "x"}, {}]', '[{}, {"z", "x"}]'),
    ("2x2x2", (8, 8), '[{}, {}] partial={"x", "y", "z"}:avg', '[{}, {"z", "x"}] partial={"y"}:avg'),
    # large enough (>= 1 MiB) that bandwidth, not latency, decides the default model's plan
    ("2x4", (512, 1024), '[{"x"}, {}]', '[{}, {"x", "y"}]'),
    ("2x2x2", (512, 512), '[{"x", "y", "z"}, {}]', '[{}, {"z", "y", "x"}]'),
    ("2x4", (256, 1024), '[{"x"}, {"y"}]', '[{"y"}, {"x"}]'),
]


def random_layout(rng, mesh, rank, reduce):
    dims, partial = [[] for _ in range(rank)], []
    names = list(mesh.names)
    rng.shuffle(names)
    for a in names:
        c = rng.randint(-2, rank - 1)
        (partial if c == -2 else dims[c] if c >= 0 else []).append(a)
    return Layout.make(mesh, dims, partial, reduce)


def cases(n_random, seed, logical=False, empty=False):
    """The fixed cases, then `n_random` random ones; `logical`: random ones only, partial over
    and (`all`) or or (`any`), run on booleans; `empty`: random ones only, one dim of size 0."""
    for key, shape, a, b in () if logical or empty else FIXED:
        mesh = MeshSpec.make(MESHES[key])
        yield key, shape, parse_layout(a, mesh), parse_layout(b, mesh)
    rng = random.Random(seed)
    for _ in range(n_random):
        key = rng.choice(sorted(MESHES))
        mesh = MeshSpec.make(MESHES[key])
        rank = rng.randint(1, 3)
        reduce = rng.choice(LOGICAL if logical else ["sum", "avg", "max", "min"])
        shape = tuple(8 * rng.randint(1, 2) for _ in range(rank))
        if empty:  # a value with no elements (jax's associative scans make such slices)
            zero = rng.randrange(rank)
            shape = shape[:zero] + (0,) + shape[zero + 1:]
        target_reduce = reduce if logical else rng.choice([reduce, "sum"])
        yield key, shape, random_layout(rng, mesh, rank, reduce), random_layout(rng, mesh, rank, target_reduce)


def check_values(plan, jmesh, y, contributions, names):
    """Every device's local result against its shard of the true value (reduced over the target's
    partial axes when it has them)."""
    src, tgt = plan.source, plan.target
    value = REDUCE[src.reduce](contributions, axis=0) if src.partial else contributions
    coords = {d.id: dict(zip(jmesh.axis_names, idx)) for idx, d in np.ndenumerate(jmesh.devices)}
    local = {s.device.id: np.asarray(s.data) for s in y.addressable_shards}
    for s in y.addressable_shards:
        want = value[s.index[1:]] if tgt.partial else value[s.index]
        if tgt.partial:
            c = coords[s.device.id]
            partial = {t for a in tgt.partial for t in names[a]}
            group = [d for d, cc in coords.items() if all(cc[a] == c[a] for a in jmesh.axis_names if a not in partial)]
            got = REDUCE[tgt.reduce](np.stack([local[d][0] for d in group]), axis=0)
        else:
            got = local[s.device.id]
        if got.shape != want.shape or not np.allclose(got, want, atol=1e-5):
            return False
    return True


def main():
    n_random, seed = int(sys.argv[1]), int(sys.argv[2])
    mode = sys.argv[3] if len(sys.argv) > 3 else ""
    check_vma = mode in ("check_vma", "grad", "empty")   # JAX also checks replication
    grad = mode == "grad"             # gradient of sum(w * reshard(x)) must be w (needs check_vma)
    cross = mode == "cross"           # whole-axis plans run on the mesh cut into prime factors
    auto = jax.sharding.AxisType.Auto
    jmeshes = {"2x2": jax.make_mesh((2, 2), ("x", "y"), axis_types=(auto,) * 2),
               "2x4": jax.make_mesh((2, 4), ("x", "y"), axis_types=(auto,) * 2),
               "2x2x2": jax.make_mesh((2, 2, 2), ("x", "y", "z"), axis_types=(auto,) * 3)}
    for key, shape, src, tgt in cases(n_random, seed, logical=mode == "logical", empty=mode == "empty"):
        jm = jmeshes[key]
        logical = src.reduce in LOGICAL or tgt.reduce in LOGICAL
        plan = plan_reshard(MeshSpec.make(MESHES[key]), shape, src, tgt, itemsize=1 if logical else 4,
                            sub_axes=False if cross else None)
        npart = int(np.prod([plan.mesh.size(a) for a in plan.source.partial]))
        rng = np.random.default_rng(len(plan.steps))
        size = ((npart,) if src.partial else ()) + shape
        data = rng.integers(0, 2, size=size).astype(bool) if logical else \
            rng.integers(-8, 9, size=size).astype(np.float32)
        # the plan may use sub-axes: the same devices, finer axes
        fm = factor_mesh(jm, plan_reshard(plan.user_mesh, shape, src, tgt, sub_axes=True) if cross else plan)
        names = axis_names_on(plan, fm)
        x = jax.device_put(data, NamedSharding(fm, partition_spec(plan.source, names)))
        f = reshard_function(plan, jm, check_vma=check_vma, run_on=fm)
        y = f(x)
        hlo = f.lower(x).compile().as_text()
        row = {"mesh": key, "shape": list(shape), "source": str(src), "target": str(tgt),
               "steps": [s.describe() for s in plan.steps], "planned": plan.collective_counts(),
               "compiled": count_collectives(hlo), "values_ok": check_values(plan, fm, y, data, names),
               "plan_bytes": plan.bytes, "compiled_bytes": collective_bytes(hlo), "xla_auto_bytes": None}
        if grad and not src.partial and not tgt.partial:  # the global map is the identity
            w = rng.normal(size=shape).astype(np.float32)
            g = jax.grad(lambda v: jax.numpy.sum(f(v) * w))(x)
            row["grad_ok"] = bool(np.allclose(np.asarray(g), w, atol=1e-5))
        if not src.partial and not tgt.partial and mode in ("", "logical"):  # XLA's own partitioner, same reshard
            auto = jax.jit(lambda v: v, out_shardings=NamedSharding(jm, partition_spec(tgt)))
            ahlo = auto.lower(jax.device_put(data, NamedSharding(jm, partition_spec(src)))).compile().as_text()
            row["xla_auto_bytes"] = collective_bytes(ahlo)
            row["xla_auto_counts"] = count_collectives(ahlo)
            row["bytes_only_plan_bytes"] = plan_reshard(plan.user_mesh, shape, src, tgt, 4, BYTES_ONLY).bytes
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
