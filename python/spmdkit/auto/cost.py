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

import math
from dataclasses import dataclass, field

import numpy as np

from ..partition.partitioner import itemsize
from ..reshard import DEFAULT_COST_MODEL, CostModel
from .reshard_table import INFEASIBLE, ReshardTable
from .strategies import SearchSpace, end_layouts

# an edge whose layouts no plan connects (a dim that does not divide on the way): never chosen
INFEASIBLE_US = INFEASIBLE[0]


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
    tables: dict = field(default_factory=dict)   # (shape, itemsize) -> ReshardTable
    replicated: list = field(default_factory=list)   # per node: its strategy that splits nothing (-1: none)


def _classes(layouts):
    index: dict = {}
    cls = np.array([index.setdefault(l, len(index)) for l in layouts], dtype=np.int64)
    return list(index), cls


def local_bytes(value, layout, pm) -> float:
    parts = math.prod(pm.spec.size(a) for axes in layout.dims for a in axes)
    return math.prod(value.type.shape) * itemsize(value) / parts


def build_costs(space: SearchSpace, model: AutoCostModel = DEFAULT_AUTO_COST) -> Costs:
    """Node and edge costs. Reshard costs come from one ReshardTable per (shape, itemsize); an
    edge's matrix is built once per (shape, itemsize, producer's layouts, consumer's layouts)
    and shared by every edge with the same ones (a transformer's layers repeat them)."""
    pm = space.pm
    tables: dict = {}
    classes_of: dict = {}     # (id(strategy list), slot, side) -> (distinct layouts, class per strategy)
    matrices: dict = {}

    def layout_classes(node, slot, side):
        key = (id(node.strategies), node.kind == "arg", slot, side)
        hit = classes_of.get(key)
        if hit is None:
            distinct, cls = _classes(end_layouts(node, slot, side))
            hit = classes_of[key] = (tuple(distinct), cls)
        return hit

    node_costs, memory = [], []
    for n in space.nodes:
        node_costs.append(np.array([n.weight * model.compute_us(s.local_flops) for s in n.strategies]))
        if n.kind == "arg":
            copies = 1 + len(n.tied_results)
            memory.append(np.array([copies * local_bytes(n.value, s.results[0], pm) for s in n.strategies]))
        elif n.kind == "result":
            memory.append(np.array([local_bytes(n.value, s.operands[0], pm) for s in n.strategies]))
        else:
            memory.append(np.zeros(len(n.strategies)))
    edges = []
    for e in space.edges:
        src_layouts, src_class = layout_classes(space.nodes[e.src], e.src_slot, "out")
        dst_layouts, dst_class = layout_classes(space.nodes[e.dst], e.dst_slot, "in")
        shape, size = tuple(e.value.type.shape), itemsize(e.value)
        key = (shape, size, src_layouts, dst_layouts)
        hit = matrices.get(key)
        if hit is None:
            table = tables.get((shape, size))
            if table is None:
                table = tables[(shape, size)] = ReshardTable(pm.spec, shape, size, model.reshard)
            hit = matrices[key] = table.matrix(src_layouts, dst_layouts)
        w = e.weight   # a loop body's reshard: once per iteration
        edges.append(EdgeCost(hit[0], src_class, dst_class, hit[1]) if w == 1 else
                     EdgeCost(hit[0] * w, src_class, dst_class, hit[1] * w))
    whole: dict = {}
    for n in space.nodes:
        if id(n.strategies) not in whole:
            whole[id(n.strategies)] = next((i for i, s in enumerate(n.strategies)
                                            if not any(l.partial or any(l.dims) for l in s.operands + s.results)), -1)
    return Costs(node_costs, memory, edges, [(e.src, e.dst) for e in space.edges], tables,
                 [whole[id(n.strategies)] for n in space.nodes])


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
