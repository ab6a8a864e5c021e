"""Reshard costs from one layout to every layout at once: the planner's own search, run to the end.

`spmdkit.reshard.plan_reshard` runs Dijkstra over layouts from a source until it pops the
target. The search's moves do not depend on the target when the target has no partial axes
(make_partial and pad_to_partial only go onto the target's partial axes, and permutes list every
reassignment up to EXHAUSTIVE_PERMUTE_AXES sharded axes), and neither does which layouts it may
pass through (partial axes only go away). Every layout a consumer reads has no partial axes, so
one search from a source, run until the queue is empty, finds plan_reshard's cost and bytes for
every target: the same pushes in the same order with the same tie-breaks, so each target is
popped with the same path it would have been popped with when the search stopped there. The
search from a source runs only until the targets asked for are popped, and resumes when a
later one is asked for. Each layout's moves are listed once per shape and shared between the
searches from every source.

Where that argument does not hold (a partial target, a mesh with more than
EXHAUSTIVE_PERMUTE_AXES axes, a search that outgrows MAX_EXPANSIONS), costs come from
plan_reshard itself. test/auto/test_auto_exact.py checks the equality on random layouts.
"""
from __future__ import annotations

import heapq
import itertools

import numpy as np

from ..reshard import CostModel, Layout, MeshSpec, ReshardError, plan_reshard
from ..reshard.planner import MAX_EXPANSIONS, _less
from ..reshard.steps import COLLECTIVE_KINDS, EXHAUSTIVE_PERMUTE_AXES, moves

INFEASIBLE = (1e9, float("inf"))   # (cost us, bytes) of a pair no plan connects: never chosen


class ReshardTable:
    """(cost us, bytes per device) of resharding one tensor shape between layouts, memoized."""

    def __init__(self, mesh: MeshSpec, shape, itemsize: int, cost: CostModel):
        self.mesh, self.shape, self.itemsize, self.cost = mesh, tuple(shape), itemsize, cost
        self._single = sum(1 for _, n in mesh.axes if n > 1) <= EXHAUSTIVE_PERMUTE_AXES
        # layouts as small integers (hashing and comparing Layouts dominated the searches)
        self.ids: dict[Layout, int] = {}
        self.layouts: list[Layout] = []
        self.partial_bits: list[int] = []
        self._moves: list = []                  # per id: [(after id, cost us, bytes, collective)] or None
        self._from: dict[int, _Search] = {}

    def id(self, layout: Layout) -> int:
        i = self.ids.get(layout)
        if i is None:
            i = self.ids[layout] = len(self.layouts)
            self.layouts.append(layout)
            self.partial_bits.append(sum(1 << self.mesh.names.index(a) for a in layout.partial
                                         if a in self.mesh.names))
            self._moves.append(None)
        return i

    def get(self, src: Layout, dst: Layout) -> tuple[float, float]:
        if src == dst:
            return 0.0, 0.0
        if dst.partial or not self._single or any(a not in self.mesh.names for a in src.partial):
            return self._one(src, dst)
        s = self.id(src)
        search = self._from.get(s)
        if search is None:
            search = self._from[s] = _Search(self, s)
        d = self.id(dst)
        hit = search.until(d)
        if hit is None:   # unreachable within MAX_EXPANSIONS (or at all): the planner decides
            hit = search.done[d] = self._one(src, dst)
        return hit

    def matrix(self, src_layouts, dst_layouts):
        """(cost us, bytes) matrices between two lists of layouts; pairs where dst only splits
        further what src holds whole cost 0 without a search (the planner's answer: local slices)."""
        m = np.zeros((len(src_layouts), len(dst_layouts)))
        b = np.zeros_like(m)
        for p, a in enumerate(src_layouts):
            for c, z in enumerate(dst_layouts):
                if a != z and not _only_slices(a, z):
                    m[p, c], b[p, c] = self.get(a, z)
        return m, b

    def _one(self, src, dst):
        try:
            p = plan_reshard(self.mesh, self.shape, src, dst, self.itemsize, self.cost, sub_axes=False)
            return p.cost_us, p.bytes
        except ReshardError:
            return INFEASIBLE

    def moves_from(self, i: int):
        out = self._moves[i]
        if out is None:
            steps = moves(self.mesh, self.layouts[i], self.shape, self.itemsize, self.cost)
            out = self._moves[i] = [(self.id(s.after), s.cost_us, s.bytes, int(s.kind in COLLECTIVE_KINDS))
                                    for s in steps]
        return out


def _only_slices(src: Layout, dst: Layout) -> bool:
    """Whether dst only splits further what src holds whole (each dim's axes extend src's)."""
    return not src.partial and not dst.partial and all(b[:len(a)] == a for a, b in zip(src.dims, dst.dims))


class _Search:
    """planner._plan_cached's loop without a target, resumable: `until(dst)` pops layouts until
    dst is popped (each with the cost and bytes of the path it was popped with) or the planner
    would have given up (its MAX_EXPANSIONS) or nothing is left. Partial axes only ever go away
    (planner._partial_allowed with a target that has none)."""

    def __init__(self, table: ReshardTable, source: int):
        self.table, self.source = table, source
        self.tie = itertools.count()
        self.best = {source: (0.0, 0, 0)}
        # cost and bytes summed along each layout's best path so far, as Plan sums its steps: the
        # popped key can be an older entry of near-equal cost (the planner's ties are within 1e-9)
        self.paid = {source: (0.0, 0.0)}
        self.heap = [(0.0, 0, 0, next(self.tie), source)]
        self.done: dict[int, tuple[float, float]] = {}
        self.stopped = False

    def until(self, dst: int):
        done, best, paid, heap, tie = self.done, self.best, self.paid, self.heap, self.tie
        bits, not_source = self.table.partial_bits, ~self.table.partial_bits[self.source]
        while dst not in done and heap and not self.stopped:
            c, ncoll, nsteps, _, node = heapq.heappop(heap)
            if node in done:
                continue
            if len(done) > MAX_EXPANSIONS:
                self.stopped = True
                break
            done[node] = here = paid[node]
            for after, step_us, step_bytes, collective in self.table.moves_from(node):
                if after in done or bits[after] & not_source:
                    continue
                key = (c + step_us, ncoll + collective, nsteps + 1)
                old = best.get(after)
                if old is not None and not _less(key, old):   # the planner's own tie rule
                    continue
                best[after] = key
                paid[after] = (here[0] + step_us, here[1] + step_bytes)
                heapq.heappush(heap, (*key, next(tie), after))
        return done.get(dst)
