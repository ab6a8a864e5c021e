"""The search over programs with control flow (JAX's scan, fori_loop, cond): a while's carried
values and a case's results are carry nodes, the ops of the regions are nodes like any other, and
a loop body's compute and reshards count once per iteration; the annotated program partitions
with every value inside the regions in the layout the search chose. (Training steps searched
this way equal one device: test/partition/test_partition_control_flow.py, "+auto" cases and the
random programs.)"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from spmdkit import core
from spmdkit.auto import AutoShardingError, auto_shard
from spmdkit.auto.cost import AutoCostModel, build_costs, total_cost
from spmdkit.auto.solve import exhaustive, solve
from spmdkit.auto.strategies import build_space
from spmdkit.ir import import_jax
from spmdkit.partition import LocalControlFlow, partition
from spmdkit.partition.layouts import layout_of_value
from spmdkit.sharding import Mesh

pytestmark = pytest.mark.skipif(not core.contains_spmd_rule("jax.dot_general"), reason="no jax.* rules in this build")

MESH = Mesh({"x": 2, "y": 2})
TRIPS = 3


def _scan_step():
    """A grad through a scan over stacked weights (TRIPS layers) and a cond on the result."""
    def loss(w, h):
        def layer(c, wi):
            c = jnp.tanh(c @ wi)
            return c, jnp.sum(c)
        h, sums = jax.lax.scan(layer, h, w)
        h = jax.lax.cond(jnp.sum(h) > 0, lambda t: t * 2.0, lambda t: t - 1.0, h)
        return jnp.sum(h * h) + jnp.sum(sums)

    def step(w, h):
        return jax.value_and_grad(loss)(w, h)

    batch = '#sdy.sharding<@mesh, [{"x"}, {}]>'
    return import_jax(step, jnp.zeros((TRIPS, 16, 16)), jnp.zeros((8, 16)), inline_calls=True,
                      meshes={"mesh": MESH}, arg_shardings=[None, batch])


def _nodes(space, kind):
    return [(i, n) for i, n in enumerate(space.nodes) if n.kind == kind]


def test_loop_bodies_are_nodes_counted_once_per_iteration():
    program = _scan_step()
    space = build_space(program, [False, True], {})
    whiles = [op for op in program.main.body.ops if op.name == "stablehlo.while"]
    cases = [op for op in program.main.body.ops if op.name == "stablehlo.case"]
    assert len(whiles) == 2 and cases   # the forward and the backward scan; the cond
    carries = _nodes(space, "carry")
    assert sum(1 for _, n in carries if n.op in whiles) == sum(len(op.results) for op in whiles)
    assert sum(1 for _, n in carries if n.op in cases) == sum(len(op.results) for op in cases)
    for _, n in carries:
        reads = 2 if n.op.name == "stablehlo.while" else len(n.op.regions)
        assert all(len(s.operands) == reads and all(l == s.results[0] for l in s.operands) for s in n.strategies)
        assert n.weight == 1 and n.depth == 0
    body_ops = [(i, n) for i, n in _nodes(space, "op") if "/body/" in n.name]
    branch_ops = [(i, n) for i, n in _nodes(space, "op") if "/branch" in n.name]
    assert body_ops and branch_ops
    assert all(n.weight == TRIPS and n.depth == 1 for _, n in body_ops)
    assert all(n.weight == 1 and n.depth == 1 for _, n in branch_ops)
    # reshards count where the value is defined: per iteration for the body's values and the
    # carried ones, once for a value the body reads from outside (the stacked weight)
    inside = set()
    for op in whiles:
        body = op.regions[1].block
        inside |= {id(a) for a in body.args} | {id(r) for nested in body.ops for o in nested.walk() for r in o.results}
    w = program.main.args[0]
    body_ids = {i for i, _ in body_ops}
    read_in_body = [e for e in space.edges if e.dst in body_ids]
    for e in read_in_body:
        assert e.weight == (TRIPS if id(e.value) in inside else 1), (space.nodes[e.src].name, space.nodes[e.dst].name)
    assert any(e.value is w for e in read_in_body) and any(e.weight == TRIPS for e in read_in_body)
    # and the costs the solver reads carry those weights
    model = AutoCostModel(flops_per_s=2e8)
    costs = build_costs(space, model)
    for i, n in body_ops:
        assert costs.node[i] == pytest.approx([TRIPS * model.compute_us(s.local_flops) for s in n.strategies])


def test_the_search_annotates_inside_the_regions_and_the_program_partitions():
    program = _scan_step()
    report = auto_shard(program, [False, True], cost=AutoCostModel(flops_per_s=2e8))
    assert report.status == "Optimal"
    fn = program.main
    for op in fn.walk():
        if op is fn.body.terminator or op.is_terminator or op.name == "stablehlo.constant" or not op.operands:
            continue
        assert all(r.sharding is not None for r in op.results), op.name
        for region in op.regions:
            assert all(a.sharding is not None for a in region.block.args), op.name
    parted = partition(program)
    loops = [s for s in parted.steps if isinstance(s, LocalControlFlow)]
    assert len(loops) == sum(1 for op in fn.body.ops if op.regions) >= 3   # two scans, the cond and its grad
    pm = parted.mesh
    for step in loops:   # each carried value runs in the layout the search wrote on the loop (reduced)
        for y, layout in zip(step.op.results, step.result_layouts):
            searched = layout_of_value(y, pm)
            assert layout.dims == searched.dims


def _body(codes, w, x):
    def body(t):
        for code in codes:
            t = {"tanh": lambda: jnp.tanh(t), "matmul": lambda: t @ w, "add_x": lambda: t + x,
                 "sum_rows": lambda: t - jnp.sum(t, axis=0, keepdims=True)}[code]()
        return t
    return body


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(kind=st.sampled_from(["fori", "cond", "scan"]), codes=st.lists(st.sampled_from(["tanh", "matmul", "add_x",
                                                                                        "sum_rows"]),
                                                                       min_size=1, max_size=2),
       pinned=st.booleans())
def test_the_solver_is_exact_through_loops_and_branches(kind, codes, pinned):
    """HiGHS's objective equals the best of every combination of strategies (enumerated, no
    solver) on small programs with a loop or a branch: the carry nodes, the self edges of a
    carried value the body returns as it is, and the trip-count weights all in the model."""
    def fn(w, x):
        body = _body(codes, w, x)
        if kind == "fori":
            return jax.lax.fori_loop(0, 3, lambda i, t: body(t), x)
        if kind == "cond":
            return jax.lax.cond(jnp.sum(x) > 0, body, jnp.tanh, x)
        return jax.lax.scan(lambda c, _: (body(c), None), x, None, length=2)[0]

    batch = '#sdy.sharding<@mesh, [{"x"}, {}]>' if pinned else None
    program = import_jax(fn, jnp.ones((4, 4)), jnp.ones((4, 4)), inline_calls=True, meshes={"mesh": MESH},
                         arg_shardings=[None, batch])
    space = build_space(program, [False, pinned], {})
    assert any(n.kind == "carry" for n in space.nodes)
    costs = build_costs(space, AutoCostModel(flops_per_s=2e8))
    assume(np.prod([len(c) for c in costs.node], dtype=np.float64) <= 1_000_000)
    best, _ = exhaustive(costs, limit=1_000_000)
    sol = solve(costs)
    assert sol.status == "Optimal"
    assert sol.objective_us == pytest.approx(best, rel=1e-7, abs=1e-9)
    assert total_cost(costs, sol.choice) == pytest.approx(best, rel=1e-7, abs=1e-9)


def _shard_map_program(axis_names=None):
    mesh = jax.sharding.AbstractMesh((2, 2), ("x", "y"))
    f = jax.shard_map(lambda a: a * 2, mesh=mesh, in_specs=jax.sharding.PartitionSpec("x"),
                      out_specs=jax.sharding.PartitionSpec("x"), **({"axis_names": axis_names} if axis_names else {}))
    program = import_jax(f, np.zeros((4,), np.float32), inline_calls=True)
    program.meshes = {"mesh": Mesh([("x", 2), ("y", 2)])}
    return program


def test_a_shard_map_keeps_its_in_and_out_specs():
    # its body runs as written (partition/manual.py): one strategy, the user's in/out shardings
    program = _shard_map_program()
    auto_shard(program, [False])
    (op,) = [o for o in program.main.body.ops if o.name == "sdy.manual_computation"]
    assert [a.name for a in op.operands[0].sharding.dims[0].axes] == ["x"]


def test_a_shard_map_manual_over_some_axes_is_refused_naming_it():
    with pytest.raises(AutoShardingError, match=r"sdy.manual_computation.*manual over \['x'\] only"):
        auto_shard(_shard_map_program({"x"}), [False])
