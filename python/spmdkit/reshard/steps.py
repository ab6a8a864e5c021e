"""The moves between layouts: one collective (or one local op) on one mesh axis each.

From a layout, `moves(...)` lists every step that can be taken and the layout it leads to. A
collective runs over a group A of one or more mesh axes at once (linearised in the order given,
first major), as one XLA collective:

  all_gather(A, d)        A is a minor-most run of dim d's axes; dim d loses it
  reduce_scatter(A, d)    A are partial (sum/avg); A becomes dim d's minor-most run
  all_reduce(A)           A are partial; they become replicated
  all_to_all(A, d -> e)   A is a minor-most run of dim d; it becomes dim e's minor-most run
  collective_permute(A)   same per-dim block counts, axes reassigned (e.g. {"x","y"} -> {"y","x"})
  slice(a, d)             a replicates; a becomes the minor axis of dim d (local, free)
  make_partial(a)         a replicates; a becomes partial (local, free: see docs/reshard.md)
  pad_to_partial(a, d)    a is dim d's minor axis; it becomes partial-sum: each device zero-pads
                          its block to the gathered size (local, free; the sum is the gather)

Only minor-most axes of a dim can be gathered or moved: gathering a major one would leave each
device a strided set of blocks, which no layout describes.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace

from .cost import CostModel
from .layout import Layout, MeshSpec

LOCAL_KINDS = ("slice", "make_partial", "pad_to_partial")
COLLECTIVE_KINDS = ("all_gather", "reduce_scatter", "all_reduce", "all_to_all", "collective_permute")


@dataclass(frozen=True)
class Step:
    kind: str
    axes: tuple[str, ...]
    before: Layout
    after: Layout
    dim: int | None = None          # the dim gathered/scattered/sliced; all_to_all's source dim
    dim_to: int | None = None       # all_to_all's target dim
    bytes: float = 0.0              # bytes one device receives
    cost_us: float = 0.0
    pairs: tuple[tuple[int, int], ...] = field(default=(), compare=False)  # permute: (src, dst) ids

    def describe(self, axes_names=None) -> str:
        """e.g. all_to_all(x: dim 0 -> dim 1); `axes_names` replaces the axes as printed."""
        axes = ",".join(self.axes if axes_names is None else axes_names)
        if self.kind == "all_to_all":
            return f"all_to_all({axes}: dim {self.dim} -> dim {self.dim_to})"
        if self.dim is not None:
            return f"{self.kind}({axes}, dim {self.dim})"
        if self.kind in ("all_reduce", "make_partial"):
            return f"{self.kind}({axes}, {self.before.reduce or self.after.reduce})"
        return f"{self.kind}({axes})"


def local_bytes(mesh: MeshSpec, layout: Layout, shape, itemsize: int) -> int:
    return math.prod(layout.local_shape(mesh, shape)) * itemsize


def _replace_dim(dims, d, axes):
    return dims[:d] + (tuple(axes),) + dims[d + 1:]


def moves(mesh: MeshSpec, layout: Layout, shape, itemsize: int, cost: CostModel,
          target_partial: tuple[str, ...] = (), target_reduce: str | None = None, target_dims=None):
    """Every step from `layout`; make_partial only onto the target's partial axes; permutes as
    `permuted_layouts` lists them (toward `target_dims` when there are many sharded axes)."""
    B = local_bytes(mesh, layout, shape, itemsize)
    local = layout.local_shape(mesh, shape)
    dims, partial = layout.dims, layout.partial
    used = layout.used_axes()
    out = []

    def step(kind, axes, after, dim=None, dim_to=None, nbytes=0.0):
        c = 0.0 if kind in LOCAL_KINDS else cost.collective_us(mesh, kind, axes, nbytes)
        out.append(Step(kind, tuple(axes), layout, after, dim, dim_to, float(nbytes), c))

    def group(axes):
        return math.prod(mesh.size(a) for a in axes)

    # partial axes: all-reduce any subset; reduce-scatter any ordered subset into a dim
    for k in range(1, len(partial) + 1):
        for subset in itertools.combinations(partial, k):
            n = group(subset)
            rest = tuple(p for p in partial if p not in subset)
            red = layout.reduce if rest else None
            step("all_reduce", subset, Layout(dims, rest, red), nbytes=2 * (n - 1) / n * B)
            if layout.reduce not in ("sum", "avg"):
                continue  # XLA can, but JAX has no max/min reduce-scatter: all-reduce then slice
            for order in itertools.permutations(subset):
                for d in range(layout.rank):
                    if local[d] % n == 0:
                        step("reduce_scatter", order, Layout(_replace_dim(dims, d, dims[d] + order), rest, red),
                             dim=d, nbytes=(n - 1) / n * B)
    # sharded axes: gather, or move to another dim, any minor-most run of a dim's axes
    for d, axes in enumerate(dims):
        a = axes[-1] if axes else None
        if a in target_partial and target_reduce == "sum" and (not partial or layout.reduce == "sum"):
            new_partial = tuple(p for p in mesh.names if p in partial or p == a)
            step("pad_to_partial", (a,), Layout(_replace_dim(dims, d, axes[:-1]), new_partial, "sum"), dim=d)
        for k in range(1, len(axes) + 1):
            run, n = axes[-k:], group(axes[-k:])
            gathered = _replace_dim(dims, d, axes[:-k])
            step("all_gather", run, Layout(gathered, partial, layout.reduce), dim=d, nbytes=(n - 1) * B)
            for e in range(layout.rank):
                if e != d and local[e] % n == 0:
                    moved = _replace_dim(gathered, e, gathered[e] + run)
                    step("all_to_all", run, Layout(moved, partial, layout.reduce), dim=d, dim_to=e,
                         nbytes=(n - 1) / n * B)
    # replicated axes: local slice, or make partial (only onto the target's partial axes)
    for a in mesh.names:
        n = mesh.size(a)
        if n == 1 or a in used:
            continue
        for e in range(layout.rank):
            if local[e] % n == 0:
                step("slice", (a,), Layout(_replace_dim(dims, e, dims[e] + (a,)), partial, layout.reduce), dim=e)
        if a in target_partial and (not partial or layout.reduce == target_reduce):
            new_partial = tuple(p for p in mesh.names if p in partial or p == a)
            step("make_partial", (a,), Layout(dims, new_partial, target_reduce))

    positions = _digit_positions(mesh, layout)
    for after in permuted_layouts(mesh, layout, target_dims):
        pa = _digit_positions(mesh, after)
        involved = tuple(a for a in mesh.names if positions.get(a) != pa.get(a))
        out.append(Step("collective_permute", involved, layout, after, bytes=float(B),
                        cost_us=cost.collective_us(mesh, "collective_permute", involved, B)))
    return out


def _digit_positions(mesh: MeshSpec, layout: Layout) -> dict[str, tuple[int, int]]:
    """axis -> (dim, stride): a device's index on the axis is (block // stride) % size."""
    out = {}
    for d, axes in enumerate(layout.dims):
        stride = 1
        for a in reversed(axes):
            out[a] = (d, stride)
            stride *= mesh.size(a)
    return out


def with_pairs(mesh: MeshSpec, step: Step) -> Step:
    """The step with its device pairs filled in (only permutes have any; computed only for the
    steps of a chosen plan, as it walks every device)."""
    if step.kind != "collective_permute" or step.pairs:
        return step
    return replace(step, pairs=permute_pairs(mesh, step.before, step.after))


EXHAUSTIVE_PERMUTE_AXES = 4   # beyond this many sharded axes, not every reassignment is tried


def permuted_layouts(mesh: MeshSpec, layout: Layout, target_dims=None):
    """Layouts with the same blocks per dim and the same sharding axes, reassigned; each device
    then holds exactly some other device's shard, so one collective_permute gets there. Up to
    EXHAUSTIVE_PERMUTE_AXES sharded axes every reassignment is listed (k! of them); beyond, only
    swaps of two axes and the reassignment in the target's order (so the search stays fast on
    big meshes, where a plan may then not be the cheapest)."""
    sharded = [a for axes in layout.dims for a in axes]
    if len(sharded) < 2:
        return []
    counts = [math.prod(mesh.size(a) for a in axes) for axes in layout.dims]
    if len(sharded) <= EXHAUSTIVE_PERMUTE_AXES:
        orders = itertools.permutations(sharded)
    else:
        orders = []
        for i, j in itertools.combinations(range(len(sharded)), 2):
            swapped = list(sharded)
            swapped[i], swapped[j] = swapped[j], swapped[i]
            orders.append(swapped)
        if target_dims is not None:
            first = [a for axes in target_dims for a in axes if a in sharded]
            orders.append(first + [a for a in sharded if a not in first])
    seen, out = {layout.dims}, []
    for order in orders:
        dims, i = [], 0
        for c in counts:
            group, prod = [], 1
            while prod < c and i < len(order):
                group.append(order[i])
                prod *= mesh.size(order[i])
                i += 1
            if prod != c:
                break
            dims.append(tuple(group))
        else:
            dims = tuple(dims)
            if dims not in seen:
                seen.add(dims)
                out.append(Layout(dims, layout.partial, layout.reduce))
    return out


def permute_pairs(mesh: MeshSpec, before: Layout, after: Layout) -> tuple[tuple[int, int], ...]:
    """(source device, destination device) for every device whose shard must move."""
    sharded = {a for axes in before.dims for a in axes}
    where = {}
    for dev in range(mesh.num_devices):
        c = mesh.coords(dev)
        key = tuple(before.block(mesh, c, d)[0] for d in range(before.rank))
        key += tuple(c[a] for a in mesh.names if a not in sharded)
        where[key] = dev
    pairs = []
    for dev in range(mesh.num_devices):
        c = mesh.coords(dev)
        key = tuple(after.block(mesh, c, d)[0] for d in range(after.rank))
        key += tuple(c[a] for a in mesh.names if a not in sharded)
        src = where[key]
        if src != dev:
            pairs.append((src, dev))
    return tuple(pairs)
