"""A reference to a mesh axis: the full axis "x", or its sub-axis "x":(m)k.

A sub-axis reshapes axis "x" of size n into [m, k, n/(m*k)] and takes the middle factor: `m` is
the pre-size (product of the sub-axes more major than it), `k` its size. Comparing sub-axes is
interval arithmetic on the multiplicative range [m, m*k) of the axis.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import ShardingError
from .integers import as_int
from .mesh import Mesh, quote


@dataclass(frozen=True, order=False)
class AxisRef:
    name: str
    pre_size: int | None = None
    size: int | None = None

    def __post_init__(self):
        if not isinstance(self.name, str):  # "" is a legal (if odd) name, as in Shardy
            raise ShardingError(f"an axis name must be a string, got {self.name!r}")
        if (self.pre_size is None) != (self.size is None):
            raise ShardingError(f"axis {self.name!r}: a sub-axis needs both pre_size and size")
        for v, what in ((self.pre_size, "pre_size"), (self.size, "size")):
            if v is not None:
                if as_int(v) is None:
                    raise ShardingError(f"axis {self.name!r}: {what} must be an integer, got {v!r}")
                object.__setattr__(self, what, as_int(v))

    @property
    def is_sub_axis(self) -> bool:
        return self.pre_size is not None

    def __str__(self) -> str:
        text = quote(self.name)
        return text + f":({self.pre_size}){self.size}" if self.is_sub_axis else text

    def __repr__(self) -> str:
        return f"AxisRef({str(self)})"

    # -- sizes on a mesh ---------------------------------------------------------------
    def full_size(self, mesh: Mesh) -> int:
        return mesh.axis_size(self.name)

    def size_on(self, mesh: Mesh) -> int:
        return self.size if self.is_sub_axis else mesh.axis_size(self.name)

    def interval(self, mesh: Mesh) -> tuple[int, int]:
        """[pre_size, pre_size*size) within the axis: the full axis is [1, n)."""
        if self.is_sub_axis:
            return self.pre_size, self.pre_size * self.size
        return 1, mesh.axis_size(self.name)

    # -- relations ---------------------------------------------------------------------
    def overlaps(self, other: "AxisRef", mesh: Mesh) -> bool:
        if self.name != other.name:
            return False
        if self == other:  # also for an axis of size 1, whose interval [1, 1) is empty
            return True
        a, b = self.interval(mesh), other.interval(mesh)
        return a[0] < b[1] and b[0] < a[1]

    def contains(self, other: "AxisRef", mesh: Mesh) -> bool:
        """Whether `other` is this axis or a sub-axis inside it."""
        if self.name != other.name:
            return False
        (a0, a1), (b0, b1) = self.interval(mesh), other.interval(mesh)
        return a0 <= b0 and b1 <= a1 and b0 % a0 == 0 and a1 % b1 == 0

    def can_merge(self, other: "AxisRef", mesh: Mesh) -> bool:
        """Whether `other` directly follows this sub-axis (this major, other minor)."""
        if self.name != other.name or not self.is_sub_axis or not other.is_sub_axis:
            return False
        return self.pre_size * self.size == other.pre_size

    def merge(self, other: "AxisRef", mesh: Mesh) -> "AxisRef":
        """The one axis reference covering this sub-axis then `other` (a full axis when whole)."""
        if not self.can_merge(other, mesh):
            raise ShardingError(f"{self} and {other} are not adjacent sub-axes of one axis")
        return make_axis(self.name, self.pre_size, self.size * other.size, mesh)

    def split(self, major_size: int, mesh: Mesh) -> tuple["AxisRef", "AxisRef"]:
        """Split into a major part of `major_size` and the minor rest (e.g. "x"=4 -> (1)2, (2)2)."""
        lo, hi = self.interval(mesh)
        total = hi // lo
        if major_size <= 1 or major_size >= total or total % major_size:
            raise ShardingError(f"cannot split {self} (size {total}) into a major part of size {major_size}")
        return (AxisRef(self.name, lo, major_size), AxisRef(self.name, lo * major_size, total // major_size))

    def mesh_order_key(self, mesh: Mesh) -> tuple[int, int]:
        """Sort key in mesh order: by the axis' position, then sub-axes by pre-size."""
        return mesh.axis_index(self.name), (self.pre_size or 1)


def make_axis(name: str, pre_size: int, size: int, mesh: Mesh) -> AxisRef:
    """A sub-axis, or the full axis when (pre_size, size) covers it whole."""
    if pre_size == 1 and size == mesh.axis_size(name):
        return AxisRef(name)
    return AxisRef(name, pre_size, size)


def as_axis(value) -> AxisRef:
    """Accept an AxisRef or a bare axis name."""
    if isinstance(value, AxisRef):
        return value
    if isinstance(value, str):
        return AxisRef(value)
    raise ShardingError(f"an axis must be an AxisRef or an axis name, got {value!r}")
