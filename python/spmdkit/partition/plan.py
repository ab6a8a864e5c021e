"""The partitioned program: a list of local steps (an op on local shapes, a reshard of one value
between two layouts, a while/case whose regions are partitioned blocks of such steps, or a
shard_map's body run as written), the
layouts of the function's arguments and results, and a summary of the collectives it runs."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

from ..reshard import Layout, Plan
from ..reshard.steps import COLLECTIVE_KINDS
from .layouts import ProgramMesh


@dataclass(slots=True)  # one per op of the program: no per-instance dict
class LocalOp:
    """Run `op` on local shards: operands read in `operand_layouts`, results in `result_layouts`."""
    op: Any
    attrs: dict                      # the op's attributes with global sizes localized; read only:
                                     # the steps of ops in one situation share the dict
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


@dataclass
class LocalBlock:
    """A region partitioned: `args` arrive in `arg_layouts`, `steps` run, `results` leave as
    (value, layout). Values defined outside it are read from the enclosing blocks."""
    args: list
    arg_layouts: list[Layout]
    steps: list["Step"]
    results: list[tuple[Any, Layout]]


@dataclass
class LocalControlFlow:
    """A `stablehlo.while` (blocks: cond, body; operands, block arguments and results all in
    `carry_layouts`) or a `stablehlo.case` (blocks: the branches; operand: the replicated index;
    results in `result_layouts`), run locally with jax.lax.while_loop / jax.lax.switch."""
    op: Any
    operand_layouts: list[Layout]
    result_layouts: list[Layout]
    blocks: list[LocalBlock]
    trip_count: Optional[int] = None   # a while with a counted loop (scan, fori_loop): body runs

    @property
    def is_while(self) -> bool:
        return self.op.name == "stablehlo.while"


@dataclass
class LocalManual:
    """An `sdy.manual_computation` (a shard_map in the step) run as written (manual.py): operands
    in `operand_layouts` (its in_shardings), its body `block` on those local shards, results in
    `result_layouts`. `collectives`: the body's own, (kind, axes, bytes one device receives,
    modeled us, times per call), counted in the summary beside the reshards."""
    op: Any
    operand_layouts: list[Layout]
    result_layouts: list[Layout]
    block: LocalBlock
    collectives: list = field(default_factory=list)


Step = Union[LocalOp, Reshard, LocalControlFlow, LocalManual]


def weighted_reshards(steps, weight: float = 1.0, manual: bool = False):
    """(reshard, times it runs per call) of every reshard in `steps`, nested blocks included: a
    loop body's weight is its trip count (1 when unknown), its condition's one more; of a case's
    branches the one moving the most bytes counts (one of them runs). With `manual`, also
    (LocalManual, times) of every manual computation (its collectives are the user's)."""
    for s in steps:
        if isinstance(s, Reshard) or (manual and isinstance(s, LocalManual)):
            yield s, weight
        elif isinstance(s, LocalControlFlow):
            if s.is_while:
                n = s.trip_count if s.trip_count is not None else 1
                cond, body = s.blocks
                yield from weighted_reshards(cond.steps, weight * (n + 1), manual)
                yield from weighted_reshards(body.steps, weight * n, manual)
            elif s.blocks:
                branches = [list(weighted_reshards(b.steps, weight, manual)) for b in s.blocks]
                yield from max(branches, key=lambda rs: sum(_bytes_of(r) * w for r, w in rs))


def _bytes_of(step) -> float:
    if isinstance(step, LocalManual):
        return sum(c[2] * c[4] for c in step.collectives)
    return step.plan.bytes


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
        """Every reshard step, those in while/case regions included (each once)."""
        out = []

        def collect(steps):
            for s in steps:
                if isinstance(s, Reshard):
                    out.append(s)
                elif isinstance(s, LocalControlFlow):
                    for b in s.blocks:
                        collect(b.steps)
        collect(self.steps)
        return out

    def summary(self) -> Summary:
        """Collectives and bytes per call: a reshard in a loop body counts once per iteration
        (weighted_reshards); `reshards` counts the reshard steps in the program."""
        counts = dict.fromkeys(COLLECTIVE_KINDS, 0)
        nbytes = cost = 0.0
        for r, w in weighted_reshards(self.steps, manual=True):
            if isinstance(r, LocalManual):  # the user's collectives in a shard_map body
                for kind, _, b, us, times in r.collectives:
                    counts[kind] += int(round(times * w))
                    nbytes += b * times * w
                    cost += us * times * w
                continue
            for kind, n in r.plan.collective_counts().items():
                counts[kind] += int(round(n * w))
            nbytes += r.plan.bytes * w
            cost += r.plan.cost_us * w
        return Summary(counts, nbytes, cost, len(self.reshards))

    def describe(self, limit: Optional[int] = None) -> str:
        """The reshards with their plans, one line each; those in a while/case region are indented
        under a line naming it (a loop with its trip count)."""
        lines = [str(self.summary())]
        left = [limit if limit is not None else float("inf")]

        def walk(steps, indent):
            for s in steps:
                if left[0] <= 0:
                    return
                if isinstance(s, Reshard):
                    left[0] -= 1
                    kinds = ", ".join(st.kind for st in s.plan.steps) or "no-op"
                    lines.append(f"{indent}{s.value.type} {s.source} -> {s.target} for {s.reason}: {kinds}; "
                                 f"{s.plan.bytes:.0f} B")
                elif isinstance(s, LocalControlFlow):
                    names = ["cond", "body"] if s.is_while else [f"branch {k}" for k in range(len(s.blocks))]
                    times = f" x{s.trip_count}" if s.is_while and s.trip_count is not None else ""
                    for name, block in zip(names, s.blocks):
                        if any(isinstance(t, (Reshard, LocalControlFlow)) for t in block.steps):
                            lines.append(f"{indent}  in '{s.op.name}' {name}{times}:")
                            walk(block.steps, indent + "    ")
        walk(self.steps, "  ")
        return "\n".join(lines)
