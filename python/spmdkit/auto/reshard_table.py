"""Reshard costs from one layout to every layout at once: the planner's own search, run to the end.

`spmdkit.reshard.plan_reshard` runs Dijkstra over layouts from a source until it pops the
target. The search's moves do not depend on the target when the target has no partial axes
(make_partial and pad_to_partial only go onto the target's partial axes, and permutes list every
reassignment up to EXHAUSTIVE_PERMUTE_AXES sharded axes), and neither does which layouts it may
pass through (partial axes only go away). Every layout a consumer reads has no partial axes, so
one search from a source, run until the queue is empty, finds plan_reshard's cost and bytes for
every target: the same pushes in the same order with the same tie-breaks, so each target is
popped with the same path it would have been popped with when the search stopped there. Each
layout's moves are listed once per shape and shared between the searches from every source.

Where that argument does not hold (a partial target, a mesh with more than
EXHAUSTIVE_PERMUTE_AXES axes, a search that outgrows MAX_EXPANSIONS), costs come from
plan_reshard itself. test/auto/test_auto_exact.py checks the equality on random layouts.
"""
from __future__ import annotations

import heapq
import itertools

from ..reshard import CostModel, Layout, MeshSpec, ReshardError, plan_reshard
from ..reshard.planner import MAX_EXPANSIONS, _less, _partial_allowed
from ..reshard.steps import COLLECTIVE_KINDS, EXHAUSTIVE_PERMUTE_AXES, moves

INFEASIBLE = (1e9, float("inf"))   # (cost us, bytes) of a pair no plan connects: never chosen


class ReshardTable:
    """(cost us, bytes per device) of resharding one tensor shape between layouts, memoized."""

    def __init__(self, mesh: MeshSpec, shape, itemsize: int, cost: CostModel):
        self.mesh, self.shape, self.itemsize, self.cost = mesh, tuple(shape), itemsize, cost
        self._moves: dict[Layout, list] = {}
        self._from: dict[Layout, dict[Layout, tuple[float, float]]] = {}
        self._single = sum(1 for _, n in mesh.axes if n > 1) <= EXHAUSTIVE_PERMUTE_AXES

    def get(self, src: Layout, dst: Layout) -> tuple[float, float]:
        if src == dst:
            return 0.0, 0.0
        if dst.partial or not self._single:
            return self._one(src, dst)
        reach = self._from.get(src)
        if reach is None:
            reach = self._from[src] = self._search(src)
        hit = reach.get(dst)
        if hit is None:   # unreachable within MAX_EXPANSIONS (or at all): the planner decides
            hit = reach[dst] = self._one(src, dst)
        return hit

    def _one(self, src, dst):
        try:
            p = plan_reshard(self.mesh, self.shape, src, dst, self.itemsize, self.cost, sub_axes=False)
            return p.cost_us, p.bytes
        except ReshardError:
            return INFEASIBLE

    def _out(self, node):
        out = self._moves.get(node)
        if out is None:
            out = self._moves[node] = [(s.after, s.cost_us, s.bytes, s.kind in COLLECTIVE_KINDS)
                                       for s in moves(self.mesh, node, self.shape, self.itemsize, self.cost)]
        return out

    def _search(self, source: Layout) -> dict[Layout, tuple[float, float]]:
        """planner._plan_cached's loop without a target: every layout it pops, with the cost and
        bytes of the path it was popped with. Stops where plan_reshard would give up (its
        MAX_EXPANSIONS), leaving later layouts to plan_reshard."""
        tie = itertools.count()
        best = {source: (0.0, 0, 0)}
        # cost and bytes summed along each layout's best path so far, as Plan sums its steps: the
        # popped key can be an older entry of near-equal cost (the planner's ties are within 1e-9)
        paid = {source: (0.0, 0.0)}
        heap = [(0.0, 0, 0, next(tie), source)]
        done: dict[Layout, tuple[float, float]] = {}
        no_target = Layout(tuple(() for _ in self.shape))
        while heap:
            c, ncoll, nsteps, _, node = heapq.heappop(heap)
            if node in done:
                continue
            if len(done) > MAX_EXPANSIONS:
                break
            done[node] = paid[node]
            for after, step_us, step_bytes, collective in self._out(node):
                if after in done or not _partial_allowed(after, source, no_target):
                    continue
                key = (c + step_us, ncoll + collective, nsteps + 1)
                if after not in best or _less(key, best[after]):
                    best[after] = key
                    paid[after] = (paid[node][0] + step_us, paid[node][1] + step_bytes)
                    heapq.heappush(heap, (*key, next(tie), after))
        return done
