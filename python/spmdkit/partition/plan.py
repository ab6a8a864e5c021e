"""The partitioned program: a list of local steps (an op on local shapes, or a reshard of one
value between two layouts), the layouts of the function's arguments and results, and a summary
of the collectives it runs."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

from ..reshard import Layout, Plan
from ..reshard.steps import COLLECTIVE_KINDS
from .layouts import ProgramMesh


@dataclass
class LocalOp:
    """Run `op` on local shards: operands read in `operand_layouts`, results in `result_layouts`."""
    op: Any
    attrs: dict                      # the op's attributes with global sizes localized
    operand_layouts: list[Layout]
    result_layouts: list[Layout]


@dataclass
class Reshard:
    """Move `value` from layout `plan.source` to `plan.target` with `plan`'s collectives."""
    value: Any
    source: Layout
    target: Layout
    plan: Plan
    reason: str                      # the consumer that needs it ("op 'jax.add'", "result 0")


Step = Union[LocalOp, Reshard]


@dataclass
class Summary:
    collectives: dict[str, int]      # count per kind
    bytes_per_device: float          # bytes one device receives, over the whole program
    cost_us: float                   # modeled time of all collectives
    reshards: int                    # reshard steps, free local ones included

    def __str__(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in self.collectives.items() if n) or "none"
        return (f"collectives: {kinds}; bytes/device {self.bytes_per_device:.0f}; modeled {self.cost_us:.2f} us; "
                f"{self.reshards} reshards")


@dataclass
class PartitionedProgram:
    mesh: ProgramMesh
    function: Any                          # the IR Function it came from
    arg_layouts: list[Layout]
    result_layouts: list[Layout]
    steps: list[Step] = field(default_factory=list)
    results: list[tuple[Any, Layout]] = field(default_factory=list)  # (value, layout) returned

    @property
    def reshards(self) -> list[Reshard]:
        return [s for s in self.steps if isinstance(s, Reshard)]

    def summary(self) -> Summary:
        counts = dict.fromkeys(COLLECTIVE_KINDS, 0)
        nbytes = cost = 0.0
        for r in self.reshards:
            for kind, n in r.plan.collective_counts().items():
                counts[kind] += n
            nbytes += r.plan.bytes
            cost += r.plan.cost_us
        return Summary(counts, nbytes, cost, len(self.reshards))

    def describe(self, limit: Optional[int] = None) -> str:
        """The reshards with their plans, one line each."""
        lines = [str(self.summary())]
        for r in self.reshards[:limit]:
            kinds = ", ".join(s.kind for s in r.plan.steps) or "no-op"
            lines.append(f"  {r.value.type} {r.source} -> {r.target} for {r.reason}: {kinds}; "
                         f"{r.plan.bytes:.0f} B")
        return "\n".join(lines)
