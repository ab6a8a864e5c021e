"""The solver is exact: on random programs of a few jax ops (elementwise, matmul, reduce,
transpose, reshape, broadcast) on a 2x2 mesh, HiGHS's objective equals the best of every
combination of strategies under the same cost model (enumerated by broadcasting, no solver),
with and without a memory limit; the plan it returns costs what it says. The reshard costs
the search reads equal the planner's."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from spmdkit import core
from spmdkit.auto.cost import AutoCostModel, build_costs, total_cost
from spmdkit.auto.solve import exhaustive, smallest_memory, solve
from spmdkit.auto.strategies import build_space
from spmdkit.ir import import_jax
from spmdkit.sharding import Mesh

pytestmark = pytest.mark.skipif(not core.contains_spmd_rule("jax.dot_general"), reason="no jax.* rules in this build")

MESH = Mesh({"x": 2, "y": 2})
OPS = ["tanh", "add", "matmul", "reduce", "transpose", "reshape", "broadcast"]
# a slow compute rate so that compute and communication both matter at these tiny sizes
COST = AutoCostModel(flops_per_s=2e8)


def _apply(code: str, values: list, pick: int):
    """One op on earlier values (None when it does not fit their ranks)."""
    v = values[pick % len(values)]
    if code == "tanh":
        return jnp.tanh(v)
    if code == "add":
        same = [u for u in values if u.shape == v.shape]
        return v + same[(pick // 7) % len(same)]
    if code == "matmul" and v.ndim == 2:
        return v @ v.T
    if code == "reduce" and v.ndim >= 1:
        return v.sum(axis=0)
    if code == "transpose" and v.ndim == 2:
        return v.T
    if code == "reshape" and v.ndim == 2:
        return v.reshape(-1)
    if code == "reshape" and v.ndim == 1 and v.shape[0] % 4 == 0:
        return v.reshape(v.shape[0] // 4, 4)
    if code == "broadcast" and v.ndim == 1:
        return jnp.broadcast_to(v, (4, v.shape[0]))
    return None


def _program(codes, picks, pinned, result_pinned):
    def fn(a, b):
        values = [a, b]
        for code, pick in zip(codes, picks):
            out = _apply(code, values, pick)
            if out is not None:
                values.append(out)
        return values[-1]

    a, b = jnp.ones((8, 4)), jnp.ones((4, 8))
    shardings = ['#sdy.sharding<@mesh, [{"x"}, {}]>' if p else None for p in pinned]
    program = import_jax(fn, a, b, inline_calls=True, meshes={"mesh": MESH}, arg_shardings=shardings)
    if result_pinned:
        rank = program.main.result_types[0].rank
        from spmdkit.sharding import DimSharding, TensorSharding
        program.main.result_shardings = [TensorSharding("mesh", [DimSharding([]) for _ in range(rank)])]
    return program


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(codes=st.lists(st.sampled_from(OPS), min_size=1, max_size=5),
       picks=st.lists(st.integers(0, 50), min_size=5, max_size=5),
       pinned=st.tuples(st.booleans(), st.booleans()), result_pinned=st.booleans(),
       squeeze=st.floats(0.0, 1.0), with_limit=st.booleans())
def test_solver_objective_equals_exhaustive_best(codes, picks, pinned, result_pinned, squeeze, with_limit):
    program = _program(codes, picks, pinned, result_pinned)
    space = build_space(program, list(pinned), {})
    costs = build_costs(space, COST)
    sizes = [len(c) for c in costs.node]
    assume(np.prod(sizes, dtype=np.float64) <= 300_000)
    assert len(program.main.body.ops) <= 12
    limit = None
    if with_limit:   # between the least memory any plan needs and the replicated plan's
        least = smallest_memory(costs)
        most = float(sum(m.max() for m in costs.memory))
        limit = least + squeeze * (most - least)
    best, best_choice = exhaustive(costs, limit)
    sol = solve(costs, limit)
    assert sol.status == "Optimal" and sol.gap <= 1e-9
    assert sol.objective_us == pytest.approx(best, rel=1e-7, abs=1e-9)
    # the chosen plan costs what the solver says, and meets the limit
    assert total_cost(costs, sol.choice) == pytest.approx(best, rel=1e-7, abs=1e-9)
    assert total_cost(costs, best_choice) == pytest.approx(best, rel=1e-7, abs=1e-9)
    if limit is not None:
        assert sum(float(m[k]) for m, k in zip(costs.memory, sol.choice)) <= limit + 1e-6


def test_exhaustive_is_able_to_disagree():
    """The check can fail: a plan one strategy away from the optimum costs more (when the node
    has a costlier alternative), so a solver returning it would be caught."""
    program = _program(["matmul", "tanh", "reduce"], [0, 2, 3, 0, 0], (True, False), True)
    costs = build_costs(build_space(program, [True, False], {}), COST)
    best, choice = exhaustive(costs)
    worse = []
    for n, c in enumerate(costs.node):
        for k in range(len(c)):
            if k != choice[n]:
                trial = list(choice)
                trial[n] = k
                worse.append(total_cost(costs, trial))
    assert worse and max(worse) > best + 1e-6


@st.composite
def _layouts(draw, mesh_axes):
    """A shape, a source layout (maybe partial) and several targets (not partial) on a mesh."""
    from spmdkit.reshard import Layout, MeshSpec
    spec = MeshSpec.make(mesh_axes)
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.sampled_from([1, 2, 4, 6, 8, 16])) for _ in range(rank))

    def layout(partial_ok):
        dims, partial = [[] for _ in shape], []
        for axis in draw(st.permutations([a for a, _ in mesh_axes.items()])):
            where = draw(st.integers(-1 if partial_ok else 0, rank))
            if where == -1:
                partial.append(axis)
            elif where < rank:
                dims[where].append(axis)
        parts = [np.prod([mesh_axes[a] for a in d]) for d in dims]
        assume(all(n % p == 0 for n, p in zip(shape, parts)))
        reduce = draw(st.sampled_from(["sum", "max"])) if partial else None
        return Layout.make(spec, dims, partial, reduce)

    return spec, shape, layout(True), [layout(False) for _ in range(draw(st.integers(1, 6)))]


@pytest.mark.parametrize("mesh_axes", [{"x": 2, "y": 2}, {"x": 2, "y": 2, "z": 2}, {"x": 2, "y": 4}],
                         ids=["2x2", "2x2x2", "2x4"])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(data=st.data(), itemsize=st.sampled_from([2, 4]))
def test_reshard_table_equals_the_planner(mesh_axes, data, itemsize):
    """One search per source run to the end (ReshardTable) gives plan_reshard's cost and bytes
    for every target, exactly (the same pushes, order and tie-breaks), and INFEASIBLE where the
    planner refuses."""
    from spmdkit.auto.reshard_table import INFEASIBLE, ReshardTable
    from spmdkit.reshard import DEFAULT_COST_MODEL, ReshardError, plan_reshard
    spec, shape, src, targets = data.draw(_layouts(mesh_axes))
    table = ReshardTable(spec, shape, itemsize, DEFAULT_COST_MODEL)
    for dst in targets:
        try:
            p = plan_reshard(spec, shape, src, dst, itemsize, DEFAULT_COST_MODEL, sub_axes=False)
            want = (p.cost_us, p.bytes)
        except ReshardError:
            want = INFEASIBLE
        assert table.get(src, dst) == want, (src, dst)


@st.composite
def _pairwise_problems(draw):
    """A random pairwise cost problem: few strategies per node, small integer costs (ties and
    dominated strategies are common), edges of random shapes (parallel edges and sums of a row
    and a column term included), random memory per strategy."""
    from spmdkit.auto.cost import Costs, EdgeCost
    n = draw(st.integers(1, 7))
    sizes = [draw(st.integers(1, 4)) for _ in range(n)]
    ints = lambda k: np.array(draw(st.lists(st.integers(0, 6), min_size=k, max_size=k)), dtype=float)
    node = [ints(k) for k in sizes]
    memory = [ints(k) for k in sizes]
    edges, ends = [], []
    for _ in range(draw(st.integers(0, 10))):
        a, b = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        if draw(st.booleans()):
            m = ints(sizes[a] * sizes[b]).reshape(sizes[a], sizes[b])
        else:   # additive: a function of each end alone
            m = ints(sizes[a])[:, None] + ints(sizes[b])[None, :]
        if a == b:
            m = np.diag(np.diag(m))
        edges.append(EdgeCost(m, np.arange(sizes[a]), np.arange(sizes[b]), m))
        ends.append((a, b))
    return Costs(node, memory, edges, ends)


@pytest.mark.parametrize("column_generation", [True, False], ids=["relaxation-first", "milp-only"])
@settings(max_examples=150, deadline=None)
@given(costs=_pairwise_problems(), squeeze=st.floats(0.0, 1.0), with_limit=st.booleans())
def test_reductions_keep_the_optimum_of_any_pairwise_problem(column_generation, costs, squeeze, with_limit):
    """The exact reductions (additive edges to node costs, dominated strategies dropped, leaf and
    series eliminations) and the solver give the exhaustive optimum on arbitrary small problems
    with many ties, with and without a memory limit, and the returned plan costs it: through the
    LP relaxation by column generation (its integral optima; else the MILP) and the MILP alone."""
    limit = None
    if with_limit:
        least = smallest_memory(costs)
        limit = least + squeeze * (float(sum(m.max() for m in costs.memory)) - least)
    best, _ = exhaustive(costs, limit)
    sol = solve(costs, limit, column_generation=column_generation)
    assert sol.status == "Optimal" and sol.gap <= 1e-9
    assert sol.objective_us == pytest.approx(best, abs=1e-9)
    assert total_cost(costs, sol.choice) == pytest.approx(best, abs=1e-9)
    if limit is not None:
        assert sum(float(m[k]) for m, k in zip(costs.memory, sol.choice)) <= limit + 1e-9


@settings(max_examples=40, deadline=None)
@given(costs=_pairwise_problems(), squeeze=st.floats(0.0, 1.0), with_limit=st.booleans())
def test_out_of_time_still_gives_a_plan_that_costs_what_it_says(costs, squeeze, with_limit):
    """With no time for the relaxation, the solve falls back to the MILP over the columns it
    has, from a starting plan that fits: the plan returned costs the objective reported, meets
    the limit, and is never better than the optimum (optimal when HiGHS proves it)."""
    limit = None
    if with_limit:
        least = smallest_memory(costs)
        limit = least + squeeze * (float(sum(m.max() for m in costs.memory)) - least)
    best, _ = exhaustive(costs, limit)
    sol = solve(costs, limit, time_limit_s=0.0)
    assert total_cost(costs, sol.choice) == pytest.approx(sol.objective_us, abs=1e-9)
    assert sol.objective_us >= best - 1e-9
    if sol.status == "Optimal":
        assert sol.objective_us == pytest.approx(best, abs=1e-9)
    if limit is not None:
        assert sum(float(m[k]) for m, k in zip(costs.memory, sol.choice)) <= limit + 1e-9
