"""The one mesh syntax of every command and of the Python API where a mesh may be text.

Two forms: sizes only, `2x2` / `8` / `2x2x2` (the caller names the axes: `x, y, z, w` by default),
or named axes, `dp=2,mp=2`. Strict: every size is a positive integer, every name an identifier
used once; anything else (`2xx2`, `2x`, `foo`, `0x2`, `x=0`, `x=2,x=2`) is a `MeshTextError`
saying what is wrong and how to write it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence

DEFAULT_NAMES = ("x", "y", "z", "w")
HOW = "write sizes like 2x2 or named axes like dp=2,mp=2"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SIZE = re.compile(r"[0-9]+")


class MeshTextError(ValueError):
    """A mesh string that is not `2x2` or `dp=2,mp=2`."""


@dataclass(frozen=True)
class MeshText:
    sizes: tuple[int, ...]
    names: Optional[tuple[str, ...]] = None   # None for the sizes-only form

    def axes(self, default_names: Sequence[str] | None = None) -> list[tuple[str, int]]:
        """(name, size) per axis; the sizes-only form takes `default_names` (x, y, z, w, then
        d0, d1, ... for every axis when there are more than those)."""
        names = self.names
        if names is None:
            names = default_axis_names(len(self.sizes), default_names)
        return list(zip(names, self.sizes))

    @property
    def num_devices(self) -> int:
        n = 1
        for s in self.sizes:
            n *= s
        return n

    def __str__(self) -> str:
        return format_mesh(self.sizes, self.names)


def default_axis_names(n: int, defaults: Sequence[str] | None = None) -> tuple[str, ...]:
    defaults = tuple(DEFAULT_NAMES if defaults is None else defaults)
    return defaults[:n] if n <= len(defaults) else tuple(f"d{i}" for i in range(n))


def _size(text: str, mesh: str, what: str) -> int:
    if not _SIZE.fullmatch(text):
        raise MeshTextError(f"mesh {mesh!r}: {what} {text!r} is not a size ({HOW})")
    size = int(text)
    if size < 1:
        raise MeshTextError(f"mesh {mesh!r}: {what} has size {size}; every axis needs at least 1 device")
    return size


def parse_mesh_text(text: str) -> MeshText:
    """`2x2` or `dp=2,mp=2` (spaces around parts are allowed) -> MeshText; MeshTextError otherwise."""
    if not isinstance(text, str):
        raise MeshTextError(f"a mesh string must be a str, got {type(text).__name__}")
    body = text.strip()
    if not body:
        raise MeshTextError(f"mesh {text!r} is empty ({HOW})")
    if "=" not in body:
        parts = [p.strip() for p in body.lower().split("x")]
        for i, p in enumerate(parts):
            if not p:
                where = "starts with 'x'" if i == 0 else "ends with 'x'" if i == len(parts) - 1 else "has 'xx'"
                raise MeshTextError(f"mesh {text!r} {where}: a size is missing ({HOW})")
        return MeshText(tuple(_size(p, text, f"axis {i}") for i, p in enumerate(parts)))
    names, sizes = [], []
    for part in (p.strip() for p in body.split(",")):
        name, eq, size = (s.strip() for s in part.partition("="))
        if not part or not eq:
            raise MeshTextError(f"mesh {text!r}: part {part!r} is not NAME=SIZE ({HOW})")
        if not _NAME.fullmatch(name):
            raise MeshTextError(f"mesh {text!r}: axis name {name!r} is not an identifier ({HOW})")
        if name in names:
            raise MeshTextError(f"mesh {text!r}: axis {name!r} is named twice")
        names.append(name)
        sizes.append(_size(size, text, f"axis {name!r}"))
    return MeshText(tuple(sizes), tuple(names))


def format_mesh(sizes: Sequence[int], names: Sequence[str] | None = None) -> str:
    """The text `parse_mesh_text` reads back: `2x2`, or `dp=2,mp=2` when names are given."""
    if names is None:
        return "x".join(str(int(s)) for s in sizes)
    return ",".join(f"{n}={int(s)}" for n, s in zip(names, sizes))
