"""One mixed-integer program over the search space, solved by HiGHS (highspy).

First the exact reductions of reduce.py fold away every node of degree <= 2 (chains of
elementwise ops, reshapes, transposes, leaves). On what remains: a binary x[n, s] per node n and
strategy s (sum over s = 1). Per edge, over the distinct rows and columns of its cost matrix
(classes p of one end, c of the other), continuous y[p, c] >= 0 with sum_c y[p, c] = sum of x
over that end's strategies of class p, and sum_p y[p, c] likewise for the other end: with x
integral, y is the product of the two one-hot choices (the transport form of Alpa's edge
variables, tighter in its LP relaxation than y >= x_p + x_c - 1). Objective: compute per
strategy plus edge costs. Memory: one row, sum of bytes per device <= the limit.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .cost import Costs
from .errors import AutoShardingError
from .reduce import classes, expand, reduce_graph


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

    n_nodes = len(costs.node)
    if memory_limit is not None:
        least = smallest_memory(costs)
        if least > memory_limit:
            raise AutoShardingError(f"no plan fits memory_limit={memory_limit:.0f} bytes per device: the smallest "
                                    f"any plan needs is {least:.0f} bytes (arguments and results)",
                                    smallest_feasible=least)
        keep = {i for i, m in enumerate(costs.memory) if len(m) > 1 and np.ptp(m) > 0}
    else:
        keep = set()
    r = reduce_graph(costs, keep)
    col: dict[int, int] = {}
    cost, integer = [], []
    constant = r.constant
    for n, c in r.node_cost.items():
        if len(c) == 1:
            constant += float(c[0])
            continue
        col[n] = len(cost)
        cost.extend(c.tolist())
        integer.extend([True] * len(c))
    rows_start, rows_index, rows_value, lower, upper = [0], [], [], [], []

    def row(index, value, lo, hi):
        rows_index.extend(index)
        rows_value.extend(value)
        rows_start.append(len(rows_index))
        lower.append(lo)
        upper.append(hi)

    for n, c0 in col.items():
        k = len(r.node_cost[n])
        row(range(c0, c0 + k), [1.0] * k, 1.0, 1.0)
    for (a, b), m in r.edges.items():   # both ends have several strategies (single ones were folded)
        rows_m, a_class = classes(m, 0)
        mat, b_class = classes(rows_m, 1)
        P, C = mat.shape
        y0 = len(cost)
        cost.extend(mat.reshape(-1).tolist())
        integer.extend([False] * (P * C))
        for p in range(P):
            members = np.flatnonzero(a_class == p)
            row([y0 + p * C + c for c in range(C)] + [col[a] + int(k) for k in members],
                [1.0] * C + [-1.0] * len(members), 0.0, 0.0)
        for c in range(C):
            members = np.flatnonzero(b_class == c)
            row([y0 + p * C + c for p in range(P)] + [col[b] + int(k) for k in members],
                [1.0] * P + [-1.0] * len(members), 0.0, 0.0)
    if memory_limit is not None:
        fixed = sum(float(costs.memory[n][0]) for n in range(n_nodes) if n not in col)
        idx = [col[n] + s for n in col for s in range(len(costs.memory[n])) if costs.memory[n][s]]
        val = [float(costs.memory[n][s]) for n in col for s in range(len(costs.memory[n])) if costs.memory[n][s]]
        row(idx, val, -highspy.kHighsInf, float(memory_limit) - fixed)
    if not cost:  # everything was eliminated exactly
        return Solution(expand(r, {n: 0 for n in r.node_cost}, n_nodes), constant, "Optimal", 0.0, 0.0, 0, 0)

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
    kept = {n: 0 for n in r.node_cost}
    for n, c0 in col.items():
        kept[n] = int(np.argmax(values[c0:c0 + len(r.node_cost[n])]))
    gap = float(info.mip_gap) if np.isfinite(info.mip_gap) else float("inf")
    return Solution(expand(r, kept, n_nodes), float(info.objective_function_value), status, max(gap, 0.0), elapsed,
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
