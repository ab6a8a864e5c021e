"""When HiGHS stops at its time limit, `keep_cheaper` keeps whichever of its incumbent and the
fully replicated plan the model prices lower (within the memory limit), with its true cost: a
time-limited search is never worse than running replicated (GPT on 2x2x2 returned an incumbent
modeled and measured worse than that before this)."""
from __future__ import annotations

import numpy as np
import pytest
from test_auto_errors import _mlp_step

from spmdkit import core
from spmdkit.auto import tie_results
from spmdkit.auto.cost import AutoCostModel, build_costs, total_cost
from spmdkit.auto.search import keep_cheaper, replicated_choice
from spmdkit.auto.solve import Solution, solve
from spmdkit.auto.strategies import build_space

pytestmark = pytest.mark.skipif(not core.contains_spmd_rule("jax.dot_general"), reason="no jax.* rules in this build")
COST = AutoCostModel(flops_per_s=1e9)


@pytest.fixture(scope="module")
def searched():
    program, labels, outs = _mlp_step()
    pinned = [a.sharding is not None for a in program.main.args]
    space = build_space(program, pinned, tie_results(labels, outs, program))
    return space, build_costs(space, COST)


def _timed_out(choice, objective=0.0):
    return Solution(list(choice), objective, "Time limit reached", float("inf"), 30.0, 0, 0)


def test_a_worse_incumbent_gives_way_to_the_replicated_plan(searched):
    space, costs = searched
    worst = [int(np.argmax(c)) for c in costs.node]          # every op on its costliest strategy
    base = replicated_choice(space)
    assert total_cost(costs, worst) > total_cost(costs, base)
    sol = keep_cheaper(space, costs, _timed_out(worst))
    assert sol.choice == base and sol.objective_us == pytest.approx(total_cost(costs, base))
    assert "replicated plan kept" in sol.status


def test_a_better_incumbent_stays_with_its_true_cost(searched):
    space, costs = searched
    best = solve(costs)
    assert best.status == "Optimal"
    assert keep_cheaper(space, costs, best) is best
    sol = keep_cheaper(space, costs, _timed_out(best.choice, objective=-1.0))
    assert sol.choice == best.choice and sol.objective_us == pytest.approx(total_cost(costs, best.choice))


def test_the_replicated_plan_is_not_kept_over_the_memory_limit(searched):
    space, costs = searched
    worst = [int(np.argmax(c)) for c in costs.node]
    base = replicated_choice(space)
    replicated_bytes = sum(float(m[k]) for m, k in zip(costs.memory, base))
    sol = keep_cheaper(space, costs, _timed_out(worst), memory_limit=replicated_bytes - 1)
    assert sol.choice == worst
