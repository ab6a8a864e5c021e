"""One mixed-integer program over the search space, solved by HiGHS (highspy).

Variables: a binary x[n, s] per node n and strategy s (sum over s = 1; nodes with one strategy
are constants). Per edge whose cost matrix is not zero, over the distinct layouts the two ends
give the value (classes p of the producer, c of the consumer), continuous y[p, c] >= 0 with
sum_c y[p, c] = sum of x over the producer's strategies of class p, and sum_p y[p, c] likewise
for the consumer: with x integral, y is the product of the two one-hot choices (the transport
form of Alpa's edge variables, tighter in its LP relaxation than y >= x_p + x_c - 1). An edge
with one class at an end adds its row of costs to the other end's strategies instead. Objective:
compute per strategy plus edge costs. Memory: one row, sum of bytes per device <= the limit.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .cost import Costs
from .errors import AutoShardingError


@dataclass
class Solution:
    choice: list[int]           # strategy index per node
    objective_us: float         # modeled time per step (the MIP's objective)
    status: str                 # HiGHS model status ("Optimal", "Time limit reached", ...)
    gap: float                  # relative MIP gap HiGHS reports (0 when proven optimal)
    solve_s: float              # seconds in HiGHS
    variables: int
    rows: int


def _quiet_highs():
    """A Highs instance; its constructor prints a banner to the process's stdout (fd 1, below
    Python's sys.stdout), which would corrupt a command's printed program: silenced."""
    import os
    import sys

    import highspy
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            h = highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    h.setOptionValue("output_flag", False)
    return h


def smallest_memory(costs: Costs) -> float:
    """The least bytes per device any plan holds (nodes' memories are independent)."""
    return float(sum(m.min() for m in costs.memory if len(m)))


def solve(costs: Costs, memory_limit: float | None = None, time_limit_s: float = 30.0,
          mip_rel_gap: float = 0.0) -> Solution:
    import highspy

    nodes = len(costs.node)
    node_cost = [c.astype(float).copy() for c in costs.node]
    constant = 0.0
    # fold edges with a single class at one end into the other end's strategy costs
    pair_edges = []
    for ec, (s, d) in zip(costs.edges, costs.ends):
        if not ec.matrix.any():
            continue
        if s == d:  # a result tied to the argument it returns unchanged
            node_cost[s] += ec.matrix[ec.src_class, ec.dst_class]
        elif ec.matrix.shape[0] == 1:
            node_cost[d] += ec.matrix[0, ec.dst_class]
        elif ec.matrix.shape[1] == 1:
            node_cost[s] += ec.matrix[ec.src_class, 0]
        else:
            pair_edges.append((ec, s, d))
    col = {}
    cost, integer = [], []
    for n in range(nodes):
        if len(node_cost[n]) == 1:
            constant += float(node_cost[n][0])
            continue
        col[n] = len(cost)
        cost.extend(node_cost[n].tolist())
        integer.extend([True] * len(node_cost[n]))
    rows_start, rows_index, rows_value, lower, upper = [0], [], [], [], []

    def row(index, value, lo, hi):
        rows_index.extend(index)
        rows_value.extend(value)
        rows_start.append(len(rows_index))
        lower.append(lo)
        upper.append(hi)

    for n, c0 in col.items():
        k = len(node_cost[n])
        row(range(c0, c0 + k), [1.0] * k, 1.0, 1.0)
    for ec, s, d in pair_edges:
        P, C = ec.matrix.shape
        y0 = len(cost)
        cost.extend(ec.matrix.reshape(-1).tolist())
        integer.extend([False] * (P * C))
        for p in range(P):
            members = np.flatnonzero(ec.src_class == p)
            row([y0 + p * C + c for c in range(C)] + [col[s] + int(m) for m in members],
                [1.0] * C + [-1.0] * len(members), 0.0, 0.0)
        for c in range(C):
            members = np.flatnonzero(ec.dst_class == c)
            row([y0 + p * C + c for p in range(P)] + [col[d] + int(m) for m in members],
                [1.0] * P + [-1.0] * len(members), 0.0, 0.0)
    if memory_limit is not None:
        fixed = sum(float(costs.memory[n][0]) for n in range(nodes) if n not in col)
        least = smallest_memory(costs)
        if least > memory_limit:
            raise AutoShardingError(f"no plan fits memory_limit={memory_limit:.0f} bytes per device: the smallest "
                                    f"any plan needs is {least:.0f} bytes (arguments and results)",
                                    smallest_feasible=least)
        idx = [col[n] + s for n in col for s in range(len(costs.memory[n])) if costs.memory[n][s]]
        val = [float(costs.memory[n][s]) for n in col for s in range(len(costs.memory[n])) if costs.memory[n][s]]
        row(idx, val, -highspy.kHighsInf, float(memory_limit) - fixed)
    if not cost:  # every node has one strategy
        return Solution([0] * nodes, constant, "Optimal", 0.0, 0.0, 0, 0)

    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(cost), len(lower)
    lp.col_cost_ = np.array(cost)
    lp.col_lower_ = np.zeros(len(cost))
    lp.col_upper_ = np.array([1.0 if i else highspy.kHighsInf for i in integer])
    lp.row_lower_, lp.row_upper_ = np.array(lower), np.array(upper)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array(rows_start, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(rows_index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(rows_value)
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = len(cost), len(lower)
    lp.integrality_ = [highspy.HighsVarType.kInteger if i else highspy.HighsVarType.kContinuous for i in integer]
    lp.offset_ = constant
    h = _quiet_highs()
    h.setOptionValue("time_limit", float(time_limit_s))
    h.setOptionValue("mip_rel_gap", float(mip_rel_gap))
    h.setOptionValue("threads", 1)
    h.passModel(lp)
    t0 = time.perf_counter()
    h.run()
    elapsed = time.perf_counter() - t0
    status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    values = np.asarray(h.getSolution().col_value)
    if status == "Infeasible" or len(values) != len(cost):
        raise AutoShardingError(f"the solver found no plan ({status})")
    choice = [0] * nodes
    for n, c0 in col.items():
        choice[n] = int(np.argmax(values[c0:c0 + len(node_cost[n])]))
    gap = float(info.mip_gap) if np.isfinite(info.mip_gap) else float("inf")
    return Solution(choice, float(info.objective_function_value), status, max(gap, 0.0), elapsed,
                    len(cost), len(lower))


def exhaustive(costs: Costs, memory_limit: float | None = None, limit: int = 2_000_000) -> tuple[float, list[int]]:
    """The best objective over every combination of strategies (for tests: tiny programs only),
    computed without the solver: the cost tensor summed by broadcasting, then its minimum."""
    sizes = [len(c) for c in costs.node]
    total = int(np.prod(sizes, dtype=np.float64))
    if total > limit:
        raise ValueError(f"{total} combinations is too many to enumerate")
    n = len(sizes)
    grid = np.zeros(sizes)

    def along(axes, values):
        shape = [1] * n
        for a, k in zip(axes, values.shape):
            shape[a] = k
        return values.reshape(shape) if len(axes) == 1 else values

    for i, c in enumerate(costs.node):
        grid = grid + along([i], c)
    for ec, (s, d) in zip(costs.edges, costs.ends):
        m = ec.matrix[np.ix_(ec.src_class, ec.dst_class)]   # strategies x strategies
        shape = [1] * n
        if s == d:
            grid = grid + along([s], np.diag(m))
            continue
        shape[s], shape[d] = sizes[s], sizes[d]
        grid = grid + (m if s < d else m.T).reshape(shape)
    if memory_limit is not None:
        mem = np.zeros(sizes)
        for i, m in enumerate(costs.memory):
            mem = mem + along([i], m)
        grid = np.where(mem <= memory_limit + 1e-9, grid, np.inf)
    flat = int(np.argmin(grid))
    return float(grid.reshape(-1)[flat]), [int(i) for i in np.unravel_index(flat, sizes)]
