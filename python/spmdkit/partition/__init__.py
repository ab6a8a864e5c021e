"""spmdkit.partition: from a program whose values carry shardings to a per-device program whose
every collective our planner chose, run inside jax.shard_map (see docs/partition.md)."""
from .complete import complete_forward
from .errors import LocalizeError, PartitionError
from .execute import local_body, to_jax
from .localize import LOCALIZERS, localize
from .partitioner import partition
from .plan import LocalBlock, LocalControlFlow, LocalOp, PartitionedProgram, Reshard, Summary

__all__ = ["LOCALIZERS", "LocalBlock", "LocalControlFlow", "LocalOp", "LocalizeError", "PartitionError",
           "PartitionedProgram", "Reshard", "Summary", "complete_forward", "local_body", "localize", "partition",
           "to_jax"]
