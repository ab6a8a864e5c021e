"""Automatic sharding (issue 17): per op the ways its rule's factor table lets it be split, per
edge the reshard planner's cost between them, one mixed-integer program (HiGHS) picks the
cheapest consistent plan; the program comes back annotated for the partitioner (docs/auto.md).

    from spmdkit.auto import auto_shard
    report = auto_shard(program, memory_limit=2e9); print(report); print(program)
"""
from .cost import DEFAULT_AUTO_COST, AutoCostModel
from .errors import AutoShardingError
from .meshes import MeshSearch, mesh_shapes, search_meshes
from .report import SearchReport
from .search import auto_shard, parallelize_hook, set_default_cost, tie_results

__all__ = ["AutoCostModel", "AutoShardingError", "DEFAULT_AUTO_COST", "MeshSearch", "SearchReport", "auto_shard",
           "mesh_shapes", "parallelize_hook", "search_meshes", "set_default_cost", "tie_results"]
