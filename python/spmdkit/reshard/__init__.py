"""Reshard planning: the cheapest collectives that take a tensor from one sharding to another on
the same mesh, under an alpha-beta cost model per mesh axis, proven on a numpy simulator and run
with JAX collectives inside `jax.shard_map` (see docs/reshard.md)."""
from .adapt import as_layout, as_mesh
from .cost import DEFAULT_COST_MODEL, INTER_NODE, INTRA_NODE, AxisLink, CostModel
from .layout import REDUCE_TYPES, Layout, MeshSpec, ReshardError, parse_layout
from .planner import Plan, exhaustive_best_cost, naive_plan, plan_reshard
from .steps import Step

__all__ = ["AxisLink", "CostModel", "DEFAULT_COST_MODEL", "INTER_NODE", "INTRA_NODE", "Layout", "MeshSpec",
           "Plan", "REDUCE_TYPES", "ReshardError", "Step", "as_layout", "as_mesh", "exhaustive_best_cost",
           "naive_plan", "parse_layout", "plan_reshard"]
