"""Hypothesis property checks of slices, dynamic slices, pads, gathers and scatter-adds of randomly
split arrays on 2x2 and 2x2x2 meshes of 8 virtual CPU devices: each random program is imported,
its shardings propagated (or completed), partitioned by spmdkit.partition and run with to_jax;
every result must equal the one-device result. Prints one JSON line per op family with the number
of examples run; a counterexample makes hypothesis raise (and this process exit non-zero) with the
shrunk program.

Arguments: op families (default all) and `--examples N` per family. Started by
test_partition_slices.py in a fresh process (XLA_FLAGS must be set before JAX starts).
"""
import json
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

from spmdkit import propagate  # noqa: E402
from spmdkit.ir import import_jax  # noqa: E402
from spmdkit.partition import complete_forward, partition, to_jax  # noqa: E402
from spmdkit.partition.split_gather import LOCAL_KERNEL  # noqa: E402
from spmdkit.reshard import DEFAULT_COST_MODEL, CostModel  # noqa: E402
from spmdkit.reshard.cost import INTER_NODE, INTRA_NODE, AxisLink  # noqa: E402
from spmdkit.sharding import Mesh  # noqa: E402

# bytes only (no latency term): makes the partitioner take split lookups even of tiny tables
BANDWIDTH_ONLY = CostModel(intra=AxisLink(0.0, INTRA_NODE.gbytes_per_s), inter=AxisLink(0.0, INTER_NODE.gbytes_per_s))
COSTS = {"default": DEFAULT_COST_MODEL, "bandwidth": BANDWIDTH_ONLY}

MESHES = {"2x2": ((2, 2), ("a", "b")), "2x2x2": ((2, 2, 2), ("a", "b", "c"))}
_JAX_MESHES: dict = {}
# per family: examples run, and those whose op ran on a split operand (local bounds, not gathered)
STATS: dict = {}
PRIMITIVES = {"slices": {"jax.slice"}, "dynamic_slices": {"jax.dynamic_slice", "jax.dynamic_update_slice"},
              "pads": {"jax.pad"}, "gathers": {"jax.gather", "jax.scatter-add"}, "lookups": {"jax.gather"}}


def jax_mesh(key):
    if key not in _JAX_MESHES:
        shape, names = MESHES[key]
        _JAX_MESHES[key] = jax.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(shape))
    return _JAX_MESHES[key]


@st.composite
def split_of(draw, shape, names):
    """A PartitionSpec of `shape`: each mesh axis splits one dim (or none), dims divisible."""
    dims: list[list[str]] = [[] for _ in shape]
    for a in draw(st.permutations(names)):
        d = draw(st.integers(-1, len(shape) - 1))
        if d >= 0 and shape[d] % (2 ** (len(dims[d]) + 1)) == 0:
            dims[d].append(a)
    return P(*[tuple(x) if len(x) > 1 else (x[0] if x else None) for x in dims])


@st.composite
def array_case(draw, min_rank=1, max_rank=3):
    key = draw(st.sampled_from(sorted(MESHES)))
    rank = draw(st.integers(min_rank, max_rank))
    shape = tuple(draw(st.sampled_from([2, 4, 8])) for _ in range(rank))
    return key, shape, draw(split_of(shape, MESHES[key][1]))


def run_case(family, fn, args, specs, key, out_spec, strategy, cost="default") -> None:
    """Partition fn over mesh `key` with the arguments split as `specs`; compare to one device."""
    mesh = jax_mesh(key)
    shape, names = MESHES[key]
    arg_shardings = [NamedSharding(mesh, s) for s in specs]
    program = import_jax(fn, *args, inline_calls=True,
                         meshes={"mesh": Mesh(list(zip(names, shape)))},
                         arg_shardings=arg_shardings)
    n_out = len(program.main.body.terminator.operands)
    if out_spec is not None and n_out == 1:
        from spmdkit.ir.jax_import import spec_to_sharding
        program.main.result_shardings = [spec_to_sharding("mesh", program.meshes["mesh"], out_spec,
                                                          program.main.body.terminator.operands[0].type.rank)]
    if strategy == "propagate":
        propagate(program)
    complete_forward(program)
    parted = partition(program, cost=COSTS[cost])
    stats = STATS.setdefault(family, {"examples": 0, "ran_split": 0, "split_lookups": 0})
    stats["examples"] += 1
    stats["split_lookups"] += any(LOCAL_KERNEL in getattr(step, "attrs", {}) for step in parted.steps)
    stats["ran_split"] += any(getattr(step, "op", None) is not None and step.op.name in PRIMITIVES[family]
                              and any(any(layout.dims) for layout in step.operand_layouts[:1])
                              for step in parted.steps)
    got = to_jax(parted, mesh)(*[jax.device_put(a, s) for a, s in zip(args, arg_shardings)])
    want = jax.jit(fn)(*args)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


def _values(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


COMMON = st.tuples(st.sampled_from(["propagate", "complete"]), st.booleans())


def _out(draw_out, key, shape, data):
    """The result's declared split (kept split half the time), or None (replicated)."""
    return data.draw(split_of(shape, MESHES[key][1])) if draw_out else None


# -- op families ---------------------------------------------------------------------------------
@given(array_case(), COMMON, st.data())
def slices(case, common, data):
    key, shape, spec = case
    bounds = []
    for n in shape:
        if data.draw(st.booleans()):   # the whole dim: it may stay split
            bounds.append((0, n, 1))
            continue
        start = data.draw(st.integers(0, n - 1))
        limit = data.draw(st.integers(start + 1, n))
        bounds.append((start, limit, data.draw(st.integers(1, 3))))
    x = _values(shape)

    def fn(x):
        return jax.lax.slice(x, [b[0] for b in bounds], [b[1] for b in bounds], [b[2] for b in bounds]) * 2.0
    out_shape = jax.eval_shape(fn, x).shape
    run_case("slices", fn, [x], [spec], key, _out(common[1], key, out_shape, data), common[0])


@given(array_case(), COMMON, st.data())
def dynamic_slices(case, common, data):
    key, shape, spec = case
    sizes = [data.draw(st.sampled_from([n, max(1, n // 2), 1])) for n in shape]
    starts = [np.int32(data.draw(st.integers(-1, n))) for n in shape]   # out of range: clamped
    x = _values(shape)
    update = data.draw(st.booleans())

    if update:
        u = _values(sizes, seed=1)

        def fn(x, u, *s):
            return jax.lax.dynamic_update_slice(x, u * 3.0, s)
        args, specs = [x, u, *starts], [spec, data.draw(split_of(tuple(sizes), MESHES[key][1]))] + [P()] * len(shape)
    else:
        def fn(x, *s):
            return jax.lax.dynamic_slice(x, s, sizes) + 1.0
        args, specs = [x, *starts], [spec] + [P()] * len(shape)
    out_shape = jax.eval_shape(fn, *args).shape
    run_case("dynamic_slices", fn, args, specs, key, _out(common[1], key, out_shape, data), common[0])


@given(array_case(), COMMON, st.data())
def pads(case, common, data):
    key, shape, spec = case
    config = [(0, 0, 0) if data.draw(st.booleans()) else   # unpadded: it may stay split
              (data.draw(st.integers(-1, 2)), data.draw(st.integers(-1, 2)), data.draw(st.integers(0, 1)))
              for _ in shape]
    x = _values(shape)

    def fn(x):
        return jax.lax.pad(x, np.float32(0.5), config)
    out_shape = jax.eval_shape(fn, x).shape
    out = _out(common[1] and all(n % 8 == 0 for n in out_shape), key, out_shape, data)
    run_case("pads", fn, [x], [spec], key, out, common[0])


@given(array_case(min_rank=2), COMMON, st.data())
def gathers(case, common, data):
    """jnp.take along an axis (a gather whose indexed dim may be split: a split lookup; its
    default mode fills out-of-bounds rows, and some indices are out of bounds) and x.at[idx].add
    (a scatter-add), indices split at random, each with the default or a bandwidth-only cost model."""
    key, shape, spec = case
    axis = data.draw(st.integers(0, len(shape) - 1))
    idx_shape = (data.draw(st.sampled_from([2, 4])), data.draw(st.sampled_from([2, 4])))
    idx = np.random.default_rng(2).integers(-1, shape[axis] + 1, idx_shape).astype(np.int32)
    idx_spec = data.draw(split_of(idx_shape, MESHES[key][1]))
    x = _values(shape)
    if data.draw(st.booleans()):
        def fn(x, i):
            return jnp.take(x, i, axis=axis) * 2.0
        args, specs = [x, idx], [spec, idx_spec]
    else:
        upd_shape = idx_shape + shape[1:]
        upd = _values(upd_shape, seed=3)

        def fn(x, i, u):
            return x.at[i].add(u)
        args, specs = [x, idx, upd], [spec, idx_spec, data.draw(split_of(upd_shape, MESHES[key][1]))]
    run_case("gathers", fn, args, specs, key, None, common[0], data.draw(st.sampled_from(sorted(COSTS))))


@given(array_case(min_rank=2), st.sampled_from(["propagate", "complete"]), st.data())
def lookups(case, strategy, data):
    """x.at[..., i].get(mode=...) from a table split along the axis it looks up (the axis gets a mesh axis if the
    drawn split left it whole), every index mode, out-of-bounds indices where the mode defines
    them; bandwidth-only costs, so the split lookup (a partial sum) is taken where the rule allows."""
    key, shape, spec = case
    axis = data.draw(st.integers(0, len(shape) - 1))
    parts = list(spec) + [None] * (len(shape) - len(spec))
    used = {a for p in parts if p for a in ((p,) if isinstance(p, str) else p)}
    free = [a for a in MESHES[key][1] if a not in used]
    if parts[axis] is None and free:
        parts[axis] = free[0]
    mode = data.draw(st.sampled_from(["fill", "clip", "promise_in_bounds"]))
    low, high = (0, shape[axis]) if mode == "promise_in_bounds" else (-2, shape[axis] + 2)
    idx_shape = (data.draw(st.sampled_from([1, 2])), data.draw(st.sampled_from([1, 2])))   # fewer rows than the table
    idx = np.random.default_rng(data.draw(st.integers(0, 9))).integers(low, high, idx_shape).astype(np.int32)
    x = _values(shape)

    def fn(x, i):
        return x.at[(slice(None),) * axis + (i,)].get(mode=mode) * 2.0
    run_case("lookups", fn, [x, idx], [P(*parts), data.draw(split_of(idx_shape, MESHES[key][1]))], key, None,
             strategy, "bandwidth")


def fixed_lookups():
    """Split lookups that must be taken, out-of-bounds indices in every mode that defines them."""
    table = _values((8, 4))
    for key, spec in (("2x2", P("a", None)), ("2x2x2", P(("a", "b"), "c"))):
        for mode, idx in (("fill", [[9], [3]]), ("fill", [[-9], [8]]), ("clip", [[11], [-3]]),
                          ("promise_in_bounds", [[7], [0]])):
            before = STATS.get("lookups", {}).get("split_lookups", 0)

            def fn(x, i, mode=mode):
                return x.at[i].get(mode=mode) * 2.0
            run_case("lookups", fn, [table, np.asarray(idx, np.int32)], [spec, P()], key, None, "propagate",
                     "bandwidth")
            assert STATS["lookups"]["split_lookups"] == before + 1, (key, spec, mode, "no split lookup")


FAMILIES = {"slices": slices, "dynamic_slices": dynamic_slices, "pads": pads, "gathers": gathers, "lookups": lookups}

if __name__ == "__main__":
    argv = sys.argv[1:]
    examples = 10
    if "--examples" in argv:
        i = argv.index("--examples")
        examples = int(argv[i + 1])
        del argv[i:i + 2]
    for name in argv or list(FAMILIES):
        # derandomized: the same draws every run, so "enough ran split" is no matter of luck
        test = settings(max_examples=examples, deadline=None, database=None, print_blob=True, derandomize=True,
                        suppress_health_check=list(HealthCheck))(FAMILIES[name])
        if name == "lookups":
            fixed_lookups()
        test()
        print(json.dumps({"family": name, **STATS.get(name, {})}), flush=True)
