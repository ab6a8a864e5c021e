"""When HiGHS runs out of time, the solver's plan is never worse than running replicated: its
starting plan is the better of the replicated plan and a greedy one (auto/solve.py), so the
incumbent it returns costs no more than that, is reported with its true cost, and fits the
memory limit (GPT on 2x2x2 had returned an incumbent modeled and measured worse than replicated
before the solver started from it). Checked with no time at all, on the MLP step."""
from __future__ import annotations

import pytest
from test_auto_errors import _mlp_step

from spmdkit import core
from spmdkit.auto import tie_results
from spmdkit.auto.cost import AutoCostModel, build_costs, total_cost
from spmdkit.auto.solve import solve
from spmdkit.auto.strategies import build_space

pytestmark = pytest.mark.skipif(not core.contains_spmd_rule("jax.dot_general"), reason="no jax.* rules in this build")
COST = AutoCostModel(flops_per_s=1e9)


@pytest.fixture(scope="module")
def searched():
    program, labels, outs = _mlp_step()
    pinned = [a.sharding is not None for a in program.main.args]
    space = build_space(program, pinned, tie_results(labels, outs, program))
    return space, build_costs(space, COST)


def _replicated(costs) -> list[int]:
    return [k if k >= 0 else 0 for k in costs.replicated]   # a pinned node: its only strategy


def test_out_of_time_is_never_worse_than_the_replicated_plan(searched):
    _, costs = searched
    base = _replicated(costs)
    sol = solve(costs, time_limit_s=0.0)
    assert total_cost(costs, sol.choice) <= total_cost(costs, base) + 1e-9
    assert sol.objective_us == pytest.approx(total_cost(costs, sol.choice))


def test_an_optimal_plan_stays_with_its_true_cost(searched):
    _, costs = searched
    best = solve(costs)
    assert best.status == "Optimal"
    assert best.objective_us == pytest.approx(total_cost(costs, best.choice))
    assert best.objective_us <= total_cost(costs, _replicated(costs)) + 1e-9


def test_out_of_time_under_a_limit_below_the_replicated_plan_fits_it(searched):
    _, costs = searched
    base = _replicated(costs)
    replicated_bytes = sum(float(m[k]) for m, k in zip(costs.memory, base))
    sol = solve(costs, memory_limit=replicated_bytes - 1, time_limit_s=0.0)
    assert sol.choice != base
    assert sum(float(m[k]) for m, k in zip(costs.memory, sol.choice)) <= replicated_bytes - 1
