"""The cost model of the search, in microseconds per step on one device.

- Per edge (a value from its producer to one consumer): the reshard planner's alpha-beta cost
  (`spmdkit.reshard.plan_reshard`, whole mesh axes, as the partitioner plans) from the layout
  the producer's strategy gives the value to the layout the consumer's strategy reads it in. A
  partial result read whole is priced here: its all-reduce or reduce-scatter is the edge's.
- Per op: its compute time on local shapes, `local_flops / flops_per_s` (a contraction counts 2
  FLOPs per multiply-add, any other op one per element of its factor space).
- Per argument and result: its bytes per device (for the memory limit). A tied result (a
  training step's new params, coming back in the params' layout) counts once more.

Each consumer pays for its own reshard; the partitioner shares one reshard between consumers
that need the same layout, so the model can only overstate (Alpa's model does the same).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from ..partition.partitioner import itemsize
from ..reshard import DEFAULT_COST_MODEL, CostModel, Layout, ReshardError, plan_reshard
from .strategies import SearchSpace, edge_layouts

# an edge whose layouts no plan connects (a dim that does not divide on the way): never chosen
INFEASIBLE_US = 1e9


@dataclass(frozen=True)
class AutoCostModel:
    """`flops_per_s`: one device's compute rate (default 1e12, a CPU core's order is 1e10-1e11,
    a GPU's 1e14); `reshard`: the alpha-beta model per mesh axis (spmdkit.reshard.CostModel:
    87.7 GB/s and 0.6 us within a node of 8 devices, 0.22x and 2.7 us across)."""
    flops_per_s: float = 1e12
    reshard: CostModel = DEFAULT_COST_MODEL

    def compute_us(self, flops: float) -> float:
        return flops / self.flops_per_s * 1e6

    @staticmethod
    def calibrated(mesh, reps: int = 15) -> "AutoCostModel":
        """Compute rate and per-axis collective latency and bandwidth measured on `mesh`'s
        devices (a ProcessMesh, 'dp=2,mp=2' or a jax Mesh; auto/calibrate.py)."""
        from .calibrate import calibrate
        return calibrate(mesh, reps)[0]


DEFAULT_AUTO_COST = AutoCostModel()


@dataclass
class EdgeCost:
    """An edge's costs over distinct layouts: `matrix[p, c]` for the producer's layout class p and
    the consumer's class c; `src_class[s]`, `dst_class[t]` map strategies to classes."""
    matrix: np.ndarray
    src_class: np.ndarray
    dst_class: np.ndarray
    bytes_matrix: np.ndarray


@dataclass
class Costs:
    node: list[np.ndarray]          # per node, per strategy: compute us
    memory: list[np.ndarray]        # per node, per strategy: bytes per device it holds (args, results)
    edges: list[EdgeCost]
    ends: list[tuple[int, int]]     # per edge: (producer node, consumer node)
    plans: dict = field(default_factory=dict)


def _classes(layouts):
    index: dict = {}
    cls = np.array([index.setdefault(l, len(index)) for l in layouts], dtype=np.int64)
    return list(index), cls


def local_bytes(value, layout, pm) -> float:
    parts = math.prod(pm.spec.size(a) for axes in layout.dims for a in axes)
    return math.prod(value.type.shape) * itemsize(value) / parts


def _only_slices(src, dst) -> bool:
    """Whether dst only splits further what src holds whole (each dim's axes extend src's)."""
    return not src.partial and not dst.partial and all(b[:len(a)] == a for a, b in zip(src.dims, dst.dims))


def _interchangeable(pm, reshard: CostModel) -> list[dict[str, str]]:
    """The renamings of mesh axes that change no cost: permutations among axes of one size and
    one link (latency and bandwidth). A plan's cost is the same under them, so one plan per
    orbit is enough (2x2x2 within a node: 6 layouts pairs share one plan)."""
    groups: dict = {}
    for a in pm.spec.names:
        groups.setdefault((pm.spec.size(a), reshard.link(pm.spec, a)), []).append(a)
    out = [{}]
    for members in groups.values():
        out = [dict(r, **dict(zip(members, p))) for r in out for p in itertools.permutations(members)]
    return [r for r in out if any(k != v for k, v in r.items())]


def _canonical(pm, relabelings, src, dst):
    """The least (by text) renaming of the pair (src, dst) under the cost-preserving renamings."""
    if not relabelings:
        return src, dst
    best, best_key = (src, dst), repr((src, dst))
    for r in relabelings:
        pair = tuple(Layout.make(pm.spec, [[r.get(a, a) for a in d] for d in l.dims],
                                 [r.get(a, a) for a in l.partial], l.reduce) for l in (src, dst))
        key = repr(pair)
        if key < best_key:
            best, best_key = pair, key
    return best


def build_costs(space: SearchSpace, model: AutoCostModel = DEFAULT_AUTO_COST) -> Costs:
    pm = space.pm
    plans: dict = {}

    relabelings = _interchangeable(pm, model.reshard)

    def plan(value, src, dst):
        if _only_slices(src, dst):   # the planner's answer too: local slices cost nothing
            return 0.0, 0.0
        src, dst = _canonical(pm, relabelings, src, dst)
        key = (tuple(value.type.shape), itemsize(value), src, dst)
        hit = plans.get(key)
        if hit is None:
            try:
                p = plan_reshard(pm.spec, value.type.shape, src, dst, itemsize(value), model.reshard, sub_axes=False)
                hit = (p.cost_us, p.bytes)
            except ReshardError:
                hit = (INFEASIBLE_US, float("inf"))
            plans[key] = hit
        return hit

    node_costs, memory = [], []
    for n in space.nodes:
        node_costs.append(np.array([model.compute_us(s.local_flops) for s in n.strategies]))
        if n.kind == "arg":
            copies = 1 + len(n.tied_results)
            memory.append(np.array([copies * local_bytes(n.value, s.results[0], pm) for s in n.strategies]))
        elif n.kind == "result":
            memory.append(np.array([local_bytes(n.value, s.operands[0], pm) for s in n.strategies]))
        else:
            memory.append(np.zeros(len(n.strategies)))
    edges = []
    for e in space.edges:
        produced, needed = edge_layouts(space, e)
        src_layouts, src_class = _classes(produced)
        dst_layouts, dst_class = _classes(needed)
        m = np.zeros((len(src_layouts), len(dst_layouts)))
        b = np.zeros_like(m)
        for p, a in enumerate(src_layouts):
            for c, z in enumerate(dst_layouts):
                if a != z:
                    m[p, c], b[p, c] = plan(e.value, a, z)
        edges.append(EdgeCost(m, src_class, dst_class, b))
    return Costs(node_costs, memory, edges, [(e.src, e.dst) for e in space.edges], plans)


def total_cost(costs: Costs, choice) -> float:
    """The modeled time of one strategy per node (the objective the solver minimizes)."""
    total = sum(float(c[choice[i]]) for i, c in enumerate(costs.node))
    for ec, (s, d) in zip(costs.edges, costs.ends):
        total += float(ec.matrix[ec.src_class[choice[s]], ec.dst_class[choice[d]]])
    return total


def total_bytes(costs: Costs, choice) -> float:
    """Bytes one device receives over every edge's reshard."""
    return sum(float(ec.bytes_matrix[ec.src_class[choice[s]], ec.dst_class[choice[d]]])
               for ec, (s, d) in zip(costs.edges, costs.ends))
