"""Every plan is proven on the numpy simulator; the planner is never worse than the naive plan and
matches the exhaustive optimum on small cases."""
import dataclasses
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from spmdkit.reshard import (AxisLink, CostModel, Layout, MeshSpec, exhaustive_best_cost,
                             naive_plan, plan_reshard)
from spmdkit.reshard.simulate import PlanMismatch, apply_step, prove_plan, source_locals

AXIS_NAMES = "xyzw"


@st.composite
def meshes(draw, max_axes=3):
    n = draw(st.integers(1, max_axes))
    sizes = draw(st.lists(st.sampled_from([1, 2, 2, 3, 4, 6, 8]), min_size=n, max_size=n)
                 .filter(lambda s: math.prod(s) <= 24))   # every device is simulated: keep meshes small
    return MeshSpec.make([(AXIS_NAMES[i], s) for i, s in enumerate(sizes)])


@st.composite
def layouts(draw, mesh, rank, partial_ok=True, reduce=None):
    """A random layout: each axis replicates, is partial, or goes to a random dim; order random."""
    dims = [[] for _ in range(rank)]
    partial = []
    names = list(draw(st.permutations(mesh.names)))
    for a in names:
        choice = draw(st.integers(-2 if partial_ok else -1, rank - 1))
        if choice == -2:
            partial.append(a)
        elif choice >= 0:
            dims[choice].append(a)
    red = reduce or draw(st.sampled_from(["sum", "avg", "max", "min", "all", "any"]))
    return Layout.make(mesh, dims, partial, red)


@st.composite
def requests(draw, max_axes=3, max_rank=3):
    """A mesh, a shape and two layouts of it. Each dim is the least size both layouts divide
    times a small factor, so some intermediate layouts do not divide (uneven) and are avoided."""
    mesh = draw(meshes(max_axes))
    rank = draw(st.integers(1, max_rank))
    reduce = draw(st.sampled_from(["sum", "avg", "max", "min", "all", "any"]))
    src = draw(layouts(mesh, rank, reduce=reduce))
    tgt = draw(layouts(mesh, rank, reduce=draw(st.sampled_from([reduce, "sum", "max"]))))
    shape = []
    for d in range(rank):
        a, b = (math.prod(mesh.size(x) for x in lay.dims[d]) for lay in (src, tgt))
        shape.append(math.lcm(a, b) * draw(st.sampled_from([1, 1, 2, 3, min(mesh.num_devices, 8)])))
    return mesh, tuple(shape), src, tgt


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(requests(), st.integers(0, 2 ** 16))
def test_every_plan_is_proven_and_no_worse_than_naive(req, seed):
    mesh, shape, src, tgt = req
    plan = plan_reshard(mesh, shape, src, tgt)
    prove_plan(plan, seed, every_step=True)   # each move does what the planner says it does
    naive = naive_plan(mesh, shape, src, tgt)
    prove_plan(naive, seed, every_step=True)
    assert plan.cost_us <= naive.cost_us + 1e-9
    # every step starts where the previous one ended
    node = plan.source
    for s in plan.steps:
        assert s.before == node
        node = s.after
    assert node == plan.target


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests(max_axes=3, max_rank=2))
def test_plan_cost_equals_exhaustive_optimum(req):
    mesh, shape, src, tgt = req
    plan = plan_reshard(mesh, shape, src, tgt)
    best = exhaustive_best_cost(mesh, shape, src, tgt, max_steps=len(plan.steps) + 2)
    assert best is not None
    assert math.isclose(plan.cost_us, best, rel_tol=1e-9, abs_tol=1e-12), (plan, best)


BYTES_ONLY = CostModel.make(intra=AxisLink(0.0, 87.7), inter=AxisLink(0.0, 87.7))


@settings(max_examples=40, deadline=None)
@given(requests(max_axes=3, max_rank=2), st.sampled_from([2, 4, 8]))
def test_bandwidth_only_cost_scales_with_itemsize(req, itemsize):
    """With no latency every path's cost is linear in the element size, so the optimum is too."""
    mesh, shape, src, tgt = req
    one = plan_reshard(mesh, shape, src, tgt, itemsize=1, cost=BYTES_ONLY)
    many = plan_reshard(mesh, shape, src, tgt, itemsize=itemsize, cost=BYTES_ONLY)
    assert math.isclose(many.cost_us, itemsize * one.cost_us, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(many.bytes, itemsize * one.bytes, rel_tol=1e-9)


@settings(max_examples=40, deadline=None)
@given(requests(max_axes=2, max_rank=3))
def test_cutting_axes_into_factors_never_costs_more(req):
    """Whole-axis plans are plans over factors too (a group of all of x's factors is x)."""
    mesh, shape, src, tgt = req
    fine = plan_reshard(mesh, shape, src, tgt, sub_axes=True)
    coarse = plan_reshard(mesh, shape, src, tgt, sub_axes=False)
    assert fine.cost_us <= coarse.cost_us + 1e-9
    prove_plan(fine)
    prove_plan(coarse)


def L(mesh, dims, partial=(), reduce=None):
    return Layout.make(mesh, dims, partial, reduce)


MESH = MeshSpec.make("x=2,y=4")


def kinds(plan):
    return [s.kind for s in plan.steps]


def test_identity_is_empty():
    a = L(MESH, [("x",), ()])
    assert plan_reshard(MESH, (8, 8), a, a).steps == ()


def test_replicate_to_shard_is_a_free_local_slice():
    plan = plan_reshard(MESH, (8, 8), L(MESH, [(), ()]), L(MESH, [("x", "y"), ()]))
    assert set(kinds(plan)) == {"slice"} and plan.cost_us == 0 and plan.bytes == 0


def test_partial_sum_to_shard_is_reduce_scatter():
    plan = plan_reshard(MESH, (8, 8), L(MESH, [(), ()], "x"), L(MESH, [("x",), ()]))
    assert kinds(plan) == ["reduce_scatter"]


def test_partial_sum_to_replicate_is_one_all_reduce_on_a_1d_mesh():
    mesh = MeshSpec.make("y=4")
    plan = plan_reshard(mesh, (8, 8), L(mesh, [(), ()], "y"), L(mesh, [(), ()]))
    assert kinds(plan) == ["all_reduce"]


def test_idle_axis_lowers_bytes_of_partial_to_replicate():
    """With x idle, reduce-scatter over y then all-gather over (x, y) receives 10/8 of the tensor
    per device where the ring all-reduce over y receives 12/8."""
    plan = plan_reshard(MESH, (8, 8), L(MESH, [(), ()], "y"), L(MESH, [(), ()]))
    assert plan.bytes == 8 * 8 * 4 * 10 / 8
    assert kinds(plan) == ["slice", "reduce_scatter", "all_gather"] and plan.steps[2].axes == ("x", "y:(1)2", "y:(2)2")
    prove_plan(plan)


@pytest.mark.parametrize("reduce", ["max", "min", "all", "any"])
def test_partial_max_min_never_reduce_scatter(reduce):
    plan = plan_reshard(MESH, (8, 8), L(MESH, [(), ()], ("x",), reduce), L(MESH, [("x",), ()]))
    assert "reduce_scatter" not in kinds(plan) and "all_reduce" in kinds(plan)
    prove_plan(plan)


def test_shard_dim_to_dim_is_all_to_all():
    plan = plan_reshard(MESH, (8, 8), L(MESH, [("y",), ()]), L(MESH, [(), ("y",)]))
    assert kinds(plan) == ["all_to_all"]


def test_reorder_within_a_dim_is_one_permute():
    mesh = MeshSpec.make("x=2,y=2")
    plan = plan_reshard(mesh, (8, 8), L(mesh, [("x", "y"), ()]), L(mesh, [("y", "x"), ()]))
    assert kinds(plan) == ["collective_permute"]
    assert sorted(plan.steps[0].pairs) == [(1, 2), (2, 1)]
    prove_plan(plan)


def test_slow_axis_is_avoided_when_a_fast_one_does():
    """x crosses nodes (slow); moving dim 0's shard to dim 1 over x costs more than over y."""
    mesh = MeshSpec.make("x=4,y=4")
    slow = CostModel.make(devices_per_node=4)
    assert slow.link(mesh, "x") != slow.link(mesh, "y")
    plan = plan_reshard(mesh, (16, 16), L(mesh, [("x",), ()]), L(mesh, [(), ()]), cost=slow)
    assert kinds(plan) == ["all_gather"]
    fast_only = CostModel.make({"x": AxisLink(0.6, 87.7)}, devices_per_node=4)
    assert plan_reshard(mesh, (16, 16), L(mesh, [("x",), ()]), L(mesh, [(), ()]), cost=fast_only).cost_us < plan.cost_us


def test_plans_are_cached():
    a, b = L(MESH, [("x",), ()]), L(MESH, [(), ("x", "y")])
    assert plan_reshard(MESH, (8, 16), a, b) is plan_reshard(MESH, (8, 16), a, b)


@pytest.mark.parametrize("kind", ["reduce_scatter", "all_to_all", "all_gather"])
def test_simulator_catches_a_wrong_step(kind):
    """The proof can fail: the same plan with the step's dim changed is caught."""
    mesh = MeshSpec.make("x=2,y=2")
    src, tgt = {"reduce_scatter": (L(mesh, [(), ()], "x"), L(mesh, [("x",), ()])),
                "all_to_all": (L(mesh, [("y",), ()]), L(mesh, [(), ("y",)])),
                "all_gather": (L(mesh, [("y",), ()]), L(mesh, [(), ()]))}[kind]
    plan = plan_reshard(mesh, (8, 8), src, tgt)
    assert kinds(plan) == [kind]
    prove_plan(plan)
    (step,) = plan.steps
    bad = dataclasses.replace(plan, steps=(dataclasses.replace(step, dim=1 - step.dim),))
    with pytest.raises(PlanMismatch):
        prove_plan(bad)


def test_simulated_make_partial_sum_zeroes_other_ranks():
    plan = plan_reshard(MESH, (8, 8), L(MESH, [(), ()]), L(MESH, [(), ()], ("x",), "sum"))
    assert kinds(plan) == ["make_partial"] and plan.cost_us == 0
    x, value = source_locals(plan.mesh, plan.source, plan.shape, np.random.default_rng(1))
    y = apply_step(plan.mesh, plan.steps[0], x)
    assert np.array_equal(y[0], value) and not np.any(y[4])   # device 4 is x=1, y=0
    prove_plan(plan)


@pytest.mark.parametrize("reduce", ["max", "min", "avg"])
def test_make_partial_idempotent_types_keep_every_rank(reduce):
    plan = plan_reshard(MESH, (8, 8), L(MESH, [("y",), ()]), L(MESH, [("y",), ()], ("x",), reduce))
    x, _ = source_locals(plan.mesh, plan.source, plan.shape, np.random.default_rng(2))
    y = apply_step(plan.mesh, plan.steps[0], x)
    assert all(np.array_equal(x[d], y[d]) for d in x)
    prove_plan(plan)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(requests(max_axes=3, max_rank=3), st.integers(0, 2 ** 16))
def test_every_move_does_what_it_claims(req, seed):
    """Not only the chosen ones: each move the search may take, run alone on the simulator, leaves
    every device holding its shard of the layout the move claims to reach."""
    from spmdkit.reshard.planner import Plan, _prepare
    from spmdkit.reshard.steps import moves, with_pairs
    mesh, shape, src, tgt = req
    assume(mesh.num_devices <= 16)   # every move of a layout is simulated: keep each one small
    _, fine, shape, fsrc, ftgt = _prepare(mesh, shape, src, tgt, 4, None)
    for step in moves(fine, fsrc, shape, 4, CostModel(), ftgt.partial, ftgt.reduce):
        step = with_pairs(fine, step)
        assert step.cost_us >= 0 and step.bytes >= 0
        prove_plan(Plan(fine, shape, 4, fsrc, step.after, (step,)), seed)


def test_search_budget_falls_back_to_the_proven_naive_plan(monkeypatch):
    from spmdkit.reshard import planner
    mesh = MeshSpec.make("a=2,b=2,c=2,d=2,e=2")
    src = L(mesh, [("a", "d"), ("b",), ("e",), ("c",)])
    tgt = L(mesh, [("e",), ("a",), ("b", "c"), ("d",)])
    monkeypatch.setattr(planner, "MAX_EXPANSIONS", 50)
    plan = planner.plan_reshard(mesh, (4, 4, 4, 4), src, tgt, itemsize=2)
    assert not plan.exact and "search stopped" in plan.describe()
    assert plan.steps == naive_plan(mesh, (4, 4, 4, 4), src, tgt, itemsize=2).steps
    prove_plan(plan)
    planner._plan_cached.cache_clear()   # do not leave the budget-limited plan cached
    planner._SEEN.clear()


def test_five_axes_rank_four_is_planned_exactly_and_proven():
    mesh = MeshSpec.make("a=2,b=2,c=2,d=2,e=2")
    src = L(mesh, [("a", "d"), ("b",), ("e",), ("c",)])
    tgt = L(mesh, [("e",), ("a",), ("b", "c"), ("d",)])
    plan = plan_reshard(mesh, (4, 4, 4, 4), src, tgt, itemsize=8)
    assert plan.exact and plan.cost_us < naive_plan(mesh, (4, 4, 4, 4), src, tgt, itemsize=8).cost_us
    prove_plan(plan, every_step=True)


def test_shard_to_partial_sum_is_a_free_zero_pad():
    """[{"x"}, {}] -> partial sum over x: each device zero-pads its block to the full size (the
    sum over x of the padded blocks is the gathered tensor); no collective at all."""
    plan = plan_reshard(MESH, (8, 8), L(MESH, [("y", "x"), ()]), L(MESH, [("y",), ()], ("x",), "sum"))
    assert kinds(plan) == ["pad_to_partial"] and plan.cost_us == 0
    prove_plan(plan)
    for reduce in ("max", "avg"):   # only a sum is a zero-padded gather
        other = plan_reshard(MESH, (8, 8), L(MESH, [("y", "x"), ()]), L(MESH, [("y",), ()], ("x",), reduce))
        assert "pad_to_partial" not in kinds(other) and "all_gather" in kinds(other)
        prove_plan(other)


def test_scalars_and_empty_dims():
    mesh = MeshSpec.make("x=2,y=2")
    scalar = plan_reshard(mesh, (), L(mesh, [], ("x",), "sum"), L(mesh, []))
    assert kinds(scalar) == ["all_reduce"] and scalar.bytes == 4
    prove_plan(scalar, every_step=True)
    empty = plan_reshard(mesh, (0, 4), L(mesh, [("x",), ()]), L(mesh, [(), ("x",)]))
    assert kinds(empty) == ["all_to_all"] and empty.bytes == 0
    prove_plan(empty, every_step=True)
