"""The planner's own small, hashable picture of a sharded tensor.

A `MeshSpec` is the named mesh axes with their sizes, major to minor (device ids are row-major
over them). A `Layout` says, per tensor dim, which mesh axes split it, major to minor (the block
a device holds along that dim is the mixed-radix number of its indices on those axes), and which
axes hold partial values still to be reduced with one reduce type. Every other axis replicates.

Size-1 mesh axes change nothing about where data lives, so a Layout never mentions them
(`Layout.make` drops them): two layouts that place data the same way compare equal. An axis name
may be a sub-axis `x:(m)k` (Shardy's "x":(m)k: the middle factor of x reshaped to [m, k, rest]).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

REDUCE_TYPES = ("sum", "avg", "max", "min", "all", "any")  # all/any: a logical (bitwise) and/or of the parts
_SUB_AXIS = re.compile(r"^(.+):\((\d+)\)(\d+)$")   # x:(m)k, Shardy's "x":(m)k


class ReshardError(ValueError):
    """A reshard request that cannot be planned (bad layout, uneven dim, impossible target)."""


@dataclass(frozen=True)
class MeshSpec:
    axes: tuple[tuple[str, int], ...]

    @staticmethod
    def make(axes) -> "MeshSpec":
        """From a dict, a sequence of (name, size) pairs, or text like 'x=2,y=4'."""
        if isinstance(axes, MeshSpec):
            return axes
        if isinstance(axes, str):  # the syntax of every command: 'x=2,y=4' or '2x4' (axes x, y, z, w)
            from ..sharding.mesh_text import MeshTextError, parse_mesh_text
            try:
                axes = parse_mesh_text(axes).axes()
            except MeshTextError as e:
                raise ReshardError(str(e)) from None
        elif isinstance(axes, dict):
            axes = list(axes.items())
        pairs = tuple((str(n), s) for n, s in axes)
        if not pairs:
            raise ReshardError("a mesh needs at least one axis")
        seen = set()
        for name, size in pairs:
            if not isinstance(size, int) or isinstance(size, bool) or size < 1:
                raise ReshardError(f"mesh axis '{name}' has size {size!r}; sizes are integers >= 1")
            if not name or name in seen:
                raise ReshardError(f"mesh axis name '{name}' is empty or repeated")
            seen.add(name)
        return MeshSpec(pairs)

    def __post_init__(self):
        # lookups the planner makes millions of times; not fields, so eq/hash ignore them
        object.__setattr__(self, "_names", tuple(n for n, _ in self.axes))
        object.__setattr__(self, "_sizes", dict(self.axes))

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    def size(self, name: str) -> int:
        size = self._sizes.get(name)
        if size is not None:
            return size
        sub = _SUB_AXIS.match(name)
        if sub and sub.group(1) in self.names:
            return int(sub.group(3))
        raise ReshardError(f"axis '{name}' is not in mesh {self}")

    @property
    def num_devices(self) -> int:
        return math.prod(s for _, s in self.axes)

    def coords(self, device: int) -> dict[str, int]:
        """Mesh coordinates of a row-major device id."""
        return dict(_coords(self, device))

    def __str__(self) -> str:
        return ",".join(f"{n}={s}" for n, s in self.axes)


@lru_cache(maxsize=65536)
def _coords(mesh: MeshSpec, device: int) -> tuple[tuple[str, int], ...]:
    out = {}
    for name, size in reversed(mesh.axes):
        out[name] = device % size
        device //= size
    return tuple((n, out[n]) for n in mesh.names)


@dataclass(frozen=True)
class Layout:
    dims: tuple[tuple[str, ...], ...]
    partial: tuple[str, ...] = ()          # axes in mesh order
    reduce: str | None = None              # the reduce type of the partial axes

    @staticmethod
    def make(mesh: MeshSpec, dims, partial=(), reduce: str | None = None) -> "Layout":
        """Checks names and repeats, drops size-1 axes, orders partial axes by the mesh."""
        mesh = MeshSpec.make(mesh)
        used: dict[str, str] = {}
        out_dims = []
        for d, axes in enumerate(dims):
            if isinstance(axes, str):
                axes = (axes,)
            kept = []
            for a in axes:
                _check_axis(mesh, a, f"dim {d}")
                clash = next((u for u in used if _overlapping(mesh, u, a)), None)
                if clash is not None:
                    raise ReshardError(f"axis '{a}' is used twice ({used[clash]} and dim {d})")
                used[a] = f"dim {d}"
                if mesh.size(a) > 1:
                    kept.append(a)
            out_dims.append(tuple(kept))
        if isinstance(partial, str):
            partial = (partial,)
        for a in partial:
            _check_axis(mesh, a, "partial")
            clash = next((u for u in used if _overlapping(mesh, u, a)), None)
            if clash is not None:
                raise ReshardError(f"axis '{a}' is used twice ({used[clash]} and partial)")
            used[a] = "partial"
        partial = tuple(sorted((a for a in set(partial) if mesh.size(a) > 1), key=lambda a: _mesh_order(mesh, a)))
        if partial:
            reduce = "sum" if reduce is None else reduce
            if reduce not in REDUCE_TYPES:
                raise ReshardError(f"reduce type '{reduce}' is not one of {', '.join(REDUCE_TYPES)}")
        else:
            reduce = None
        return Layout(tuple(out_dims), partial, reduce)

    @property
    def rank(self) -> int:
        return len(self.dims)

    def used_axes(self) -> set[str]:
        return {a for axes in self.dims for a in axes} | set(self.partial)

    def dim_of(self, axis: str) -> int | None:
        for d, axes in enumerate(self.dims):
            if axis in axes:
                return d
        return None

    def local_shape(self, mesh: MeshSpec, shape) -> tuple[int, ...]:
        return tuple(n // math.prod(mesh.size(a) for a in axes) for n, axes in zip(shape, self.dims))

    def block(self, mesh: MeshSpec, coords: dict[str, int], dim: int) -> tuple[int, int]:
        """(block index, number of blocks) of `dim` on the device at `coords`."""
        idx, count = 0, 1
        for a in self.dims[dim]:
            n = mesh.size(a)
            idx, count = idx * n + coords[a], count * n
        return idx, count

    def text(self) -> str:
        """Shardy's dim-list text, with partial axes after it: [{"x"}, {}] partial={"y"}:sum."""
        body = "[" + ", ".join("{" + ", ".join(map(_quoted, axes)) + "}" for axes in self.dims) + "]"
        if self.partial:
            body += " partial={" + ", ".join(map(_quoted, self.partial)) + "}:" + self.reduce
        return body

    def __str__(self) -> str:
        return self.text()


def _quoted(name: str) -> str:
    sub = _SUB_AXIS.match(name)
    return f'"{sub.group(1)}":({sub.group(2)}){sub.group(3)}' if sub else f'"{name}"'


def _check_axis(mesh: MeshSpec, axis, where: str) -> None:
    if not isinstance(axis, str):
        raise ReshardError(f"{where}: axis {axis!r} is not a mesh axis name")
    if axis in mesh.names:
        return
    sub = _SUB_AXIS.match(axis)
    if not sub or sub.group(1) not in mesh.names:
        raise ReshardError(f"{where}: axis '{axis}' is not in mesh {mesh} (axes {list(mesh.names)})")
    n, pre, size = mesh.size(sub.group(1)), int(sub.group(2)), int(sub.group(3))
    if pre < 1 or size < 1 or n % (pre * size):
        raise ReshardError(f"{where}: sub-axis {axis} does not fit axis '{sub.group(1)}' of size {n} "
                           "(pre-size times size must divide it)")


def _mesh_order(mesh: MeshSpec, name: str) -> tuple[int, int]:
    if name in mesh.names:
        return mesh.names.index(name), 0
    sub = _SUB_AXIS.match(name)
    return (mesh.names.index(sub.group(1)), int(sub.group(2))) if sub else (mesh.names.index(name), 1)


def _overlapping(mesh: MeshSpec, a: str, b: str) -> bool:
    """Whether two (sub-)axis names cover a common part of one mesh axis."""
    def span(name):
        sub = _SUB_AXIS.match(name)
        if not sub:
            return name, 1, mesh.size(name)
        return sub.group(1), int(sub.group(2)), int(sub.group(2)) * int(sub.group(3))
    (pa, lo_a, hi_a), (pb, lo_b, hi_b) = span(a), span(b)
    return pa == pb and lo_a < hi_b and lo_b < hi_a


def check_divisible(mesh: MeshSpec, layout: Layout, shape) -> None:
    """Uneven dims are refused: every dim must divide by the product of its axes' sizes."""
    shape = tuple(shape)
    if len(shape) != layout.rank:
        raise ReshardError(f"layout {layout} has {layout.rank} dims but the shape {list(shape)} has {len(shape)}")
    for d, (n, axes) in enumerate(zip(shape, layout.dims)):
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ReshardError(f"dim {d} has size {n!r}; sizes are integers >= 0")
        parts = math.prod(mesh.size(a) for a in axes)
        if n % parts:
            raise ReshardError(f"dim {d} of size {n} does not divide over axes {list(axes)} ({parts} parts); "
                               "uneven dims are refused (pad the tensor first)")


_DIM = re.compile(r"\{([^{}]*)\}")
_TEXT = re.compile(r"^\s*\[(?P<dims>[^\]]*)\]\s*(?:,?\s*(?P<kw>partial|unreduced)\s*=\s*\{(?P<p>[^}]*)\}"
                   r"(?::(?P<r>\w+))?)?\s*$")


def parse_layout(text: str, mesh) -> Layout:
    """Reads `[{"x"}, {"y", "z"}]`, optionally followed by `partial={"w"}:max` (or Shardy's
    `unreduced={"w"}`, which is a sum)."""
    mesh = MeshSpec.make(mesh)
    m = _TEXT.match(text)
    if not m:
        raise ReshardError(f"cannot read layout {text!r}; write e.g. '[{{\"x\"}}, {{}}] partial={{\"y\"}}:sum'")
    dims_text = m.group("dims").strip()
    dims = []
    if dims_text:
        rest = _DIM.sub("", dims_text).replace(",", "").strip()
        if rest:
            raise ReshardError(f"cannot read layout {text!r}: stray text {rest!r} between dims")
        dims = [_names(g) for g in _DIM.findall(dims_text)]
    partial = _names(m.group("p") or "")
    reduce = m.group("r")
    if m.group("kw") == "unreduced" and reduce not in (None, "sum"):
        raise ReshardError(f"unreduced axes are summed; write partial={{...}}:{reduce} for '{reduce}'")
    return Layout.make(mesh, dims, partial, reduce)


def _names(text: str) -> tuple[str, ...]:
    out = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        if item == "?":
            continue  # an open dim: the planner treats it as closed
        sub = re.match(r'^"([^"]+)":\((\d+)\)(\d+)$', item)
        if sub:
            out.append(f"{sub.group(1)}:({sub.group(2)}){sub.group(3)}")
            continue
        if not (len(item) >= 2 and item[0] == item[-1] == '"'):
            raise ReshardError(f"axis {item!r} must be quoted, e.g. \"x\"")
        out.append(item[1:-1])
    return tuple(out)
