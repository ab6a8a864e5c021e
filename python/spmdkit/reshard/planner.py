"""The cheapest sequence of steps from one layout to another: Dijkstra over layouts.

Layouts are the nodes, `steps.moves` the edges, the alpha-beta cost of each collective the edge
weight (ties: fewer collectives, then fewer steps). The state space is small (each mesh axis, or
factor of one on small meshes (subaxes.py), is replicated, partial, or at some position of some
dim), so the search is exact; plans are cached per request.
"""
from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass
from functools import lru_cache

from .adapt import as_layout, as_mesh
from .cost import DEFAULT_COST_MODEL, CostModel
from .layout import Layout, MeshSpec, ReshardError, check_divisible
from .steps import COLLECTIVE_KINDS, Step, moves, with_pairs
from .subaxes import prime_factors, coarse_axes, coarse_text, refine


@dataclass(frozen=True)
class Plan:
    """Steps over `mesh`, the user's mesh with axes cut into factors where that helps (sub-axes
    `x:(m)k`; the same devices in the same order). `source`/`target` are over `mesh` too."""
    mesh: MeshSpec
    shape: tuple[int, ...]
    itemsize: int
    source: Layout
    target: Layout
    steps: tuple[Step, ...]
    user_mesh: MeshSpec | None = None
    exact: bool = True   # False: the search hit MAX_EXPANSIONS and this is the naive plan

    @property
    def cost_us(self) -> float:
        return sum(s.cost_us for s in self.steps)

    @property
    def bytes(self) -> float:
        """Bytes one device receives over the whole plan."""
        return sum(s.bytes for s in self.steps)

    def collective_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(COLLECTIVE_KINDS, 0)
        for s in self.steps:
            if s.kind in counts:
                counts[s.kind] += 1
        return counts

    def describe(self) -> str:
        um = self.user_mesh or self.mesh
        lines = [f"reshard {coarse_text(self.source, um)} -> {coarse_text(self.target, um)}  mesh {um}"
                 f"  shape {list(self.shape)}  ({self.itemsize} bytes/element)"]
        if not self.steps:
            lines.append("  (no steps: the layouts are the same)")
        if not self.exact:
            lines.append(f"  (search stopped after {MAX_EXPANSIONS} layouts: the naive plan, not the cheapest)")
        for i, s in enumerate(self.steps, 1):
            local = list(s.after.local_shape(self.mesh, self.shape))
            what = s.describe(coarse_axes(s.axes, um))
            lines.append(f"  {i}. {what:<40} bytes/device {s.bytes:>12.0f}  {s.cost_us:9.3f} us"
                         f"  -> {coarse_text(s.after, um)} local {local}")
        lines.append(f"  total: {len(self.steps)} step(s), {sum(self.collective_counts().values())} collective(s), "
                     f"{self.bytes:.0f} bytes/device, {self.cost_us:.3f} us")
        return "\n".join(lines)

    __str__ = describe


MAX_FACTOR_AXES = 4   # cut axes into prime factors only while the finer mesh has at most this many
MAX_EXPANSIONS = 20000   # layouts the search may expand (~2 ms each) before it settles for the naive plan


def _check_request(mesh, shape, source, target, itemsize):
    """Validated (MeshSpec, shape tuple, source Layout, target Layout); shardings may be given in
    any form `as_layout` reads (Layout, TensorSharding, Shardy text, placements)."""
    mesh = as_mesh(mesh)
    if not isinstance(itemsize, int) or isinstance(itemsize, bool) or itemsize < 1:
        raise ReshardError(f"itemsize must be an integer >= 1, not {itemsize!r}")
    if isinstance(shape, (int, str)) or shape is None:
        raise ReshardError(f"shape must be a sequence of dim sizes, not {shape!r}")
    shape = tuple(shape)
    layouts = []
    for layout in (source, target):
        layout = as_layout(layout, mesh, rank=len(shape))   # re-made: names checked, normal form
        check_divisible(mesh, layout, shape)
        layouts.append(layout)
    return mesh, shape, layouts[0], layouts[1]


def _prepare(mesh, shape, source, target, itemsize, sub_axes):
    """Validates the request and moves it onto the mesh of factors the search runs on."""
    mesh, shape, source, target = _check_request(mesh, shape, source, target, itemsize)
    if sub_axes not in (None, True, False):
        raise ReshardError(f"sub_axes must be None (automatic), True or False, not {sub_axes!r}")
    full = sub_axes if sub_axes is not None else sum(len(prime_factors(n)) for _, n in mesh.axes) <= MAX_FACTOR_AXES
    fine, (src, tgt) = refine(mesh, (source, target), full)
    return mesh, fine, shape, src, tgt


def plan_reshard(mesh, shape, source, target, itemsize: int = 4,
                 cost: CostModel = DEFAULT_COST_MODEL, sub_axes: bool | None = None) -> Plan:
    """The cheapest plan; raises ReshardError for bad or impossible requests. `sub_axes`: let
    collectives use factors of an axis (None: when the mesh has at most MAX_FACTOR_AXES prime
    factors; True: always (slow on big meshes); False: only those the layouts name)."""
    try:  # the same request again (a partitioner asks per value): skip validation too
        key = (mesh, tuple(shape), source, target, itemsize, cost, sub_axes)
        hit = _SEEN.get(key)
    except TypeError:  # an unhashable mesh or shape: validate and plan the long way
        key = hit = None
    if hit is not None:
        return hit
    if not isinstance(cost, CostModel):
        raise ReshardError(f"cost must be a CostModel, not {type(cost).__name__}")
    user, fine, shape, fsource, ftarget = _prepare(mesh, shape, source, target, itemsize, sub_axes)
    plan = _plan_cached(user, fine, shape, fsource, ftarget, itemsize, cost)
    if key is not None:
        if len(_SEEN) >= 4096:
            _SEEN.clear()
        _SEEN[key] = plan
    return plan


_SEEN: dict = {}


@lru_cache(maxsize=4096)
def _plan_cached(user, mesh, shape, source, target, itemsize, cost) -> Plan:
    tie = itertools.count()
    best = {source: (0.0, 0, 0)}
    heap = [(0.0, 0, 0, next(tie), source, None)]
    came: dict[Layout, tuple[Layout, Step]] = {}
    done = set()
    while heap:
        c, ncoll, nsteps, _, node, _ = heapq.heappop(heap)
        if node in done:
            continue
        done.add(node)
        if node == target:
            break
        if len(done) > MAX_EXPANSIONS:   # a huge mesh and rank: answer now rather than in minutes
            steps = _naive_steps(mesh, shape, source, target, itemsize, cost)
            return Plan(mesh, shape, itemsize, source, target, steps, user, exact=False)
        for s in moves(mesh, node, shape, itemsize, cost, target.partial, target.reduce, target.dims):
            if s.after in done or not _partial_allowed(s.after, source, target):
                continue
            key = (c + s.cost_us, ncoll + (s.kind in COLLECTIVE_KINDS), nsteps + 1)
            if s.after not in best or _less(key, best[s.after]):
                best[s.after] = key
                came[s.after] = (node, s)
                heapq.heappush(heap, (*key, next(tie), s.after, None))
    if target not in done:
        raise ReshardError(f"no plan reaches {target} from {source} on mesh {mesh} for shape {list(shape)}")
    steps = []
    node = target
    while node != source:
        node, s = came[node]
        steps.append(with_pairs(mesh, s))
    return Plan(mesh, shape, itemsize, source, target, tuple(reversed(steps)), user)


def _less(a, b) -> bool:
    # costs are floats summed in different orders: treat near-equal costs as ties
    if abs(a[0] - b[0]) > 1e-9 * max(1.0, abs(a[0]), abs(b[0])):
        return a[0] < b[0]
    return a[1:] < b[1:]


def _partial_allowed(layout: Layout, source: Layout, target: Layout) -> bool:
    """Partial axes only ever go away, except the target's own (made partial locally)."""
    return set(layout.partial) <= set(source.partial) | set(target.partial)


def naive_plan(mesh, shape, source: Layout, target: Layout, itemsize: int = 4,
               cost: CostModel = DEFAULT_COST_MODEL, sub_axes: bool | None = None) -> Plan:
    """The baseline: all-reduce every partial axis, all-gather every dim, then slice to the target
    (and make its partial axes), one axis per collective. The planner must never cost more."""
    user, mesh, shape, source, target = _prepare(mesh, shape, source, target, itemsize, sub_axes)
    return Plan(mesh, shape, itemsize, source, target, _naive_steps(mesh, shape, source, target, itemsize, cost), user)


def _naive_steps(mesh, shape, source, target, itemsize, cost) -> tuple[Step, ...]:
    steps, node = [], source

    def take(pred):
        nonlocal node
        for s in moves(mesh, node, shape, itemsize, cost, target.partial, target.reduce, target.dims):
            if pred(s):
                steps.append(s)
                node = s.after
                return
        raise AssertionError(f"naive plan stuck at {node}")  # cannot happen: each move exists

    for a in source.partial:
        take(lambda s, a=a: s.kind == "all_reduce" and s.axes == (a,))
    for d in range(source.rank):
        for a in reversed(source.dims[d]):
            take(lambda s, a=a: s.kind == "all_gather" and s.axes == (a,))
    for d in range(target.rank):
        for a in target.dims[d]:
            take(lambda s, a=a, d=d: s.kind == "slice" and s.axes == (a,) and s.dim == d)
    for a in target.partial:
        take(lambda s, a=a: s.kind == "make_partial" and s.axes == (a,))
    return tuple(steps)


def exhaustive_best_cost(mesh, shape, source: Layout, target: Layout, itemsize: int = 4,
                         cost: CostModel = DEFAULT_COST_MODEL, max_steps: int = 4,
                         sub_axes: bool | None = None) -> float | None:
    """The least cost over every step sequence of at most `max_steps` steps, by relaxing every
    move of every layout reached, round by round (no priority queue); None if none reaches."""
    _, mesh, shape, source, target = _prepare(mesh, shape, source, target, itemsize, sub_axes)
    # Bellman-Ford by rounds: dist[node] = least cost of any sequence of <= k steps
    dist = {source: 0.0}
    for _ in range(max_steps):
        nxt = dict(dist)
        for node, c in dist.items():
            for s in moves(mesh, node, shape, itemsize, cost, target.partial, target.reduce, target.dims):
                if _partial_allowed(s.after, source, target) and c + s.cost_us < nxt.get(s.after, float("inf")):
                    nxt[s.after] = c + s.cost_us
        dist = nxt
    return dist.get(target)
