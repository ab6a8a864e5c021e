"""What the search decided and why: `SearchReport` (parallelize's `step.search_report`)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .cost import Costs
from .solve import Solution
from .strategies import SearchSpace, layout_text


@dataclass
class OpChoice:
    node: str              # op name and position (`jax.dot_general@0`)
    strategy: str          # factor -> axes, or "replicated"
    compute_us: float
    comm_us: float         # the reshards of its operands (edges into it)
    comm_bytes: float


@dataclass
class SearchReport:
    status: str
    objective_us: float
    gap: float
    solve_s: float
    search_s: float                      # build + costs + solve
    compute_us: float
    comm_us: float
    comm_bytes: float                    # bytes one device receives per step, as modeled
    memory_bytes: float                  # arguments, results and activations per device, as modeled
    memory_limit: float | None
    variables: int
    rows: int
    ops: list[OpChoice] = field(default_factory=list)
    params: dict[str, str] = field(default_factory=dict)     # argument label -> one line: layout and why
    results: dict[str, str] = field(default_factory=dict)    # result label -> layout
    constraints_added: int = 0
    plan_bytes: float | None = None      # bytes of the partitioned program's plan (set by the caller)
    compiled_memory: float | None = None  # parallelize with a memory_limit: the compiled program's bytes per device
    searched_limit: float | None = None   # the limit the kept plan was searched under (lowered when compiled over)

    def __str__(self) -> str:
        lines = [f"search: {self.status}, objective {self.objective_us:.2f} us/step (compute {self.compute_us:.2f}, "
                 f"comm {self.comm_us:.2f} us, {self.comm_bytes:.0f} B/device), gap {self.gap:.2%}, "
                 f"HiGHS {self.solve_s:.3f} s, search {self.search_s:.3f} s, {self.variables} variables, "
                 f"{self.rows} rows",
                 f"memory (args, results, activations) {self.memory_bytes:.0f} B/device"
                 + (f" (limit {self.memory_limit:.0f})" if self.memory_limit is not None else "")]
        if self.plan_bytes is not None:
            lines.append(f"partitioned plan: {self.plan_bytes:.0f} B/device")
        if self.compiled_memory is not None:
            lowered = (f", searched under {self.searched_limit:.0f} after compiling over the limit"
                       if self.searched_limit is not None and self.searched_limit != self.memory_limit else "")
            lines.append(f"compiled program: {self.compiled_memory:.0f} B/device{lowered}")
        lines.append("params:")
        lines.extend(f"  {k}: {v}" for k, v in self.params.items())
        lines.append("ops split:")
        lines.extend(f"  {o.node}: {o.strategy}  compute {o.compute_us:.3f} us, reshards in {o.comm_us:.3f} us "
                     f"({o.comm_bytes:.0f} B)" for o in self.ops if o.strategy != "replicated" or o.comm_bytes)
        return "\n".join(lines)


def build_report(space: SearchSpace, costs: Costs, sol: Solution, labels: list[str], out_labels: list[str],
                 memory_limit, search_s: float, constraints_added: int) -> SearchReport:
    choice = sol.choice
    n_nodes = len(space.nodes)
    comm_in = np.zeros(n_nodes)
    bytes_in = np.zeros(n_nodes)
    for ec, (s, d) in zip(costs.edges, costs.ends):
        p, c = ec.src_class[choice[s]], ec.dst_class[choice[d]]
        comm_in[d] += ec.matrix[p, c]
        bytes_in[d] += ec.bytes_matrix[p, c]
    compute = sum(float(costs.node[i][choice[i]]) for i in range(n_nodes))
    memory = sum(float(costs.memory[i][choice[i]]) for i in range(n_nodes))
    report = SearchReport(sol.status, sol.objective_us, sol.gap, sol.solve_s, search_s, compute,
                          float(comm_in.sum()), float(bytes_in.sum()), memory, memory_limit, sol.variables, sol.rows,
                          constraints_added=constraints_added)
    consumers: dict[int, list[int]] = {}
    for e in space.edges:
        consumers.setdefault(e.src, []).append(e.dst)
    touching: dict[int, list[int]] = {}
    for k, (s, d) in enumerate(costs.ends):
        touching.setdefault(s, []).append(k)
        if d != s:
            touching.setdefault(d, []).append(k)
    for i, n in enumerate(space.nodes):
        s = n.strategies[choice[i]]
        if n.kind in ("op", "carry"):   # a carry: a loop's (a case's) value, in its layout
            report.ops.append(OpChoice(n.name, s.text(n.factor_names), float(costs.node[i][choice[i]]),
                                       float(comm_in[i]), float(bytes_in[i])))
        elif n.kind == "arg":
            label = labels[n.index] if n.index < len(labels) else n.name
            report.params[label] = _why(space, costs, choice, i, touching.get(i, []), consumers.get(i, []))
        else:
            label = out_labels[n.index] if n.index < len(out_labels) else n.name
            report.results[label] = layout_text(s.operands[0]) + (" (given)" if n.pinned else "")
    return report


def _local_cost(costs, choice, i, edges) -> float:
    """Node i's compute plus the edges touching it: what changes when only node i changes."""
    total = float(costs.node[i][choice[i]])
    for k in edges:
        ec, (s, d) = costs.edges[k], costs.ends[k]
        total += float(ec.matrix[ec.src_class[choice[s]], ec.dst_class[choice[d]]])
    return total


def _why(space, costs, choice, i, edges, readers) -> str:
    """One line: the layout, who reads it how, and what the best other layout would cost with
    every other choice fixed."""
    n = space.nodes[i]
    layout = layout_text(n.strategies[choice[i]].results[0])
    mem = costs.memory[i][choice[i]]
    if n.pinned:
        return f"{layout} (given); {mem:.0f} B/device"
    read = []
    for d in dict.fromkeys(readers):
        node = space.nodes[d]
        if node.kind in ("op", "carry"):
            read.append(f"{node.name} {node.strategies[choice[d]].text(node.factor_names)}")
    alternatives = []
    base = _local_cost(costs, choice, i, edges)
    trial = list(choice)
    for k in range(len(n.strategies)):
        if k != choice[i]:
            trial[i] = k
            alternatives.append((_local_cost(costs, trial, i, edges) - base, k))
    line = f"{layout}; {mem:.0f} B/device"
    if read:
        line += "; read by " + ", ".join(read[:3]) + (f" +{len(read) - 3}" if len(read) > 3 else "")
    if alternatives:
        delta, k = min(alternatives)
        line += f"; best other layout {layout_text(n.strategies[k].results[0])} costs {delta:+.3f} us/step (rest fixed)"
    return line
