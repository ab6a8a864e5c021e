"""Bad input to the search gives typed errors naming the leaf or op; a memory limit no plan
meets says the smallest one that works, and that figure is feasible."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from spmdkit import core
from spmdkit.auto import AutoShardingError, auto_shard, tie_results
from spmdkit.ir import ProgramBuilder, import_jax
from spmdkit.models import mlp
from spmdkit.sharding import Mesh

pytestmark = pytest.mark.skipif(not core.contains_spmd_rule("jax.dot_general"), reason="no jax.* rules in this build")

MESH = Mesh({"dp": 2, "mp": 2})
BATCH = '#sdy.sharding<@mesh, [{"dp"}, {}]>'


def _mlp_step():
    params = mlp.init_params(jax.random.PRNGKey(0))
    x, y = mlp.example_batch(jax.random.PRNGKey(1))
    n = len(params)
    program = import_jax(mlp.train_step, params, x, y, inline_calls=True, meshes={"mesh": MESH},
                         arg_shardings=[None] * n + [BATCH, BATCH])
    labels = [f"args[0]['{k}']" for k in sorted(params)] + ["args[1]", "args[2]"]
    outs = [f"out[0]['{k}']" for k in sorted(params)] + ["out[1]"]
    return program, labels, outs


def test_results_tie_to_the_arguments_they_are_labelled_like():
    program, labels, outs = _mlp_step()
    assert tie_results(labels, outs, program) == {0: 0, 1: 1, 2: 2, 3: 3}


def test_memory_limit_below_every_plan_names_the_smallest_feasible_figure():
    program, labels, outs = _mlp_step()
    ties = tie_results(labels, outs, program)
    with pytest.raises(AutoShardingError, match="smallest any plan needs is") as info:
        auto_shard(program, ties=ties, memory_limit=100)
    least = info.value.smallest_feasible
    assert least > 100
    program, _, _ = _mlp_step()
    report = auto_shard(program, ties=ties, memory_limit=least)   # the figure is feasible, exactly
    assert report.memory_bytes <= least + 1e-6


def test_memory_limit_shards_params_that_replicated_would_not_fit():
    program, labels, outs = _mlp_step()
    ties = tie_results(labels, outs, program)
    free = auto_shard(program, ties=ties)
    program, _, _ = _mlp_step()
    limited = auto_shard(program, ties=ties, memory_limit=free.memory_bytes * 0.6)
    assert limited.memory_bytes <= free.memory_bytes * 0.6
    shards = [v.sharding for v in program.main.args[:4]]
    assert any(any(d.axes for d in s.dims) for s in shards)


def test_pinned_placement_that_cannot_divide_names_the_argument():
    program = import_jax(lambda a: jnp.tanh(a), jnp.ones((3, 4)), inline_calls=True, meshes={"mesh": MESH},
                         arg_shardings=[BATCH])
    with pytest.raises(AutoShardingError, match=r"%arg0.*dim 0 of size 3"):
        auto_shard(program)


def test_op_without_a_rule_is_named():
    pb = ProgramBuilder()
    pb.mesh("mesh", {"dp": 2, "mp": 2})
    f = pb.function("main")
    x = f.arg((8, 4))
    y = f.op("custom.frobnicate", [x], {}, result_types=[((8, 4), "f32")])  # no rule, no dialect
    f.ret(y)
    with pytest.raises(AutoShardingError, match="custom.frobnicate"):
        auto_shard(pb.build(verify=False))


@pytest.mark.parametrize("limit", [0, -5, "2GB", True])
def test_bad_memory_limit(limit):
    program = import_jax(lambda a: jnp.tanh(a), jnp.ones((4, 4)), inline_calls=True, meshes={"mesh": MESH})
    with pytest.raises(AutoShardingError, match="memory_limit"):
        auto_shard(program, memory_limit=limit)
