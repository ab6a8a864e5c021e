"""Runs parallelize on steps whose parameters sit in lists, namedtuples, dataclasses, flax (nnx and
linen), equinox modules and optax optimizer states, with placements written as pytree prefixes,
on a 2x2 mesh of 8 virtual CPU devices; prints one JSON line per case with the largest
difference from one device (every output leaf: new params, optimizer state, loss, gradients)
over a few steps. Started by test_dist_pytrees.py in a fresh process."""
import dataclasses
import json
import os
import sys
from typing import NamedTuple

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from spmdkit.distributed import ProcessMesh, Replicate, Shard, parallelize  # noqa: E402

MESH = ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
R = Replicate()
COL, ROW, BATCH = [R, Shard(1)], [R, Shard(0)], [Shard(0), R]
STEPS = 3


def _data_of(x):
    """A PRNG key array as its uint32 key data (compared bit for bit); other leaves as they are."""
    return jax.random.key_data(x) if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key) else x


def _max_diff(a, b) -> float:
    la, lb = [_data_of(x) for x in jax.tree_util.tree_leaves(a)], [_data_of(x) for x in jax.tree_util.tree_leaves(b)]
    assert len(la) == len(lb)
    return max(float(np.max(np.abs(np.asarray(x, np.float64) - np.asarray(y, np.float64)), initial=0.0))
               for x, y in zip(la, lb))


def run(step, args, placements, carry, steps=STEPS) -> dict:
    """`steps` steps of ours and of jax.jit(step) on one device, each fed its own outputs."""
    ours, ref = parallelize(step, MESH, placements), jax.jit(step)
    a, b, diffs, losses = args, args, [], []
    for _ in range(steps):
        out, want = ours(*a), ref(*b)
        diffs.append(_max_diff(out, want))
        losses.append(float(want[-2]))
        a, b = carry(a, out), carry(b, want)
    return {"diffs": diffs, "losses": losses, "leaves": len(jax.tree_util.tree_leaves(args)),
            "moved": ours.moved_args(*a), "shardings": {k: repr(v) for k, v in ours.in_shardings.items()}}


def _data(key, n=8, d_in=8, d_out=4):
    kx, ky = jax.random.split(jax.random.PRNGKey(key))
    return jax.random.normal(kx, (n, d_in)), jax.random.normal(ky, (n, d_out))


def _sgd(loss):
    def step(params, *batch):
        value, grads = jax.value_and_grad(loss)(params, *batch)
        return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), value, grads
    return step


class Batch(NamedTuple):
    x: jax.Array
    y: jax.Array


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Head:
    w: jax.Array
    b: jax.Array


def lists_case() -> dict:
    """{"layers": [dict, dict, dict]} params, a dataclass head, a namedtuple batch."""
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    sizes = [8, 16, 16, 16]
    layers = [{"w": 0.3 * jax.random.normal(keys[i], (sizes[i], sizes[i + 1])), "b": jnp.zeros(sizes[i + 1])}
              for i in range(3)]
    params = {"layers": layers, "head": Head(0.3 * jax.random.normal(keys[3], (16, 4)), jnp.zeros(4))}

    def loss(p, batch):
        h = batch.x
        for layer in p["layers"]:
            h = jnp.tanh(h @ layer["w"] + layer["b"])
        return jnp.mean((h @ p["head"].w + p["head"].b - batch.y) ** 2)
    placements = ({"layers": [{"w": COL, "b": [R, Shard(0)]}, {"w": ROW}, {"w": COL, "b": None}],
                   "head": Head(w=ROW, b=None)},
                  Batch(x=BATCH, y=BATCH))
    row = run(_sgd(loss), (params, Batch(*_data(1))), placements, lambda a, o: (o[0], a[1]))
    return {"case": "lists", **row}


def optax_case() -> dict:
    import optax
    params = {"w1": 0.3 * jax.random.normal(jax.random.PRNGKey(2), (8, 16)), "b1": jnp.zeros(16),
              "w2": 0.3 * jax.random.normal(jax.random.PRNGKey(3), (16, 4))}
    opt = optax.adamw(1e-2)
    state = opt.init(params)

    def loss(p, x, y):
        return jnp.mean((jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] - y) ** 2)

    def step(p, s, x, y):
        value, grads = jax.value_and_grad(loss)(p, x, y)
        updates, s = opt.update(grads, s, p)
        return optax.apply_updates(p, updates), s, value, grads
    pp = {"w1": COL, "b1": [R, Shard(0)], "w2": ROW}
    # the moments split like their params, the step count replicated: a namedtuple prefix
    sp = tuple(s._replace(count=None, mu=pp, nu=pp) if isinstance(s, optax.ScaleByAdamState) else s for s in state)
    x, y = _data(4)
    row = run(step, (params, state, x, y), (pp, sp, BATCH, BATCH), lambda a, o: (o[0], o[1], a[2], a[3]))
    return {"case": "optax", **row}


def guarded_case() -> dict:
    """optax.apply_if_finite: the update is kept only when jnp.all(isfinite(grads)), a logical and
    over gradients that come split or partial (a partial `all`, reduced with a min all-reduce)."""
    import optax
    params = {"w1": 0.3 * jax.random.normal(jax.random.PRNGKey(5), (8, 16)), "w2": jnp.zeros((16, 4))}
    opt = optax.apply_if_finite(optax.adam(1e-2), max_consecutive_errors=3)
    state = opt.init(params)

    def step(p, s, x, y):
        value, grads = jax.value_and_grad(lambda p: jnp.mean((jnp.tanh(x @ p["w1"]) @ p["w2"] - y) ** 2))(p)
        updates, s = opt.update(grads, s, p)
        return optax.apply_updates(p, updates), s, value, grads
    x, y = _data(6)
    row = run(step, (params, state, x, y), ({"w1": COL, "w2": ROW}, None, BATCH, BATCH),
              lambda a, o: (o[0], o[1], a[2], a[3]))
    return {"case": "guarded", **row}


def nnx_case() -> dict:
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(8, 16, rngs=rngs)
            self.l2 = nnx.Linear(16, 4, rngs=rngs)

        def __call__(self, x):
            return self.l2(jnp.tanh(self.l1(x)))
    graphdef, state = nnx.split(MLP(nnx.Rngs(0)))

    def loss(s, x, y):
        return jnp.mean((nnx.merge(graphdef, s)(x) - y) ** 2)
    # a plain dict stands for nnx.State; left-out keys (l1.bias, l2.bias) are replicated
    pl = {"l1": {"kernel": COL}, "l2": {"kernel": ROW}}
    row = run(_sgd(loss), (state, *_data(5)), (pl, BATCH, BATCH), lambda a, o: (o[0], a[1], a[2]))
    return {"case": "flax_nnx", **row}


def linen_case() -> dict:
    from flax import linen as nn

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dense(4)(jnp.tanh(nn.Dense(16)(x)))
    model = MLP()
    x, y = _data(6)
    variables = model.init(jax.random.PRNGKey(0), x)

    def loss(v, x, y):
        return jnp.mean((model.apply(v, x) - y) ** 2)
    pl = {"params": {"Dense_0": {"kernel": COL, "bias": [R, Shard(0)]}, "Dense_1": {"kernel": ROW}}}
    row = run(_sgd(loss), (variables, x, y), (pl, BATCH, BATCH), lambda a, o: (o[0], a[1], a[2]))
    return {"case": "flax_linen", **row}


def equinox_case() -> dict:
    import equinox as eqx
    model = eqx.nn.MLP(8, 4, width_size=16, depth=2, activation=jnp.tanh, key=jax.random.PRNGKey(7))
    params, static = eqx.partition(model, eqx.is_array)

    def loss(p, x, y):
        return jnp.mean((jax.vmap(eqx.combine(p, static))(x) - y) ** 2)
    # an equinox module of placements: the same module with placement lists where the arrays are
    by_path = {".layers[0].weight": [R, Shard(0)], ".layers[1].weight": COL, ".layers[2].weight": COL}
    pl = jax.tree_util.tree_map_with_path(lambda path, _: by_path.get(jax.tree_util.keystr(path)), params)
    row = run(_sgd(loss), (params, *_data(8)), (pl, BATCH, BATCH), lambda a, o: (o[0], a[1], a[2]))
    return {"case": "equinox", **row}


def equinox_module_case() -> dict:
    """The whole equinox module passed as it is, its activation functions leaves among the arrays
    (not partitioned first): parallelize passes non-array leaves to the step as they are, as
    eqx.filter_jit does, and the updated module comes back with them."""
    import equinox as eqx
    model = eqx.nn.MLP(8, 4, width_size=16, depth=2, activation=jax.nn.gelu, key=jax.random.PRNGKey(7))

    def step(model, x, y):
        loss = lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2)  # noqa: E731
        value, grads = eqx.filter_value_and_grad(loss)(model)
        return eqx.apply_updates(model, jax.tree_util.tree_map(lambda g: -0.1 * g, grads)), value, grads
    by_path = {".layers[0].weight": [R, Shard(0)], ".layers[1].weight": COL, ".layers[2].weight": COL}
    pl = jax.tree_util.tree_map_with_path(lambda path, _: by_path.get(jax.tree_util.keystr(path)), model)
    ours, ref = parallelize(step, MESH, (pl, BATCH, BATCH)), eqx.filter_jit(step)
    x, y = _data(11)
    a = b = model
    diffs, losses, same_functions = [], [], []
    for _ in range(STEPS):
        out, want = ours(a, x, y), ref(b, x, y)
        arrays = lambda t: eqx.filter(t, eqx.is_array)  # noqa: E731
        diffs.append(_max_diff(arrays(out), arrays(want)))
        losses.append(float(want[1]))
        same_functions.append(out[0].activation is jax.nn.gelu and out[0].final_activation is model.final_activation)
        a, b = out[0], want[0]
    return {"case": "equinox_module", "diffs": diffs, "losses": losses, "same_functions": same_functions,
            "shardings": {k: repr(v) for k, v in ours.in_shardings.items()}}


def keys_case() -> dict:
    """Typed PRNG keys (jax.random.key) in and out: one key threaded through the steps (split each
    step, dropout from the subkey) and a key per example, split over the batch like the data."""
    params = {"w1": jax.random.normal(jax.random.PRNGKey(9), (8, 16)) * 0.3, "w2": jnp.zeros((16, 4))}

    def step(p, x, y, key, example_keys):
        key, sub = jax.random.split(key)

        def loss(p):
            h = jax.nn.relu(x @ p["w1"])
            h = jnp.where(jax.random.bernoulli(sub, 0.8, h.shape), h / 0.8, 0.0)
            noise = jax.vmap(lambda k: jax.random.normal(k, (4,)))(example_keys)
            return jnp.mean((h @ p["w2"] - y - 0.1 * noise) ** 2)
        value, grads = jax.value_and_grad(loss)(p)
        new = jax.tree_util.tree_map(lambda a, g: a - 0.1 * g, p, grads)
        return new, key, jax.vmap(lambda k: jax.random.fold_in(k, 1))(example_keys), value, grads
    args = (params, *_data(10), jax.random.key(3), jax.random.split(jax.random.key(4), 8))
    row = run(step, args, ({"w1": COL, "w2": ROW}, BATCH, BATCH, None, BATCH),
              lambda a, o: (o[0], a[1], a[2], o[1], o[2]))
    return {"case": "keys", **row}


CASES = {"lists": lists_case, "optax": optax_case, "flax_nnx": nnx_case, "flax_linen": linen_case,
         "equinox": equinox_case, "equinox_module": equinox_module_case, "keys": keys_case,
         "guarded": guarded_case}

if __name__ == "__main__":
    for name in sys.argv[1:]:
        try:
            print(json.dumps(CASES[name]()), flush=True)
        except Exception as e:  # report the case's failure as its row, keep going
            print(json.dumps({"case": name, "error": f"{type(e).__name__}: {e}"[:2000]}), flush=True)
