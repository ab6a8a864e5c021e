"""Random small programs with a while (fori_loop, scan, while_loop with a traced bound), a case
(cond, switch), or both nested (a scan whose body has a cond and a fori_loop) over randomly split 8x8 arrays, parallelized on a 2x2 mesh against jax.jit on one
device, each both propagated and searched (strategy="auto", the weight left free) (hypothesis;
run by control_flow_worker.py "random-N" in a process with 8 devices)."""
from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spmdkit.distributed import ProcessMesh, Replicate, Shard, parallelize

R = Replicate()
SPLITS = [[R, R], [Shard(0), R], [R, Shard(1)], [Shard(0), Shard(1)], [Shard(1), Shard(0)], [R, Shard(0)]]
OPS = ["tanh", "matmul", "rmatmul", "transpose", "add_x", "center", "scale"]
KINDS = ["fori", "scan", "while", "cond", "switch", "nested"]
MESH = ProcessMesh(shape=(2, 2), dim_names=["dp", "mp"])


def body_of(ops, x, w):
    """The loop body / branch: `ops` applied in turn to an 8x8 value (x, w read from outside)."""
    def body(t):
        for name in ops:
            t = {"tanh": lambda: jnp.tanh(t), "matmul": lambda: t @ w, "rmatmul": lambda: w @ t,
                 "transpose": lambda: t.T, "add_x": lambda: t + x, "center": lambda: t - jnp.mean(t, 0, keepdims=True),
                 "scale": lambda: t * 0.5}[name]()
        return t
    return body


def program(kind, ops_a, ops_b, grad):
    def forward(w, x, xs, n):
        a, b = body_of(ops_a, x, w), body_of(ops_b, x, w)
        if kind == "fori":
            return jax.lax.fori_loop(0, 3, lambda i, t: a(t), x)
        if kind == "scan":
            c, ys = jax.lax.scan(lambda c, xi: (a(c) + xi, jnp.sum(c * xi, axis=0)), x, xs)
            return c + jnp.sum(ys)
        if kind == "while":
            return jax.lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, a(s[1])), (jnp.int32(0), x))[1]
        if kind == "cond":
            return jax.lax.cond(jnp.sum(x * w) > 0, a, b, x)
        if kind == "nested":  # a scan whose body branches and loops
            def cell(c, xi):
                c = jax.lax.cond(jnp.sum(xi) > 0, a, b, c)
                return jax.lax.fori_loop(0, 2, lambda i, t: a(t) + xi, c), jnp.sum(c, axis=0)
            c, ys = jax.lax.scan(cell, x, xs)
            return c * jnp.sum(ys)
        return jax.lax.switch(n, [a, b, lambda t: a(b(t))], x)

    if not grad:
        return forward
    return lambda w, x, xs, n: jax.value_and_grad(lambda q: jnp.sum(forward(q, x, xs, n) ** 2))(w)


@st.composite
def cases(draw, kind):
    ops = st.lists(st.sampled_from(OPS), min_size=1, max_size=4)
    return {"kind": kind, "ops_a": draw(ops), "ops_b": draw(ops), "grad": kind != "while" and draw(st.booleans()),
            "w": draw(st.sampled_from(range(len(SPLITS)))), "x": draw(st.sampled_from(range(len(SPLITS)))),
            "xs": draw(st.sampled_from(range(len(SPLITS)))), "n": draw(st.integers(0, 2)),
            "seed": draw(st.integers(0, 2 ** 16))}


def check(case) -> None:
    rng = np.random.default_rng(case["seed"])
    w = rng.normal(0, 0.3, (8, 8)).astype(np.float32)
    x = rng.normal(0, 1, (8, 8)).astype(np.float32)
    xs = rng.normal(0, 0.5, (2, 8, 8)).astype(np.float32)
    fn = program(case["kind"], case["ops_a"], case["ops_b"], case["grad"])
    stacked = [Shard(p.dim + 1) if isinstance(p, Shard) else p for p in SPLITS[case["xs"]]]  # xs: [2, 8, 8]
    placements = (SPLITS[case["w"]], SPLITS[case["x"]], stacked, None)
    n = np.int32(case["n"])
    ref = jax.jit(fn)(w, x, xs, n)
    # propagated from the drawn placements; searched (strategy="auto") with w left to the search
    for strategy, given in (("propagate", placements), ("auto", (None,) + placements[1:])):
        ours = parallelize(fn, MESH, given, strategy=strategy)(w, x, xs, n)
        for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(ref)):
            a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
            tol = 1e-5 * max(1.0, float(np.abs(b).max()))
            assert np.abs(a - b).max() <= tol, f"{case}, {strategy}: differs by {np.abs(a - b).max()} (tolerance {tol})"


def random_case(examples: int) -> dict:
    """`examples` programs of each kind."""
    seen = collections.Counter()
    for kind in KINDS:
        @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(cases(kind))
        def run(case):
            seen[case["kind"] + ("+grad" if case["grad"] else "")] += 1
            check(case)

        run()
    return {"case": f"random-{examples}", "kinds": dict(seen)}
