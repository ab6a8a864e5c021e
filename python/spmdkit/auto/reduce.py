"""Exact coarsening before the solver: eliminate nodes of degree <= 2 by dynamic programming.

The problem is a pairwise cost over a graph (node costs per strategy, edge cost matrices). A
node whose edges all go to one neighbour u is folded into u: u's strategy s gets the best of the
node's strategies given s. A node between two neighbours u and w (an elementwise op in a chain,
a reshape, a transpose) becomes one edge u-w whose cost for (s, t) is the best of the node's
strategies given both. Both steps keep the optimum exactly (the classic series/leaf reductions)
and record the argmin, so the eliminated nodes' choices follow from their neighbours' once the
solver has chosen. Alpa merges such ops heuristically; here the merge is exact.

Nodes whose memory differs between strategies are kept when a memory limit is given (their
choice enters the memory row).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .cost import Costs


@dataclass
class Reduced:
    node_cost: dict[int, np.ndarray]                 # remaining nodes
    edges: dict[tuple[int, int], np.ndarray]         # (a, b) with a < b -> matrix over (a's, b's strategies)
    constant: float
    steps: list = field(default_factory=list)        # eliminations, in order, to undo in reverse

    def neighbours(self, n: int) -> list[int]:
        return [b if a == n else a for (a, b) in self.edges if n in (a, b)]


def pairwise(costs: Costs) -> tuple[dict, dict, float]:
    """Node costs and edge matrices over strategies (parallel edges summed, self edges folded)."""
    node = {i: c.astype(float).copy() for i, c in enumerate(costs.node)}
    edges: dict[tuple[int, int], np.ndarray] = {}
    for ec, (s, d) in zip(costs.edges, costs.ends):
        if not ec.matrix.any():
            continue
        m = ec.matrix[np.ix_(ec.src_class, ec.dst_class)]
        if s == d:
            node[s] += np.diag(m)
            continue
        key, m = ((s, d), m) if s < d else ((d, s), m.T)
        edges[key] = edges[key] + m if key in edges else m
    return node, edges, 0.0


def reduce_graph(costs: Costs, keep: set[int]) -> Reduced:
    node, edges, constant = pairwise(costs)
    adj: dict[int, set[int]] = {n: set() for n in node}
    for a, b in edges:
        adj[a].add(b)
        adj[b].add(a)
    for (a, b) in list(edges):   # an end with one strategy: the edge is a cost of the other end
        if len(node[a]) == 1 or len(node[b]) == 1:
            m = edges.pop((a, b))
            if len(node[a]) == 1:
                node[b] = node[b] + m[0, :]
            else:
                node[a] = node[a] + m[:, 0]
            adj[a].discard(b)
            adj[b].discard(a)
    r = Reduced(node, edges, constant)

    def edge(a, b):   # matrix oriented (a's strategies, b's strategies)
        return edges[(a, b)] if a < b else edges[(b, a)].T

    def set_edge(a, b, m):
        if a < b:
            edges[(a, b)] = m
        else:
            edges[(b, a)] = m.T
        adj[a].add(b)
        adj[b].add(a)

    def drop(a, b):
        edges.pop((min(a, b), max(a, b)), None)
        adj[a].discard(b)
        adj[b].discard(a)

    queue = [n for n in node if n not in keep and len(adj[n]) <= 2]
    while queue:
        v = queue.pop()
        if v not in node or v in keep or len(adj[v]) > 2:
            continue
        cv = node[v]
        nbrs = sorted(adj[v])
        if not nbrs:
            k = int(np.argmin(cv))
            r.constant += float(cv[k])
            r.steps.append(("free", v, k))
        elif len(nbrs) == 1:
            u = nbrs[0]
            total = edge(u, v) + cv[None, :]            # (u's strategies, v's)
            best = np.argmin(total, axis=1)
            node[u] = node[u] + total[np.arange(len(best)), best]
            drop(u, v)
            r.steps.append(("leaf", v, u, best))
            queue.append(u)
        else:
            u, w = nbrs
            total = edge(u, v)[:, :, None] + cv[None, :, None] + edge(v, w)[None, :, :]   # (u, v, w)
            best = np.argmin(total, axis=1)
            m = np.take_along_axis(total, best[:, None, :], axis=1)[:, 0, :]
            if w in adj[u]:
                m = m + edge(u, w)
            # the merged edge must not need more pair variables than the edges it replaces
            before = _pairs(edge(u, v)) + _pairs(edge(v, w)) + (_pairs(edge(u, w)) if w in adj[u] else 0) + len(cv)
            if _pairs(m) > before:
                continue
            drop(u, v)
            drop(v, w)
            set_edge(u, w, m)
            r.steps.append(("series", v, u, w, best))
            queue.extend([u, w])
        del node[v]
        del adj[v]
    return r


def expand(r: Reduced, choice: dict[int, int], n_nodes: int) -> list[int]:
    """Every node's strategy from the kept nodes' choices, undoing the eliminations."""
    out = dict(choice)
    for step in reversed(r.steps):
        if step[0] == "free":
            out[step[1]] = step[2]
        elif step[0] == "leaf":
            _, v, u, best = step
            out[v] = int(best[out[u]])
        else:
            _, v, u, w, best = step
            out[v] = int(best[out[u], out[w]])
    return [out[i] for i in range(n_nodes)]


def _pairs(m: np.ndarray) -> int:
    """The pair variables an edge needs: distinct rows times distinct columns."""
    rows = np.unique(m, axis=0)
    return len(rows) * len(np.unique(rows, axis=1).T)


def classes(m: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Identical rows (axis 0) or columns (axis 1) of an edge matrix, merged: (the distinct
    ones as a matrix along that axis, the class of each strategy)."""
    uniq, inverse = np.unique(m if axis == 0 else m.T, axis=0, return_inverse=True)
    return (uniq if axis == 0 else uniq.T), inverse.reshape(-1)
