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
    node_cost: dict[int, np.ndarray]                 # remaining nodes, over their remaining strategies
    edges: dict[tuple[int, int], np.ndarray]         # (a, b) with a < b -> matrix over (a's, b's strategies)
    constant: float
    orig: dict[int, np.ndarray] = field(default_factory=dict)   # per remaining node: each strategy's original index
    steps: list = field(default_factory=list)        # eliminations, in order, to undo in reverse
    pruned: int = 0                                  # strategies dropped as dominated

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


def _dominated(own: np.ndarray, mats: list[np.ndarray], memory: np.ndarray | None) -> np.ndarray:
    """The strategies s of a node for which another remaining strategy t is never worse whatever
    the neighbours choose (dead-end elimination, Goldstein's criterion): own[s] - own[t] + the sum
    over incident edges of min over the neighbour's c of (M[s, c] - M[t, c]) >= 0, and t holds no
    more memory. The relation is transitive, so dropping such s one at a time against the
    strategies still kept keeps an optimum."""
    k = len(own)
    diff = own[:, None] - own[None, :]              # diff[s, t]: the least t saves over s
    # a cheap upper bound first: the min over c is at most its value at s's cheapest c
    bound = diff.copy()
    for m in mats:
        at = np.argmin(m, axis=1)
        bound += m[np.arange(k), at][:, None] - m[:, at].T
    np.fill_diagonal(bound, -1.0)
    S, T = np.nonzero(bound >= 0)
    exact = diff[S, T]
    for m in mats:
        if not len(S):
            break
        exact = exact + (m[S] - m[T]).min(1)
    diff = np.full((k, k), -1.0)
    diff[S, T] = exact
    ok = diff >= 0
    if memory is not None:
        ok &= memory[:, None] >= memory[None, :]
    np.fill_diagonal(ok, False)
    out = np.zeros(k, dtype=bool)
    for s in np.flatnonzero(ok.any(1)):
        if (ok[s] & ~out).any():
            out[s] = True
    return out


def reduce_graph(costs: Costs, keep: set[int]) -> Reduced:
    """Exact reductions until none applies: an edge whose matrix is a sum of a row and a column
    term becomes node costs; a strategy some other strategy of its node never does worse than
    (node cost, every incident edge row, and memory for kept nodes) is dropped; a node with one
    strategy becomes node costs of its neighbours; nodes of degree <= 2 outside `keep` are
    eliminated by dynamic programming (leaf and series steps)."""
    node, edges, constant = pairwise(costs)
    memory = {n: np.asarray(costs.memory[n], dtype=float) for n in keep}
    orig = {n: np.arange(len(c)) for n, c in node.items()}
    adj: dict[int, set[int]] = {n: set() for n in node}
    for a, b in edges:
        adj[a].add(b)
        adj[b].add(a)
    r = Reduced(node, edges, constant, orig)
    queue: list[int] = []
    dirty: set[int] = set(node)

    def edge(a, b):   # matrix oriented (a's strategies, b's strategies)
        return edges[(a, b)] if a < b else edges[(b, a)].T

    def drop(a, b):
        edges.pop((min(a, b), max(a, b)), None)
        adj[a].discard(b)
        adj[b].discard(a)
        queue.extend((a, b))

    def set_edge(a, b, m):
        if a < b:
            edges[(a, b)] = m
        else:
            edges[(b, a)] = m.T
        adj[a].add(b)
        adj[b].add(a)
        fold_if_additive(a, b)

    def fold_if_additive(a, b):
        """m[s, t] = row[s] + col[t] (one strategy at an end is the common case): node costs."""
        m = edge(a, b)
        row, col = m[:, 0], m[0, :] - m[0, 0]
        if np.abs(m - row[:, None] - col[None, :]).max() <= 1e-12 * (1.0 + np.abs(m).max()):
            node[a] = node[a] + row
            node[b] = node[b] + col
            drop(a, b)
            dirty.update((a, b))

    def prune(v):
        out = _dominated(node[v], [edge(v, u) for u in adj[v]], memory[v][orig[v]] if v in memory else None)
        if not out.any():
            return
        kept = ~out
        r.pruned += int(out.sum())
        node[v] = node[v][kept]
        orig[v] = orig[v][kept]
        for u in list(adj[v]):
            set_edge(v, u, edge(v, u)[kept, :])
            dirty.add(u)
        queue.append(v)

    for (a, b) in list(edges):
        if (a, b) in edges:
            fold_if_additive(a, b)
    queue.extend(node)
    while queue or dirty:
        while queue:
            v = queue.pop()
            if v not in node or v in keep or len(adj[v]) > 2:
                continue
            if _eliminate(r, v, node, orig, adj, edge, drop, set_edge):
                del node[v]
                del orig[v]
                del adj[v]
                dirty.discard(v)
        while dirty and not queue:
            v = dirty.pop()
            if v in node and len(node[v]) > 1:
                prune(v)
    return r


def _eliminate(r, v, node, orig, adj, edge, drop, set_edge) -> bool:
    """One leaf or series step on v (degree <= 2), recorded in original strategy indices."""
    cv = node[v]
    nbrs = sorted(adj[v])
    if not nbrs:
        k = int(np.argmin(cv))
        r.constant += float(cv[k])
        r.steps.append(("free", v, int(orig[v][k])))
        return True
    if len(nbrs) == 1:
        u = nbrs[0]
        total = edge(u, v) + cv[None, :]            # (u's strategies, v's)
        best = np.argmin(total, axis=1)
        node[u] = node[u] + total[np.arange(len(best)), best]
        r.steps.append(("leaf", v, u, orig[u], orig[v][best]))
        drop(u, v)
        return True
    u, w = nbrs
    total = edge(u, v)[:, :, None] + cv[None, :, None] + edge(v, w)[None, :, :]   # (u, v, w)
    best = np.argmin(total, axis=1)
    m = np.take_along_axis(total, best[:, None, :], axis=1)[:, 0, :]
    if w in adj[u]:
        m = m + edge(u, w)
    # the merged edge must not need more pair variables than the edges it replaces
    before = _pairs(edge(u, v)) + _pairs(edge(v, w)) + (_pairs(edge(u, w)) if w in adj[u] else 0) + len(cv)
    if _pairs(m) > before:
        return False
    r.steps.append(("series", v, u, w, orig[u], orig[w], orig[v][best]))
    drop(u, v)
    drop(v, w)
    set_edge(u, w, m)
    return True


def expand(r: Reduced, choice: dict[int, int], n_nodes: int) -> list[int]:
    """Every node's original strategy index from the kept nodes' choices (positions among their
    remaining strategies), undoing the eliminations."""
    out = {n: int(r.orig[n][k]) for n, k in choice.items()}
    for step in reversed(r.steps):
        if step[0] == "free":
            out[step[1]] = step[2]
        elif step[0] == "leaf":
            _, v, u, orig_u, best = step
            out[v] = int(best[np.searchsorted(orig_u, out[u])])
        else:
            _, v, u, w, orig_u, orig_w, best = step
            out[v] = int(best[np.searchsorted(orig_u, out[u]), np.searchsorted(orig_w, out[w])])
    return [out[i] for i in range(n_nodes)]


def _distinct_rows(m: np.ndarray) -> int:
    m = np.ascontiguousarray(m)
    return len({row.tobytes() for row in m})


def _pairs(m: np.ndarray) -> int:
    """The pair variables an edge needs: distinct rows times distinct columns."""
    return _distinct_rows(m) * _distinct_rows(m.T)


def classes(m: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Identical rows (axis 0) or columns (axis 1) of an edge matrix, merged: (the distinct
    ones as a matrix along that axis, the class of each strategy, numbered by first appearance)."""
    rows = np.ascontiguousarray(m if axis == 0 else m.T)
    index: dict = {}
    inverse = np.array([index.setdefault(row.tobytes(), len(index)) for row in rows], dtype=np.int64)
    first = np.zeros(len(index), dtype=np.int64)
    first[inverse[::-1]] = np.arange(len(rows))[::-1]
    uniq = rows[first]
    return (uniq if axis == 0 else uniq.T), inverse
