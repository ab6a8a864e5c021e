"""Every invariant of Shardy's sharding representation, checked against a mesh and a shape.

Each failure raises ShardingVerifyError naming the tensor, the dim (an int, "replicated" or
"unreduced") and the axis. Non-divisible sharding is allowed (the seed allows padding), so the
shape is only checked for rank and for non-negative sizes.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from .axes import AxisRef
from .errors import ShardingError, ShardingVerifyError
from .integers import as_int
from .mesh import Mesh
from .tensor_sharding import REDUCE_TYPES, TensorSharding


def verify(sharding: TensorSharding, mesh: Mesh | Mapping[str, Mesh] | None = None,
           shape_or_rank: int | Iterable[int] | None = None, name: str = "tensor") -> Mesh:
    """Raise ShardingVerifyError if `sharding` breaks an invariant; return the mesh it lives on."""
    if not isinstance(sharding, TensorSharding):
        raise TypeError(f"{name}: expected a TensorSharding, got {type(sharding).__name__}")
    try:
        m = sharding.resolve_mesh(mesh)
    except ShardingError as e:
        raise ShardingVerifyError(str(e), name) from None
    if m.is_maximal:  # Shardy: the whole tensor on one device is written `[]`, whatever its rank
        _check_rank(sharding, shape_or_rank, name, maximal=True)
        if sharding.dims or sharding.replicated or sharding.unreduced:
            raise ShardingVerifyError(f"a sharding on the maximal mesh {m} must be `[]` (no dim shardings) with no "
                                      "replicated or unreduced axes", name)
        return m
    _check_rank(sharding, shape_or_rank, name)
    where = [(i, a) for i, d in enumerate(sharding.dims) for a in d.axes]
    where += [("replicated", a) for a in sharding.replicated] + [("unreduced", a) for a in sharding.unreduced]
    for dim, axis in where:
        _check_axis(axis, m, name, dim)
    _check_used_once(where, m, name)
    _check_coherent(where, m, name)
    for i, d in enumerate(sharding.dims):
        _check_maximal(d.axes, m, name, i)
        if d.priority is not None and d.priority < 0:
            raise ShardingVerifyError(f"priority p{d.priority} is negative; priorities start at p0", name, i)
        if d.priority is not None and d.is_closed and not d.axes:
            raise ShardingVerifyError(f"an empty closed dim sharding cannot have a priority (p{d.priority})", name, i)
    _check_sorted(sharding.replicated, m, name, "replicated")
    _check_maximal(sharding.replicated, m, name, "replicated")
    groups = sharding.unreduced_by_type()
    for kind, axes in groups.items():
        if kind not in REDUCE_TYPES:  # pragma: no cover - the constructor refuses these
            raise ShardingVerifyError(f"unknown reduce type {kind!r}", name, "unreduced")
        _check_sorted(axes, m, name, "unreduced")
        _check_maximal(axes, m, name, "unreduced")
    return m


def _check_rank(sharding: TensorSharding, shape_or_rank, name: str, maximal: bool = False) -> None:
    if shape_or_rank is None:
        return
    if isinstance(shape_or_rank, (bool, float, str)):
        raise TypeError(f"{name}: shape_or_rank must be an int or a shape, got {shape_or_rank!r}")
    if as_int(shape_or_rank) is not None:
        rank = as_int(shape_or_rank)
    else:
        try:
            shape = list(shape_or_rank)
        except TypeError:
            raise TypeError(f"{name}: shape_or_rank must be an int or a shape, got {shape_or_rank!r}") from None
        for i, n in enumerate(shape):
            if as_int(n) is None or as_int(n) < 0:
                raise ShardingVerifyError(f"shape {shape} has a bad size {n!r}", name, i)
        rank = len(shape)
    if rank != sharding.rank and not maximal:
        raise ShardingVerifyError(f"the sharding has {sharding.rank} dim shardings but the tensor has rank {rank}",
                                  name)


def _check_axis(axis: AxisRef, mesh: Mesh, name: str, dim) -> None:
    if not mesh.has_axis(axis.name):
        known = ", ".join(f'"{n}"' for n in mesh.axis_names) or "none: the mesh has no axes"
        raise ShardingVerifyError(f"axis \"{axis.name}\" is not in mesh {mesh} (axes: {known})", name, dim, str(axis))
    if not axis.is_sub_axis:
        return
    n, m, k = mesh.axis_size(axis.name), axis.pre_size, axis.size
    if m < 1:
        raise ShardingVerifyError(f"sub-axis pre-size {m} must be at least 1", name, dim, str(axis))
    if k <= 1:
        raise ShardingVerifyError(f"sub-axis size {k} must be greater than 1", name, dim, str(axis))
    if n % (m * k):
        raise ShardingVerifyError(f"pre-size * size = {m * k} does not divide the size {n} of axis \"{axis.name}\"",
                                  name, dim, str(axis))
    if m == 1 and k == n:
        raise ShardingVerifyError(f"sub-axis covers all of axis \"{axis.name}\" (size {n}); write the full axis",
                                  name, dim, str(axis))


def _check_used_once(where, mesh: Mesh, name: str) -> None:
    for j, (dim_b, b) in enumerate(where):
        for dim_a, a in where[:j]:
            if a.overlaps(b, mesh):
                first = f"dim {dim_a}" if isinstance(dim_a, int) else dim_a
                what = "is used twice" if a == b else f"overlaps {a}"
                raise ShardingVerifyError(f"axis {b} {what} (already in {first})", name, dim_b, str(b))


def _check_coherent(where, mesh: Mesh, name: str) -> None:
    """Sub-axes of one axis must come from one factorization of it: their bounds, sorted, each
    divide the next. Shardy accepts "x":(1)2 with "x":(3)2 on x=12, but no reshape of the mesh
    gives both (devices would hold unequal numbers of copies), so we refuse it. Stricter than
    Shardy on purpose."""
    cuts: dict[str, set[int]] = {}
    for dim, a in where:
        lo, hi = a.interval(mesh)
        bounds = cuts.setdefault(a.name, {1, mesh.axis_size(a.name)})
        bounds |= {lo, hi}
        chain = sorted(bounds)
        if any(b % a_ for a_, b in zip(chain, chain[1:])):
            raise ShardingVerifyError(f"sub-axes of \"{a.name}\" do not come from one factorization of it "
                                      f"(bounds {chain} do not each divide the next)", name, dim, str(a))


def _check_maximal(axes, mesh: Mesh, name: str, dim) -> None:
    """Adjacent sub-axes of one axis (major then minor) must be written as one."""
    for a, b in zip(axes, axes[1:]):
        if a.can_merge(b, mesh):
            merged = a.merge(b, mesh)
            raise ShardingVerifyError(f"sub-axes {a} and {b} are consecutive; write them as {merged}",
                                      name, dim, str(b))


def _check_sorted(axes, mesh: Mesh, name: str, dim: str) -> None:
    for a, b in zip(axes, axes[1:]):
        if b.mesh_order_key(mesh) < a.mesh_order_key(mesh):
            raise ShardingVerifyError(f"axes must be listed in mesh order ({', '.join(mesh.axis_names)}), "
                                      f"sub-axes by pre-size: {b} comes after {a}", name, dim, str(b))


def is_valid(sharding: TensorSharding, mesh=None, shape_or_rank=None) -> bool:
    try:
        verify(sharding, mesh, shape_or_rank)
    except ShardingVerifyError:
        return False
    return True
