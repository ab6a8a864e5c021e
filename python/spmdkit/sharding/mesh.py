"""A named-axis logical mesh: axes (name, size) over a list of device ids, as Shardy's `sdy.mesh`."""
from __future__ import annotations

import re
from dataclasses import dataclass
from math import prod
from typing import Iterable, Mapping

from .errors import MeshError
from .integers import as_int

# Listing every device (device_grid, device_slices) is refused beyond this, rather than hang.
MAX_ENUMERATED_DEVICES = 1 << 20


def quote(name: str) -> str:
    """An axis or mesh name as an MLIR string literal, escaped as MLIR prints it (`"` -> \\22)."""
    out = []
    for byte in name.encode("utf-8"):
        c = chr(byte)
        if c == "\\":
            out.append("\\\\")
        elif 0x20 <= byte < 0x7F and c != '"':
            out.append(c)
        else:
            out.append(f"\\{byte:02X}")
    return '"' + "".join(out) + '"'


_BARE_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")


def symbol(name: str) -> str:
    """A mesh name as an MLIR symbol reference: @name, or @"name" when it needs quotes."""
    return "@" + (name if _BARE_SYMBOL.match(name) else quote(name))


@dataclass(frozen=True)
class MeshAxis:
    name: str
    size: int

    def __post_init__(self):
        if not isinstance(self.name, str):  # "" is a legal (if odd) name, as in Shardy
            raise MeshError(f"a mesh axis name must be a string, got {self.name!r}")
        size = as_int(self.size)
        if size is None or size < 1:
            raise MeshError(f"mesh axis {self.name!r} must have a positive integer size, got {self.size!r}")
        object.__setattr__(self, "size", size)

    def __str__(self) -> str:
        return f"{quote(self.name)}={self.size}"


class Mesh:
    """Mesh axes (major to minor) and the device ids laid out row-major over them.

    `device_ids=None` (or the iota 0..size-1) is the default order and is not printed, as in
    Shardy. A mesh with no axes is *empty* (`<[]>`), or *maximal* when it names its single
    device (`<[], device_ids=[3]>`): a tensor on a maximal mesh lives whole on that device.
    """

    __slots__ = ("_axes", "_device_ids")

    def __init__(self, axes: Iterable[MeshAxis] | Mapping[str, int] = (), device_ids: Iterable[int] | None = None):
        if isinstance(axes, Mapping):
            axes = [MeshAxis(n, s) for n, s in axes.items()]
        norm = []
        for a in axes:
            if isinstance(a, MeshAxis):
                norm.append(a)
            elif isinstance(a, tuple) and len(a) == 2:
                norm.append(MeshAxis(*a))
            else:
                raise MeshError(f"a mesh axis must be a MeshAxis or a (name, size) pair, got {a!r}")
        names = [a.name for a in norm]
        for n in names:
            if names.count(n) > 1:
                raise MeshError(f"mesh axis {n!r} appears twice in {names}")
        size = prod(a.size for a in norm)
        ids = None
        if device_ids is not None:
            raw = tuple(device_ids)
            ids = tuple(as_int(d) for d in raw)
            for d, given in zip(ids, raw):
                if d is None or d < 0:
                    raise MeshError(f"device id {given!r} must be a non-negative integer")
            if len(ids) != size:
                raise MeshError(f"mesh of shape {[a.size for a in norm]} has {size} devices, "
                                f"but {len(ids)} device ids were given")
            if len(set(ids)) != len(ids):
                dup = next(d for d in ids if ids.count(d) > 1)
                raise MeshError(f"device id {dup} appears twice in device_ids")
            if norm and ids == tuple(range(size)):
                ids = None  # the default order; a maximal mesh keeps its one id
        object.__setattr__(self, "_axes", tuple(norm))
        object.__setattr__(self, "_device_ids", ids)

    def __setattr__(self, key, value):
        raise AttributeError("Mesh is immutable")

    def __reduce__(self):  # copy/pickle rebuild through __init__ (setattr is closed)
        return (Mesh, (self._axes, self._device_ids))

    @property
    def axes(self) -> tuple[MeshAxis, ...]:
        return self._axes

    @property
    def axis_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self._axes)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(a.size for a in self._axes)

    @property
    def size(self) -> int:
        return prod(self.shape)

    @property
    def device_ids(self) -> tuple[int, ...]:
        """The device ids in row-major order over the axes (the iota when none were given)."""
        if self._device_ids is not None:
            return self._device_ids
        if self.size > MAX_ENUMERATED_DEVICES:
            raise MeshError(f"mesh {self} has {self.size} devices, too many to list "
                            f"(at most {MAX_ENUMERATED_DEVICES})")
        return tuple(range(self.size))

    @property
    def has_explicit_device_ids(self) -> bool:
        return self._device_ids is not None

    @property
    def is_maximal(self) -> bool:
        return not self._axes and self._device_ids is not None

    @property
    def is_empty(self) -> bool:
        return not self._axes and self._device_ids is None

    def has_axis(self, name: str) -> bool:
        return name in self.axis_names

    def axis_size(self, name: str) -> int:
        for a in self._axes:
            if a.name == name:
                return a.size
        raise MeshError(f"mesh {self} has no axis {name!r}")

    def axis_index(self, name: str) -> int:
        try:
            return self.axis_names.index(name)
        except ValueError:
            raise MeshError(f"mesh {self} has no axis {name!r}") from None

    def device_grid(self):
        """The device ids as nested lists of the mesh's shape (a bare id for an axis-less mesh)."""
        if self.size > MAX_ENUMERATED_DEVICES:
            raise MeshError(f"mesh {self} has {self.size} devices, too many to list "
                            f"(at most {MAX_ENUMERATED_DEVICES})")
        ids = list(self.device_ids)
        if not self._axes:
            return ids[0]

        def build(level: int, start: int):
            if level == len(self._axes) - 1:
                return ids[start:start + self._axes[level].size]
            step = prod(self.shape[level + 1:])
            return [build(level + 1, start + i * step) for i in range(self._axes[level].size)]

        return build(0, 0)

    def device_at(self, coords: Mapping[str, int]) -> int:
        """The device at mesh coordinates given per axis name (missing axes are 0)."""
        flat = 0
        for a in self._axes:
            c = coords.get(a.name, 0)
            if not 0 <= c < a.size:
                raise MeshError(f"coordinate {c} is outside mesh axis {a.name!r} of size {a.size}")
            flat = flat * a.size + c
        return flat if self._device_ids is None else self._device_ids[flat]

    def __eq__(self, other):
        return isinstance(other, Mesh) and self._axes == other._axes and self._device_ids == other._device_ids

    def __hash__(self):
        return hash((self._axes, self._device_ids))

    def __str__(self) -> str:
        text = "<[" + ", ".join(str(a) for a in self._axes) + "]"
        if self._device_ids is not None:
            text += ", device_ids=[" + ", ".join(map(str, self._device_ids)) + "]"
        return text + ">"

    def __repr__(self) -> str:
        return f"Mesh({str(self)!r})"

    def declaration(self, name: str) -> str:
        """The program-level op that names this mesh: `sdy.mesh @name = <[...]>`."""
        return f"sdy.mesh {symbol(name)} = {self}"
