"""Runs parallelized steps inside JAX's transformations (jit, grad, vmap, scan, a user's jitted
optax loop) on 8 virtual CPU devices and compares each with the same transformation of the plain
function; one JSON line per case. Started by test_dist_transforms.py in a fresh process."""
import json
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from spmdkit.distributed import ProcessMesh, Replicate, Shard, parallelize  # noqa: E402

MESH = ProcessMesh([[0, 1, 2, 3], [4, 5, 6, 7]], dim_names=["dp", "mp"])
R = Replicate()
_K = jax.random.split(jax.random.PRNGKey(0), 4)
PARAMS = {"w": jax.random.normal(_K[0], (16, 32)) * 0.3, "v": jax.random.normal(_K[1], (32, 16)) * 0.3}
X = jax.random.normal(_K[2], (8, 16))

# forward functions whose derivatives JAX's own transposition of our program gets wrong or cannot
# take (cumsum / gather / concat / reshape over split dims; pmax from a softmax's max)
FORWARDS = {
    "mlp": lambda p, x: jnp.tanh(x @ p["w"]) @ p["v"],
    "softmax": lambda p, x: jax.nn.softmax((x - x.mean(1, keepdims=True)) @ p["w"], axis=-1) @ p["v"],
    "reshape": lambda p, x: (x @ p["w"]).reshape(8, 4, 8).transpose(1, 0, 2).reshape(4, 64).sum(0),
    "multi": lambda p, x: (x @ p["w"], {"s": (x @ p["w"] @ p["v"]).sum(1)}),
    "cumsum": lambda p, x: jnp.cumsum(x @ p["w"], axis=1),
    "gather": lambda p, x: jnp.take(p["w"], jnp.argmax(x, 1), axis=0) * x.sum(),
    "concat": lambda p, x: jnp.concatenate([x @ p["w"], p["v"].T[:8]], axis=1),
}
PLACEMENTS = [({"w": [R, Shard(1)], "v": [R, Shard(0)]}, [Shard(0), R]),
              ({"w": [Shard(0), Shard(1)], "v": [Shard(1), Shard(0)]}, [Shard(0), Shard(1)]),
              ({"w": [Shard(1), R], "v": [R, R]}, [R, Shard(1)])]


def _rel(a, b) -> float:
    """Largest difference over the leaves, relative to each leaf's scale."""
    out = 0.0
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        out = max(out, float(np.max(np.abs(x - y), initial=0.0) / (1 + np.max(np.abs(x), initial=0.0))))
    return out


def _loss(f):
    return lambda p, x: sum(jnp.sum(jnp.sin(leaf)) for leaf in jax.tree_util.tree_leaves(f(p, x)))


def derivatives_case(name):
    """grad, jit(grad), vmap and vmap(grad) of a parallelized forward against the plain one, per
    placement; and the backward's own program (a partitioned VJP, primals laid out as the forward
    takes them)."""
    f = FORWARDS[name]
    rows = []
    for params_pl, x_pl in PLACEMENTS:
        par = parallelize(f, MESH, (params_pl, x_pl))
        lf, lp = _loss(f), _loss(par)
        xs = jnp.stack([X, -0.5 * X])
        diffs = {
            "grad": _rel(jax.grad(lf)(PARAMS, X), jax.grad(lp)(PARAMS, X)),
            "jit_grad": _rel(jax.jit(jax.grad(lf))(PARAMS, X), jax.jit(jax.grad(lp))(PARAMS, X)),
            "jit": _rel(jax.jit(f)(PARAMS, X), jax.jit(par)(PARAMS, X)),
            "vmap": _rel(jax.vmap(f, (None, 0))(PARAMS, xs), jax.vmap(par, (None, 0))(PARAMS, xs)),
            "vmap_grad": _rel(jax.vmap(jax.grad(lf), (None, 0))(PARAMS, xs), jax.vmap(jax.grad(lp), (None, 0))(PARAMS, xs)),
        }
        back = par.backward
        rows.append({"x": str(x_pl), "diffs": diffs, "backward": back is not None and back.partitioned is not None,
                     "backward_primals": None if back is None else
                     [str(pl) for pl in list(back.in_shardings.values())[:3]],
                     "forward_primals": [str(pl) for pl in par.in_shardings.values()]})
    return {"case": f"derivatives_{name}", "rows": rows}


def second_order_case():
    f = lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 3)  # noqa: E731
    par = parallelize(f, MESH, ([R, Shard(1)], [Shard(0), R]))

    def gg(g):
        return jax.grad(lambda w: jnp.sum(jax.grad(g)(w, X) ** 2))(PARAMS["w"])
    return {"case": "second_order", "diff": _rel(gg(f), gg(par))}


def integers_and_keys_case():
    """int tokens in, an argmax out, a typed PRNG key: their cotangents are float0 zeros."""
    emb, tok = jax.random.normal(_K[3], (5, 16)), jnp.arange(8) % 5
    f = lambda e, w, t, key: (jnp.tanh(e[t] @ w) * jax.random.bernoulli(key, 0.7, (8, 32)),  # noqa: E731
                              jnp.argmax(e[t] @ w, 1))
    par = parallelize(f, MESH, ([R, R], [R, Shard(1)], [Shard(0), R], None))
    loss = lambda g: lambda e, w: jnp.sum(g(e, w, tok, jax.random.key(3))[0] ** 2)  # noqa: E731
    grads = jax.grad(loss(par), (0, 1))(emb, PARAMS["w"])
    return {"case": "integers_and_keys", "diff": _rel(jax.grad(loss(f), (0, 1))(emb, PARAMS["w"]), grads)}


def optax_loop_case():
    """A user's own jitted AdamW loop around a parallelized model: the losses and params of 4
    steps equal the plain model's."""
    import optax

    def model(p, x):
        return jnp.tanh(x @ p["w"]) @ p["v"]
    par = parallelize(model, MESH, ({"w": [R, Shard(1)], "v": [R, Shard(0)]}, [Shard(0), R]))
    opt = optax.adamw(1e-2)

    def train(m):
        @jax.jit
        def step(p, s, x):
            loss, g = jax.value_and_grad(lambda p: jnp.mean((m(p, x) - 1.0) ** 2))(p)
            u, s = opt.update(g, s, p)
            return optax.apply_updates(p, u), s, loss
        p, s, losses = PARAMS, opt.init(PARAMS), []
        for _ in range(4):
            p, s, loss = step(p, s, X)
            losses.append(float(loss))
        return p, losses
    (pw, lw), (pg, lg) = train(model), train(par)
    return {"case": "optax_loop", "diff": _rel((pw, lw), (pg, lg)), "losses": lg, "want": lw}


def scan_case():
    """One parallelized layer applied by lax.scan over stacked weights, differentiated."""
    layer = parallelize(lambda w, h: jnp.tanh(h @ w), MESH, ([R, R], [Shard(0), Shard(1)]))
    ws = jax.random.normal(_K[3], (3, 16, 16)) * 0.3

    def grads(lay):
        return jax.grad(lambda ws: jnp.sum(jax.lax.scan(lambda h, w: (lay(w, h), None), X, ws)[0] ** 2))(ws)
    return {"case": "scan", "diff": _rel(grads(lambda w, h: jnp.tanh(h @ w)), grads(layer))}


def refusals_case():
    """Forward mode: JAX refuses it for custom_vjp functions, with its own clear TypeError."""
    par = parallelize(lambda w, x: jnp.tanh(x @ w), MESH, ([R, Shard(1)], [Shard(0), R]))
    try:
        jax.jvp(lambda w: par(w, X), (PARAMS["w"],), (PARAMS["w"],))
        return {"case": "refusals", "jvp": None}
    except Exception as e:  # noqa: BLE001
        return {"case": "refusals", "jvp": type(e).__name__}


def explicit_context_case():
    """Inside jit and grad under an explicit-axes jax.set_mesh, as explicit-sharding code runs:
    the program runs over the context's mesh and its results are typed by it."""
    from jax.sharding import AxisType
    from jax.sharding import PartitionSpec as P
    f = lambda w, x: jnp.tanh(x @ w)  # noqa: E731
    par = parallelize(f, MESH, ([R, Shard(1)], [Shard(0), R]))
    em = jax.make_mesh((2, 4), ("dp", "mp"), axis_types=(AxisType.Explicit,) * 2)
    with jax.set_mesh(em):
        w, x = jax.device_put(PARAMS["w"], P(None, "mp")), jax.device_put(X, P("dp", None))
        loss = lambda g: lambda w: jnp.sum(jnp.sin(g(w, x)))  # noqa: E731
        grads = jax.jit(jax.grad(loss(par)))(w)
        return {"case": "explicit_context", "jit": _rel(jax.jit(loss(f))(w), jax.jit(loss(par))(w)),
                "grad": _rel(jax.jit(jax.grad(loss(f)))(w), grads), "grad_mesh_is_context": grads.sharding.mesh == em,
                "outside_jit": _rel(f(w, x), par(w, x))}


CASES = {**{f"derivatives_{n}": (lambda n=n: derivatives_case(n)) for n in FORWARDS},
         "second_order": second_order_case, "integers_and_keys": integers_and_keys_case,
         "optax_loop": optax_loop_case, "scan": scan_case, "refusals": refusals_case,
         "explicit_context": explicit_context_case}

if __name__ == "__main__":
    for name in sys.argv[1:]:
        try:
            print(json.dumps(CASES[name]()), flush=True)
        except Exception as e:  # report the case's failure as its row, keep going
            print(json.dumps({"case": name, "error": f"{type(e).__name__}: {e}"[:3000]}), flush=True)
