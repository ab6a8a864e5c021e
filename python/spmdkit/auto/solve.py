"""One mixed-integer program over the search space, solved by HiGHS (highspy).

First the exact reductions of reduce.py (additive edges, dominated strategies, nodes of degree
<= 2: chains of elementwise ops, reshapes, transposes, leaves). On what remains: a binary x[n, s]
per node n and strategy s (sum over s = 1). Per edge, over the distinct rows and columns of its
cost matrix (classes p of one end, c of the other), continuous y[p, c] >= 0 with sum_c y[p, c] =
sum of x over that end's strategies of class p, and sum_p y[p, c] likewise for the other end:
with x integral, y is the product of the two one-hot choices (the transport form of Alpa's edge
variables, tighter in its LP relaxation than y >= x_p + x_c - 1). Objective: compute per
strategy plus edge costs. Memory: one row, sum of bytes per device <= the limit.

Most y are zero in any plan, and on these problems the LP relaxation is usually integral. So
HiGHS first solves the relaxation by delayed column generation: the LP with the x columns and,
per edge, the pairs of a reference plan and each class's cheapest partner; HiGHS's row duals
price every missing y (reduced cost M[p, c] - dual of row p - dual of column c), the negative
ones are added and the LP re-solved from its basis, until none is negative: then the restricted
LP's optimum is the full relaxation's. If its x is integral, that plan is optimal for the MILP
(no plan costs less than the relaxation), with gap 0. Otherwise HiGHS solves the full MILP.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .cost import Costs
from .errors import AutoShardingError
from .reduce import Reduced, classes, expand, reduce_graph


@dataclass
class Solution:
    choice: list[int]           # strategy index per node
    objective_us: float         # modeled time per step (the MIP's objective)
    status: str                 # HiGHS model status ("Optimal", "Time limit reached", ...)
    gap: float                  # relative MIP gap HiGHS reports (0 when proven optimal)
    solve_s: float              # seconds in HiGHS
    variables: int
    rows: int
    reduced: tuple[int, int, int] = (0, 0, 0)   # nodes, edges, strategies left for the MILP after reduce.py
    reduce_s: float = 0.0                        # seconds in the exact reductions


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
    h.setOptionValue("output_flag", bool(os.environ.get("SPMDKIT_HIGHS_LOG")))
    return h


def smallest_memory(costs: Costs) -> float:
    """The least bytes per device any plan holds (nodes' memories are independent)."""
    return float(sum(m.min() for m in costs.memory if len(m)))


def solve(costs: Costs, memory_limit: float | None = None, time_limit_s: float = 30.0,
          mip_rel_gap: float = 0.0, column_generation: bool = True) -> Solution:
    n_nodes = len(costs.node)
    if memory_limit is not None:
        least = smallest_memory(costs)
        if least > memory_limit:
            raise AutoShardingError(f"no plan fits memory_limit={memory_limit:.0f} bytes per device: the smallest "
                                    f"any plan needs is {least:.0f} bytes (arguments, results and activations)",
                                    smallest_feasible=least)
        keep = {i for i, m in enumerate(costs.memory) if len(m) > 1 and np.ptp(m) > 0}
    else:
        keep = set()
    t0 = time.perf_counter()
    r = reduce_graph(costs, keep)
    reduce_s = time.perf_counter() - t0
    reduced = (len(r.node_cost), len(r.edges), sum(len(c) for c in r.node_cost.values()))
    prob = _Problem(r, costs, memory_limit)
    if not prob.n_x:  # everything was eliminated exactly
        return Solution(expand(r, {n: 0 for n in r.node_cost}, n_nodes), prob.constant, "Optimal", 0.0, 0.0, 0, 0,
                        reduced, reduce_s)
    t0 = time.perf_counter()
    end = t0 + time_limit_s

    def result(kept, objective, status, gap, columns):
        return Solution(expand(r, kept, n_nodes), objective, status, gap, time.perf_counter() - t0, columns,
                        prob.n_rows, reduced, reduce_s)

    bound, start, best = None, None, None
    if column_generation:
        rel = _relaxation(prob, time_limit_s)
        if rel.kept is not None:   # the relaxation's optimum is a plan: optimal
            return result(rel.kept, rel.objective, "Optimal", 0.0, rel.columns_used)
        bound, start = rel.bound, rel.start
        # the MILP over the columns generated: optimal when it meets the relaxation's bound
        kept, objective, status, _ = _milp(prob, end - time.perf_counter(), mip_rel_gap, rel.columns, start)
        used = prob.n_x + sum(len(c) for c in rel.columns)
        if kept is not None:
            if bound is not None and objective - bound <= 1e-9 * max(1.0, abs(objective)):
                return result(kept, objective, "Optimal", 0.0, used)
            best = (kept, objective, used)
            start = kept
    if end - time.perf_counter() >= 1.0 and prob.n_x + prob.n_y <= FULL_MILP_MAX_COLUMNS:
        kept, objective, status, gap = _milp(prob, end - time.perf_counter(), mip_rel_gap, None, start)
        if kept is not None and (best is None or objective <= best[1]):
            if bound is not None and status != "Optimal":
                gap = min(gap, _gap(objective, bound))
            return result(kept, objective, status, gap, prob.n_x + prob.n_y)
    if best is None:
        raise AutoShardingError(f"the solver found no plan within time_limit_s={time_limit_s:g} "
                                f"({prob.n_x} strategy and {prob.n_y} pair variables after the exact reductions)")
    kept, objective, used = best
    return result(kept, objective, "Time limit reached", _gap(objective, bound), used)


# beyond this many columns the full MILP is not tried after the relaxation's own MILP (it could not
# even be built in the time given)
FULL_MILP_MAX_COLUMNS = 2_000_000


def _gap(objective: float, bound: float | None) -> float:
    if bound is None:
        return float("inf")
    return max(objective - bound, 0.0) / max(abs(objective), 1e-12)


class _Problem:
    """The MILP's pieces: x columns per node with several strategies, per edge its distinct cost
    matrix and the rows of its two marginals, the memory row."""

    def __init__(self, r: Reduced, costs: Costs, memory_limit):
        self.r = r
        self.replicated = costs.replicated
        self.constant = r.constant
        self.col: dict[int, int] = {}
        x_cost = []
        for n, c in r.node_cost.items():
            if len(c) == 1:
                self.constant += float(c[0])
                continue
            self.col[n] = sum(len(x) for x in x_cost)
            x_cost.append(c)
        self.n_x = sum(len(x) for x in x_cost)
        self.x_cost = np.concatenate(x_cost) if x_cost else np.zeros(0)
        # rows: one per node, then per edge its P row marginals and C column marginals, then memory
        self.edges = []          # (a, b, a_class, b_class, mat, first row)
        row = len(self.col)
        for (a, b), m in r.edges.items():   # both ends have several strategies (single ones were folded)
            rows_m, a_class = classes(m, 0)
            mat, b_class = classes(rows_m, 1)
            self.edges.append((a, b, a_class, b_class, mat, row))
            row += mat.shape[0] + mat.shape[1]
        self.n_y = sum(e[4].size for e in self.edges)
        self.memory = None
        if memory_limit is not None:   # a node's memory over its remaining strategies (eliminated ones hold one)
            n_nodes = len(costs.node)
            mem = {n: costs.memory[n][r.orig[n]] if n in r.orig else costs.memory[n][:1] for n in range(n_nodes)}
            fixed = sum(float(mem[n][0]) for n in range(n_nodes) if n not in self.col)
            self.memory = (np.concatenate([mem[n] for n in self.col] or [np.zeros(0)]), float(memory_limit) - fixed)
            row += 1
        self.n_rows = row

    def x_matrix(self):
        """The x columns (column-wise): node row +1, each incident edge's marginal row of its class -1."""
        entries = [[] for _ in range(self.n_x)]
        for i, (n, c0) in enumerate(self.col.items()):
            for s in range(len(self.r.node_cost[n])):
                entries[c0 + s].append((i, 1.0))
        for a, b, a_class, b_class, mat, row in self.edges:
            P = mat.shape[0]
            for s, p in enumerate(a_class):
                entries[self.col[a] + s].append((row + int(p), -1.0))
            for t, c in enumerate(b_class):
                entries[self.col[b] + t].append((row + P + int(c), -1.0))
        if self.memory is not None:
            for j, v in enumerate(self.memory[0]):
                if v:
                    entries[j].append((self.n_rows - 1, float(v)))
        start = np.cumsum([0] + [len(e) for e in entries])
        index = np.array([i for e in entries for i, _ in e], dtype=np.int32)
        value = np.array([v for e in entries for _, v in e])
        return start, index, value

    def row_bounds(self):
        import highspy
        lower = np.zeros(self.n_rows)
        upper = np.zeros(self.n_rows)
        lower[:len(self.col)] = upper[:len(self.col)] = 1.0
        if self.memory is not None:
            lower[-1], upper[-1] = -highspy.kHighsInf, self.memory[1]
        return lower, upper

    def y_columns(self, e: int, ps, cs):
        """Cost, start, index, value of y[p, c] columns of edge e (two entries each)."""
        _, _, _, _, mat, row = self.edges[e]
        P = mat.shape[0]
        index = np.empty(2 * len(ps), dtype=np.int32)
        index[0::2] = row + ps
        index[1::2] = row + P + cs
        return mat[ps, cs], index

    def objective(self, kept: dict[int, int]) -> float:
        total = self.constant + sum(float(self.x_cost[c0 + kept[n]]) for n, c0 in self.col.items())
        for a, b, a_class, b_class, mat, _ in self.edges:
            total += float(mat[a_class[kept[a]], b_class[kept[b]]])
        return total

    def greedy(self, sweeps: int = 3) -> dict[int, int]:
        """A plan to start from (not a bound): the cheaper of each node's cheapest strategy and
        the replicated plan (where reductions kept it), each improved by a few sweeps of iterated
        conditional modes (each node's best strategy given its neighbours')."""
        cheapest = {n: int(np.argmin(c)) for n, c in self.r.node_cost.items()}
        whole = dict(cheapest)
        for n in whole:
            if n < len(self.replicated) and self.replicated[n] >= 0:
                where = np.flatnonzero(self.r.orig[n] == self.replicated[n])
                if len(where):
                    whole[n] = int(where[0])
        plans = [self._improve(k, sweeps) for k in (cheapest, whole)]
        return min(plans, key=self.objective)

    def _improve(self, kept: dict[int, int], sweeps: int) -> dict[int, int]:
        kept = dict(kept)
        incident: dict[int, list] = {n: [] for n in self.col}
        for e in self.edges:
            incident[e[0]].append(e)
            incident[e[1]].append(e)
        for _ in range(sweeps):
            changed = False
            for n, c0 in self.col.items():
                total = self.x_cost[c0:c0 + len(self.r.node_cost[n])].copy()
                for a, b, a_class, b_class, mat, _ in incident[n]:
                    if a == n:
                        total += mat[a_class, b_class[kept[b]]]
                    else:
                        total += mat[a_class[kept[a]], b_class]
                best = int(np.argmin(total))
                if total[best] < total[kept[n]]:
                    kept[n], changed = best, True
            if not changed:
                break
        return kept

    def fits(self, kept: dict[int, int]) -> bool:
        """Whether a plan meets the memory row."""
        if self.memory is None:
            return True
        held = sum(float(self.memory[0][c0 + kept[n]]) for n, c0 in self.col.items())
        return held <= self.memory[1] + 1e-9 * max(1.0, abs(self.memory[1]))

    def kept_from(self, x: np.ndarray) -> dict[int, int]:
        kept = {n: 0 for n in self.r.node_cost}
        for n, c0 in self.col.items():
            kept[n] = int(np.argmax(x[c0:c0 + len(self.r.node_cost[n])]))
        return kept


def _lp(prob: _Problem, y_cost, y_index, integral: bool):
    """A HighsLp: the x columns, then y columns (two entries each)."""
    import highspy
    xs, xi, xv = prob.x_matrix()
    n_y = len(y_cost)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = prob.n_x + n_y, prob.n_rows
    lp.col_cost_ = np.concatenate([prob.x_cost, y_cost])
    lp.col_lower_ = np.zeros(lp.num_col_)
    lp.col_upper_ = np.concatenate([np.ones(prob.n_x), np.full(n_y, highspy.kHighsInf)])
    lp.row_lower_, lp.row_upper_ = prob.row_bounds()
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.concatenate([xs, xs[-1] + 2 * np.arange(1, n_y + 1)]).astype(np.int32)
    lp.a_matrix_.index_ = np.concatenate([xi, y_index]).astype(np.int32)
    lp.a_matrix_.value_ = np.concatenate([xv, np.ones(2 * n_y)])
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = lp.num_col_, lp.num_row_
    if integral:
        lp.integrality_ = [highspy.HighsVarType.kInteger] * prob.n_x + [highspy.HighsVarType.kContinuous] * n_y
    lp.offset_ = prob.constant
    return lp


@dataclass
class _Relaxed:
    kept: dict | None              # the plan, when the relaxation's optimum is one (then optimal)
    objective: float
    bound: float | None            # the relaxation's optimum (None: HiGHS stopped before it)
    columns: list                  # per edge, the (p, c) pairs generated, as an array of rows
    columns_used: int
    start: dict | None             # a plan to start the MILP from (rounded or the reference)


def _relaxation(prob: _Problem, time_limit_s: float) -> _Relaxed:
    """The LP relaxation by column generation from a reference plan (`_Problem.greedy`) and
    each class's cheapest partner."""
    t_end = time.perf_counter() + time_limit_s
    reference = prob.greedy()
    chosen = []        # per edge: set of (p, c) already in the LP
    costs, index = [], []
    for e, (a, b, a_class, b_class, mat, _) in enumerate(prob.edges):
        P, C = mat.shape
        ps = np.concatenate([np.arange(P), np.argmin(mat, axis=0), [a_class[reference[a]]]])
        cs = np.concatenate([np.argmin(mat, axis=1), np.arange(C), [b_class[reference[b]]]])
        pairs = set(zip(ps.tolist(), cs.tolist()))
        chosen.append(pairs)
        ps, cs = (np.array(v) for v in zip(*sorted(pairs)))
        c, i = prob.y_columns(e, ps, cs)
        costs.append(c)
        index.append(i)

    def stopped(bound, start):
        if not prob.fits(start):   # each node's least memory fits (solve checked the limit)
            start = {n: int(np.argmin(prob.memory[0][c0:c0 + len(prob.r.node_cost[n])])) if n in prob.col else 0
                     for n, c0 in [(n, prob.col.get(n, 0)) for n in prob.r.node_cost]}
        for e, (a, b, a_class, b_class, _, _) in enumerate(prob.edges):   # the start plan stays possible
            chosen[e].add((int(a_class[start[a]]), int(b_class[start[b]])))
        columns = [np.array(sorted(c), dtype=np.int64).reshape(-1, 2) for c in chosen]
        return _Relaxed(None, float("inf"), bound, columns, n_cols, start if prob.fits(start) else None)

    h = _quiet_highs()
    h.setOptionValue("threads", 1)
    h.setOptionValue("presolve", "off")   # the model changes between solves; presolve finds little here
    h.passModel(_lp(prob, np.concatenate(costs or [np.zeros(0)]), np.concatenate(index or [np.zeros(0, np.int32)]),
                    False))
    n_cols = prob.n_x + sum(len(c) for c in costs)
    while True:
        # HiGHS's time limit counts its run time over every solve of this instance
        h.setOptionValue("time_limit", h.getRunTime() + max(t_end - time.perf_counter(), 0.0))
        h.run()
        if h.modelStatusToString(h.getModelStatus()) != "Optimal":
            return stopped(None, reference)   # out of time (or numerical trouble)
        dual = np.asarray(h.getSolution().row_dual)
        add_cost, add_index = [], []
        for e, (_, _, _, _, mat, row) in enumerate(prob.edges):
            P = mat.shape[0]
            reduced = mat - dual[row:row + P][:, None] - dual[row + P:row + P + mat.shape[1]][None, :]
            # HiGHS's dual feasibility tolerance is 1e-7: a column already in may price at -1e-8
            ps, cs = np.nonzero(reduced < -1e-7 * (1.0 + np.abs(mat)))
            new = [(p, c) for p, c in zip(ps.tolist(), cs.tolist()) if (p, c) not in chosen[e]]
            if new:
                chosen[e].update(new)
                ps, cs = (np.array(v, dtype=np.int64) for v in zip(*new))
                c, i = prob.y_columns(e, ps, cs)
                add_cost.append(c)
                add_index.append(i)
        if not add_cost:
            break
        if time.perf_counter() > t_end:
            return stopped(None, reference)
        c, i = np.concatenate(add_cost), np.concatenate(add_index)
        h.addCols(len(c), c, np.zeros(len(c)), np.full(len(c), np.inf), len(i),
                  (2 * np.arange(len(c))).astype(np.int32), i, np.ones(len(i)))
        n_cols += len(c)
    x = np.asarray(h.getSolution().col_value)[:prob.n_x]
    kept = prob.kept_from(x)
    objective = prob.objective(kept)
    bound = float(h.getInfo().objective_function_value)
    if objective - bound <= 1e-9 * max(1.0, abs(objective)) and prob.fits(kept):
        return _Relaxed(kept, objective, bound, [], n_cols, kept)
    return stopped(bound, kept)


def _milp(prob: _Problem, time_limit_s: float, mip_rel_gap: float, columns=None, start=None):
    """The MILP by HiGHS's branch and cut, over every y or only `columns` (per edge its (p, c)
    pairs), from the plan `start` when given: (kept choice, objective, status, gap)."""
    costs, index = [], []
    for e, (_, _, _, _, mat, _) in enumerate(prob.edges):
        if columns is None:
            ps, cs = np.divmod(np.arange(mat.size), mat.shape[1])
        else:
            ps, cs = columns[e][:, 0], columns[e][:, 1]
        c, i = prob.y_columns(e, ps, cs)
        costs.append(c)
        index.append(i)
    y_cost = np.concatenate(costs) if costs else np.zeros(0)
    y_index = np.concatenate(index) if index else np.zeros(0, dtype=np.int32)
    h = _quiet_highs()
    h.setOptionValue("time_limit", max(float(time_limit_s), 1.0))
    h.setOptionValue("mip_rel_gap", float(mip_rel_gap))
    h.setOptionValue("threads", 1)
    h.passModel(_lp(prob, y_cost, y_index, True))
    if start is not None:   # the x of a plan; HiGHS completes the y
        import highspy
        x = np.zeros(prob.n_x)
        for n, c0 in prob.col.items():
            x[c0 + start[n]] = 1.0
        sol = highspy.HighsSolution()
        sol.col_value = list(x) + [highspy.kHighsInf] * len(y_cost)
        sol.value_valid = True
        h.setSolution(sol)
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    values = np.asarray(h.getSolution().col_value)
    if status == "Infeasible" or len(values) != prob.n_x + len(y_cost) or not np.isfinite(info.objective_function_value) \
            or info.primal_solution_status == 0:
        return None, float("inf"), status, float("inf")   # no plan found (in time, or over these columns)
    gap = float(info.mip_gap) if np.isfinite(info.mip_gap) else float("inf")
    return prob.kept_from(values[:prob.n_x]), float(info.objective_function_value), status, max(gap, 0.0)


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
