"""The partitioner's decisions on small programs, without running them (no JAX devices needed):
where reshards go, that partial sums are reduced once and late, and what completion's backward
refinement buys."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from spmdkit.ir import import_jax
from spmdkit.models import mlp
from spmdkit.partition import LocalOp, complete_forward, partition
from spmdkit.sharding import Mesh, parse_sharding

MESH = Mesh({"x": 2, "y": 2})


def program(fn, *args, shardings, results=None, mesh=MESH):
    p = import_jax(fn, *args, arg_shardings=[parse_sharding(s) if s else None for s in shardings],
                   meshes={"mesh": mesh}, inline_calls=True)
    if results is not None:
        p.main.result_shardings = [parse_sharding(s) if s else None for s in results]
    return p


def test_row_parallel_matmul_reduces_once_at_the_result():
    p = program(lambda a, w: a @ w, jnp.ones((8, 4)), jnp.ones((4, 4)),
                shardings=['#sdy.sharding<@mesh, [{"x"}, {"y"}]>', '#sdy.sharding<@mesh, [{"y"}, {}]>'],
                results=['#sdy.sharding<@mesh, [{"x"}, {}]>'])
    parted = partition(complete_forward(p))
    (reshard,) = parted.reshards
    assert reshard.source.partial == ("y",) and reshard.target.partial == ()
    assert [s.kind for s in reshard.plan.steps] == ["all_reduce"]  # ties with reduce-scatter + gather
    # the local result is 4x4 f32 (64 B); a ring all-reduce over 2 devices receives 2*(1/2) of it
    assert parted.summary().bytes_per_device == pytest.approx(64.0)
    assert parted.summary().collectives["all_reduce"] == 1


def test_sum_of_partial_sums_is_reduced_once():
    def f(a, w, v):
        return a @ w + a @ v
    p = program(f, jnp.ones((8, 4)), jnp.ones((4, 4)), jnp.ones((4, 4)),
                shardings=['#sdy.sharding<@mesh, [{}, {"y"}]>', '#sdy.sharding<@mesh, [{"y"}, {}]>',
                           '#sdy.sharding<@mesh, [{"y"}, {}]>'])
    parted = partition(complete_forward(p))
    assert parted.summary().collectives["all_reduce"] == 1
    add = next(s for s in parted.steps if isinstance(s, LocalOp) and s.op.name == "jax.add")
    assert add.result_layouts[0].partial == ("y",)


def test_a_consumer_needing_the_producers_layout_gets_no_reshard():
    p = program(lambda a: jnp.tanh(a) * 2.0, jnp.ones((8, 4)), shardings=['#sdy.sharding<@mesh, [{"x"}, {"y"}]>'],
                results=['#sdy.sharding<@mesh, [{"x"}, {"y"}]>'])
    parted = partition(complete_forward(p))
    assert all(r.plan.bytes == 0 for r in parted.reshards)
    assert sum(parted.summary().collectives.values()) == 0


def test_backward_refinement_moves_fewer_bytes_and_only_adds_axes():
    mesh = Mesh({"x": 2, "y": 2, "z": 2})
    params = mlp.init_params(jax.random.PRNGKey(0))
    x, y = mlp.example_batch(jax.random.PRNGKey(1))
    specs = {"b1": '[{"y"}]', "b2": "[{}]", "w1": '[{"z"}, {"y"}]', "w2": '[{"y"}, {}]'}
    shardings = [f"#sdy.sharding<@mesh, {specs[k]}>" for k in sorted(params)] + \
        ['#sdy.sharding<@mesh, [{"x"}, {}]>'] * 2

    def build():
        p = program(mlp.train_step, params, x, y, shardings=shardings, mesh=mesh)
        p.main.result_shardings = [a.sharding for a in p.main.args[:4]] + [None]
        return p

    forward_only = complete_forward(build(), backward=False)
    both = complete_forward(build())
    for a, b in zip(forward_only.main.walk(), both.main.walk()):
        for u, v in zip(a.results, b.results):
            for du, dv in zip(u.sharding.dims, v.sharding.dims):
                assert [r.name for r in dv.axes][:len(du.axes)] == [r.name for r in du.axes]
    fwd, bwd = partition(forward_only).summary(), partition(both).summary()
    assert bwd.bytes_per_device < fwd.bytes_per_device


def _update_program(result_sharding):
    # Adam-like update of replicated p, m, v from g = a.T @ b: g comes partial over x and split
    # over y, so propagation splits the whole update over y.
    def step(a, b, p, m, v):
        g = a.T @ b
        m2 = 0.9 * m + 0.1 * g
        v2 = 0.99 * v + 0.01 * g * g
        return p - 0.1 * m2 / (jnp.sqrt(v2) + 1e-8), m2, v2
    whole = '#sdy.sharding<@mesh, [{}, {}]>'
    p = program(step, jnp.ones((8, 4)), jnp.ones((8, 4)), jnp.ones((4, 4)), jnp.ones((4, 4)), jnp.ones((4, 4)),
                shardings=['#sdy.sharding<@mesh, [{"x"}, {}]>', '#sdy.sharding<@mesh, [{"x"}, {"y"}]>',
                           whole, whole, whole], results=[result_sharding] * 3)
    from spmdkit import propagate
    propagate(p)
    return p


def _layout_of(parted, name):
    return [tuple(s.result_layouts[0].dims) for s in parted.steps if isinstance(s, LocalOp) and s.op.name == name]


def test_an_update_whose_results_are_replicated_runs_whole():
    p = _update_program('#sdy.sharding<@mesh, [{}, {}]>')
    (split,) = {v.sharding.dims[1].axes for op in p.main.body.ops if op.name == "jax.add" for v in op.results}
    assert [a.name for a in split] == ["y"]  # propagation split the update over y
    parted = partition(p)
    assert set(_layout_of(parted, "jax.add")) == set(_layout_of(parted, "jax.sub")) == {((), ())}  # run whole
    moving = [r for r in parted.reshards if r.plan.bytes > 0]
    assert [r.value for r in moving] == [p.main.body.ops[1].result]  # only g moves: reduced and gathered once


def test_an_update_whose_results_stay_split_runs_split():
    parted = partition(_update_program('#sdy.sharding<@mesh, [{}, {"y"}]>'))
    assert set(_layout_of(parted, "jax.sub")) == {((), ("y",))}
    assert "all_gather" not in [s.kind for r in parted.reshards for s in r.plan.steps]


def test_only_regions_a_function_result_reads_or_is_read_by_are_priced():
    # an elementwise chain inside the program (its values read by a matmul, not returned) can never
    # run whole for less: its region is not built; the update's region, returned, is
    from spmdkit.partition.layouts import ProgramMesh
    from spmdkit.partition.regions import Regions

    def step(a, b, w):
        h = jnp.tanh(a * 2.0 + 1.0)   # a region between the argument and the matmul
        return (h @ w) * 3.0 + b       # a region whose values are returned
    sharded = '#sdy.sharding<@mesh, [{"x"}, {"y"}]>'
    p = program(step, jnp.ones((8, 4)), jnp.ones((8, 4)), jnp.ones((4, 4)),
                shardings=[sharded, sharded, '#sdy.sharding<@mesh, [{"y"}, {}]>'],
                results=['#sdy.sharding<@mesh, [{}, {}]>'])
    from spmdkit import propagate
    propagate(p)
    regions = Regions(p.main, ProgramMesh.of(p))
    built = {op.name for r in regions.regions for op in p.main.body.ops if regions.region_of.get(id(op)) is not None}
    assert "jax.tanh" not in built and "jax.add" in built
