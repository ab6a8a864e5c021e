"""The search's cost model applied to any partitioned program (the auto plan, hand placements
propagated, data parallel...), so that plans found different ways can be ranked by one model and
the ranking compared with measured step times (benchmarks/bench_auto_quality.py).

    cost = modeled_cost(parallelized.partitioned, AutoCostModel.calibrated(mesh))
    cost.total_us, cost.compute_us, cost.comm_us, cost.bytes

Compute: per local op, its rule's factor space on local sizes (a factor's size divided by the
mesh axes of the operand or result dims it spans; a contraction counts 2 FLOPs per multiply-add,
any other op one per element) over `flops_per_s`, as the search prices a strategy. Communication:
the partitioner's reshard plans (the collectives that will run), each collective re-priced
with the model's per-axis links. Constants and ops without a rule
count no compute (`unpriced` counts the latter).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..partition.layouts import replicated, to_spec
from ..partition.plan import LocalControlFlow, LocalOp, PartitionedProgram, Reshard
from ..partition.rules import IDENTITY_OPS, SOURCE_OPS, factor_table
from ..reshard.steps import LOCAL_KINDS
from .cost import DEFAULT_AUTO_COST, AutoCostModel


@dataclass
class PlanCost:
    compute_us: float
    comm_us: float
    bytes: float          # bytes one device receives per step
    collectives: int
    unpriced: int = 0     # local ops whose rule could not be read (no compute counted)

    @property
    def total_us(self) -> float:
        return self.compute_us + self.comm_us


def local_flops(op, operand_layouts, result_layouts, pm) -> float | None:
    """FLOPs of `op` run on the given layouts' local shards; None when it has no rule."""
    if op.name in SOURCE_OPS or op.name in IDENTITY_OPS:
        return 0.0
    try:
        table = factor_table(op, lambda v: to_spec(replicated(v.type.rank), v.type.shape, pm))
    except Exception:
        return None
    sizes = list(table.sizes)
    split = [1] * len(sizes)
    for tensors, layouts in ((table.operands, operand_layouts), (table.results, result_layouts)):
        for dims, layout in zip(tensors, layouts):
            for factors, axes in zip(dims, layout.dims):
                if not axes:
                    continue
                major = next((f for f in factors if sizes[f] > 1), None)
                if major is not None:
                    split[major] = max(split[major], math.prod(pm.spec.size(a) for a in axes))
    kinds = list(table.kinds)
    contraction = any(k == "reduction" for k in kinds) and sum(1 for t in table.operands if t) >= 2
    local = math.prod(max(s // k, 1) for s, k in zip(sizes, split))
    return float(local * (2 if contraction else 1))


def modeled_cost(parted: PartitionedProgram, model: AutoCostModel = DEFAULT_AUTO_COST) -> PlanCost:
    pm = parted.mesh
    out = PlanCost(0.0, 0.0, 0.0, 0)

    def walk(steps, weight):
        for s in steps:
            if isinstance(s, LocalOp):
                flops = local_flops(s.op, s.operand_layouts, s.result_layouts, pm)
                if flops is None:
                    out.unpriced += 1
                else:
                    out.compute_us += weight * model.compute_us(flops)
            elif isinstance(s, Reshard):
                for st in s.plan.steps:
                    if st.kind in LOCAL_KINDS:
                        continue
                    out.comm_us += weight * model.reshard.collective_us(pm.spec, st.kind, st.axes, st.bytes)
                    out.bytes += weight * st.bytes
                    out.collectives += int(weight)
            elif isinstance(s, LocalControlFlow):
                n = s.trip_count if s.is_while and s.trip_count is not None else 1
                for b in s.blocks:
                    walk(b.steps, weight * n)
    walk(parted.steps, 1.0)
    return out
