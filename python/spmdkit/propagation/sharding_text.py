"""Shardy's sharding text for one value, parsed to and printed from the engine's tuples.

    [{"a", "b":(1)2, ?}p1, {}, {?}]            dims: axes major->minor, `?` = open, pN = priority
    <@mesh, [{"a"}, {?}], replicated={"c"}>    with a mesh name and explicitly replicated axes

Axis names may be written with or without quotes. A dim tuple is (axes, closed, priority, user)
with axes as (axis index, pre, size) triples; priority -1 means none given (p0).
"""
from __future__ import annotations

import re
from dataclasses import dataclass


class ShardingSyntaxError(ValueError):
    """A sharding string that does not parse; the message quotes the text and the position."""


@dataclass(frozen=True)
class MeshSpec:
    name: str
    axis_names: tuple
    axis_sizes: tuple
    maximal: bool = False  # a one-device mesh (explicit device ids, no axes)

    def axis_index(self, name: str, text: str) -> int:
        try:
            return self.axis_names.index(name)
        except ValueError:
            raise ValueError(f"sharding {text!r}: axis {name!r} is not in mesh {self.name!r} "
                             f"(axes {list(self.axis_names)})") from None


# A priority (p1) is read before a bare name, so an axis called like one must be quoted.
_TOKEN = re.compile(r'\s*(?:(?P<prio>p\d+\b)|(?P<name>"[^"]*"|[A-Za-z_][\w.]*)|(?P<sub>:\(\d+\)\d+)|(?P<sym>[\[\]{},?<>=@]))')


def _tokens(text: str):
    pos = 0
    out = []
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m:
            raise ShardingSyntaxError(f"sharding {text!r}: cannot read from position {pos}: {text[pos:pos + 12]!r}")
        kind = m.lastgroup
        out.append((kind, m.group(kind), m.start(kind)))
        pos = m.end()
    return out


def parse_sharding(text: str, meshes: dict, default_mesh: str | None):
    """Returns (mesh name, dims tuples, replicated triples). `meshes` maps name -> MeshSpec."""
    toks = _tokens(text)
    i = 0

    def peek(v=None):
        return i < len(toks) and (v is None or toks[i][1] == v)

    def take(v=None):
        nonlocal i
        if i >= len(toks):
            raise ShardingSyntaxError(f"sharding {text!r}: ended early, expected {v or 'more'}")
        if v is not None and toks[i][1] != v:
            raise ShardingSyntaxError(f"sharding {text!r}: expected {v!r} at position {toks[i][2]}, got {toks[i][1]!r}")
        i += 1
        return toks[i - 1]

    mesh_name = default_mesh
    wrapped = peek("<")
    if wrapped:
        take("<")
        take("@")
        mesh_name = take()[1].strip('"')
        take(",")
    if mesh_name not in meshes:
        raise ValueError(f"sharding {text!r}: mesh {mesh_name!r} is not defined (meshes: {sorted(meshes)})")
    mesh = meshes[mesh_name]

    def axis():
        kind, name, pos = take()
        if kind != "name":
            raise ShardingSyntaxError(f"sharding {text!r}: expected an axis name at position {pos}, got {name!r}")
        idx = mesh.axis_index(name.strip('"'), text)
        pre, size = 1, mesh.axis_sizes[idx]
        if peek() and toks[i][0] == "sub":
            pre, size = map(int, re.findall(r"\d+", take()[1]))
        return (idx, pre, size)

    dims = []
    take("[")
    while not peek("]"):
        take("{")
        axes, closed = [], True
        while not peek("}"):
            if peek("?"):
                take("?")
                closed = False
            else:
                axes.append(axis())
            if not peek("}"):
                take(",")
        take("}")
        priority = -1
        if peek() and toks[i][0] == "prio":
            priority = int(take()[1][1:])
        dims.append((axes, closed, priority, True))
        if not peek("]"):
            take(",")
    take("]")
    replicated = []
    while peek(","):  # replicated={...}, unreduced={...}: propagation keeps both off the value's dims
        take(",")
        field = take()[1]
        if field != "replicated" and not field.startswith("unreduced"):
            raise ShardingSyntaxError(f"sharding {text!r}: expected 'replicated=' or 'unreduced=', got {field!r}")
        take("=")
        take("{")
        while not peek("}"):
            replicated.append(axis())
            if not peek("}"):
                take(",")
        take("}")
    replicated.sort(key=lambda a: (a[0], a[1]))  # mesh order, as Shardy prints them
    if wrapped:
        take(">")
    if i != len(toks):
        raise ShardingSyntaxError(f"sharding {text!r}: unexpected {toks[i][1]!r} at position {toks[i][2]}")
    return mesh_name, dims, replicated


def format_axis(mesh: MeshSpec, axis) -> str:
    idx, pre, size = axis
    s = f'"{mesh.axis_names[idx]}"'
    if pre != 1 or size != mesh.axis_sizes[idx]:
        s += f":({pre}){size}"
    return s


def format_dims(mesh: MeshSpec | None, dims, with_priority: bool = True) -> str:
    """`[{"a", ?}, {}]` (no mesh name) for dims as returned by the engine."""
    parts = []
    for d in dims:
        axes, closed, priority = d[0], d[1], d[2]
        items = [format_axis(mesh, a) for a in axes] if mesh else []
        if not closed:
            items.append("?")
        parts.append("{" + ", ".join(items) + "}" + (f"p{priority}" if with_priority and priority >= 0 else ""))
    return "[" + ", ".join(parts) + "]"
