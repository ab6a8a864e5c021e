"""A tensor's sharding (Shardy's TensorShardingAttr): per dim an ordered list of axes, open or
closed, with an optional priority; explicitly replicated axes; unreduced (pending-reduction) axes.

Unreduced axes extend Shardy's `unreduced={...}` (a pending SUM) with other reduce types:
`unreduced` lists every pending axis, grouped by reduce type (sum first, then REDUCE_TYPES
order), and `reduce_types` names the type of those that are not "sum". In text the sum axes print as Shardy's `unreduced={...}` and the others as
`unreduced_max={...}`, `unreduced_min={...}`, ... so Shardy-readable text stays exact.
"""
from __future__ import annotations

from math import prod
from typing import Iterable, Mapping

from .axes import AxisRef, as_axis
from .errors import ShardingError
from .integers import as_int
from .mesh import Mesh, symbol

REDUCE_TYPES = ("sum", "avg", "max", "min", "prod", "any", "all")


class DimSharding:
    """The axes sharding one tensor dim, major to minor; open (`?`) or closed; priority p<n>."""

    __slots__ = ("axes", "is_closed", "priority")

    def __init__(self, axes: Iterable[AxisRef | str] = (), is_closed: bool = True, priority: int | None = None):
        if isinstance(axes, (str, AxisRef)):
            axes = (axes,)
        object.__setattr__(self, "axes", tuple(as_axis(a) for a in axes))
        if not isinstance(is_closed, bool):
            raise ShardingError(f"is_closed must be a bool, got {is_closed!r}")
        if priority is not None:
            if as_int(priority) is None:
                raise ShardingError(f"a dim priority must be an integer or None, got {priority!r}")
            priority = as_int(priority)
        object.__setattr__(self, "is_closed", is_closed)
        object.__setattr__(self, "priority", priority)

    def __setattr__(self, key, value):
        raise AttributeError("DimSharding is immutable")

    def __reduce__(self):  # copy/pickle rebuild through __init__ (setattr is closed)
        return (DimSharding, (self.axes, self.is_closed, self.priority))

    @property
    def is_open(self) -> bool:
        return not self.is_closed

    @property
    def effective_priority(self) -> int:
        """The priority propagation uses: an unannotated dim is p0 (the seed's "implicitly p0")."""
        return 0 if self.priority is None else self.priority

    def _key(self):
        return (self.axes, self.is_closed, self.priority)

    def __eq__(self, other):
        return isinstance(other, DimSharding) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self) -> str:
        items = [str(a) for a in self.axes] + ([] if self.is_closed else ["?"])
        return "{" + ", ".join(items) + "}" + ("" if self.priority is None else f"p{self.priority}")

    def __repr__(self) -> str:
        return f"DimSharding({self})"

    def shard_count(self, mesh: Mesh) -> int:
        return prod(a.size_on(mesh) for a in self.axes)


class _FieldOrFactory:
    """`TensorSharding.replicated(mesh, rank)` builds a sharding; `ts.replicated` is the field.

    The brief fixes both names, so class access gives the factory and instance access the value.
    """

    def __init__(self, factory):
        self.factory = factory

    def __set_name__(self, owner, name):
        self.slot = "_" + name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.factory.__get__(None, owner)
        return getattr(obj, self.slot)


def _fully_replicated(cls, mesh: str | Mesh, rank: int, closed: bool = True) -> "TensorSharding":
    return cls(mesh, [DimSharding((), is_closed=closed) for _ in range(rank)])


def _normalize_reduce_types(reduce_types, unreduced) -> tuple[tuple[AxisRef, str], ...]:
    if reduce_types is None:
        return ()
    items = reduce_types.items() if isinstance(reduce_types, Mapping) else reduce_types
    out = []
    for pair in items:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise ShardingError(f"reduce_types entries must be (axis, type) pairs, got {pair!r}")
        axis, kind = as_axis(pair[0]), pair[1]
        if kind not in REDUCE_TYPES:
            raise ShardingError(f"unreduced axis {axis}: unknown reduce type {kind!r} "
                                f"(one of {', '.join(REDUCE_TYPES)})")
        if axis not in unreduced:
            raise ShardingError(f"axis {axis} has a reduce type but is not in unreduced")
        if kind != "sum":
            out.append((axis, kind))
    order = {a: i for i, a in enumerate(unreduced)}
    return tuple(sorted(out, key=lambda p: order[p[0]]))


# Whether this process has made a sharding on an inline Mesh: until it has, no program holds one,
# and lifting inline meshes to named ones (ir.lift_meshes, before every propagation) can skip its
# walk over every op. Shardings are immutable, so the constructor sees every mesh they hold.
_inline_meshes_made = False


def inline_meshes_made() -> bool:
    return _inline_meshes_made


class TensorSharding:
    """An immutable, hashable tensor sharding bound to a mesh (a name or an inline Mesh)."""

    __slots__ = ("mesh", "dims", "_replicated", "unreduced", "reduce_types")

    replicated = _FieldOrFactory(classmethod(_fully_replicated))
    fully_replicated = classmethod(_fully_replicated)

    def __init__(self, mesh: str | Mesh, dims: Iterable[DimSharding] = (),
                 replicated: Iterable[AxisRef | str] = (), unreduced: Iterable[AxisRef | str] = (),
                 reduce_types: Mapping | Iterable | None = None):
        if not isinstance(mesh, (str, Mesh)) or (isinstance(mesh, str) and not mesh):
            raise ShardingError(f"a sharding's mesh must be a mesh name or a Mesh, got {mesh!r}")
        if not isinstance(mesh, str):
            global _inline_meshes_made
            _inline_meshes_made = True
        dims = tuple(dims)
        for d in dims:
            if not isinstance(d, DimSharding):
                raise ShardingError(f"dims must be DimSharding objects, got {d!r}")
        unreduced = tuple(as_axis(a) for a in unreduced)
        set_ = object.__setattr__
        set_(self, "mesh", mesh)
        set_(self, "dims", dims)
        set_(self, "_replicated", tuple(as_axis(a) for a in replicated))
        kinds = _normalize_reduce_types(reduce_types, unreduced)
        # grouped by reduce type (sum first), each group in its given order, as the text lists them
        rank_of = {a: REDUCE_TYPES.index(k) for a, k in kinds}
        unreduced = tuple(sorted(unreduced, key=lambda a: rank_of.get(a, 0)))
        set_(self, "unreduced", unreduced)
        set_(self, "reduce_types", _normalize_reduce_types(kinds, unreduced))

    def __setattr__(self, key, value):
        raise AttributeError("TensorSharding is immutable")

    def __reduce__(self):  # copy/pickle rebuild through __init__ (setattr is closed)
        return (TensorSharding, (self.mesh, self.dims, self._replicated, self.unreduced, self.reduce_types))

    # -- basic properties ----------------------------------------------------------------
    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def mesh_name(self) -> str | None:
        return self.mesh if isinstance(self.mesh, str) else None

    def resolve_mesh(self, mesh: Mesh | Mapping[str, Mesh] | None = None) -> Mesh:
        """The Mesh this sharding lives on: its inline mesh, `mesh`, or `mesh[self.mesh]`."""
        if isinstance(self.mesh, Mesh):
            return self.mesh
        if isinstance(mesh, Mesh):
            return mesh
        if isinstance(mesh, Mapping):
            if self.mesh not in mesh:
                known = ", ".join(sorted(mesh)) or "none"
                raise ShardingError(f"unknown mesh @{self.mesh} (known meshes: {known})")
            found = mesh[self.mesh]
            if not isinstance(found, Mesh):
                raise ShardingError(f"meshes[{self.mesh!r}] is a {type(found).__name__}, not a Mesh")
            return found
        raise ShardingError(f"sharding refers to mesh @{self.mesh}; pass that Mesh (or a dict of meshes)")

    def reduce_type(self, axis: AxisRef | str) -> str:
        """The reduce type pending over an unreduced axis."""
        axis = as_axis(axis)
        if axis not in self.unreduced:
            raise ShardingError(f"axis {axis} is not unreduced in {self}")
        return dict(self.reduce_types).get(axis, "sum")

    def unreduced_by_type(self) -> dict[str, tuple[AxisRef, ...]]:
        """Unreduced axes grouped by reduce type, each group in the order of `unreduced`."""
        kinds = dict(self.reduce_types)
        out: dict[str, list[AxisRef]] = {}
        for a in self.unreduced:
            out.setdefault(kinds.get(a, "sum"), []).append(a)
        return {k: tuple(v) for k, v in out.items()}

    def axes_used(self) -> tuple[AxisRef, ...]:
        """Every axis reference: dim axes (dim by dim, major to minor), replicated, unreduced."""
        return tuple(a for d in self.dims for a in d.axes) + self._replicated + self.unreduced

    @property
    def is_fully_replicated(self) -> bool:
        """No dim is sharded and nothing is pending a reduction (open dims may still be sharded)."""
        return not any(d.axes for d in self.dims) and not self.unreduced

    @property
    def is_closed(self) -> bool:
        return all(d.is_closed for d in self.dims)

    def local_shape(self, shape: Iterable[int], mesh: Mesh | Mapping[str, Mesh] | None = None) -> tuple[int, ...]:
        """The per-device shape: each dim ceil-divided by the product of its axes' sizes."""
        given = tuple(shape)
        shape = tuple(as_int(n) for n in given)
        for i, n in enumerate(shape):
            if n is None or n < 0:
                raise ShardingError(f"dim {i} of shape {list(given)} is not a non-negative integer: {given[i]!r}")
        m = self.resolve_mesh(mesh)
        if m.is_maximal and not self.dims:
            return shape
        if len(shape) != self.rank:
            raise ShardingError(f"shape {list(shape)} has rank {len(shape)}, the sharding has rank {self.rank}")
        return tuple(-(-n // d.shard_count(m)) for n, d in zip(shape, self.dims))

    def replace(self, **changes) -> "TensorSharding":
        fields = dict(mesh=self.mesh, dims=self.dims, replicated=self._replicated,
                      unreduced=self.unreduced, reduce_types=self.reduce_types)
        if "unreduced" in changes and "reduce_types" not in changes:
            keep = set(as_axis(a) for a in changes["unreduced"])
            fields["reduce_types"] = tuple(p for p in self.reduce_types if p[0] in keep)
        fields.update(changes)
        return TensorSharding(**fields)

    # -- equality and text ---------------------------------------------------------------
    def _key(self):
        return (self.mesh, self.dims, self._replicated, self.unreduced, self.reduce_types)

    def __eq__(self, other):
        return isinstance(other, TensorSharding) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def to_text(self, prefix: bool = True) -> str:
        """Shardy's attribute text; `prefix=False` drops `#sdy.sharding` (as in sharding_per_value)."""
        mesh = symbol(self.mesh) if isinstance(self.mesh, str) else "mesh" + str(self.mesh)
        parts = [mesh, "[" + ", ".join(str(d) for d in self.dims) + "]"]
        if self._replicated:
            parts.append("replicated=" + _axis_set(self._replicated))
        groups = self.unreduced_by_type()
        for kind in REDUCE_TYPES:
            if kind in groups:
                key = "unreduced" if kind == "sum" else f"unreduced_{kind}"
                parts.append(f"{key}=" + _axis_set(groups[kind]))
        return ("#sdy.sharding" if prefix else "") + "<" + ", ".join(parts) + ">"

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return f"TensorSharding({self.to_text()!r})"


def _axis_set(axes: Iterable[AxisRef]) -> str:
    return "{" + ", ".join(str(a) for a in axes) + "}"


def sharding_per_value_text(shardings: Iterable[TensorSharding]) -> str:
    """`#sdy.sharding_per_value<[<@m, ...>, ...]>`, the attribute of an op's results."""
    return "#sdy.sharding_per_value<[" + ", ".join(s.to_text(prefix=False) for s in shardings) + "]>"
