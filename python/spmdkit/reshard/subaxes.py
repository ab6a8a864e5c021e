"""Sub-axes: planning over a finer mesh where each axis is cut into factors.

Shardy's sub-axis "x":(m)k reshapes axis x (size n) into [m, k, n/(m*k)] and takes the middle
factor; here its name is `x:(m)k`. Cutting every axis of the mesh into such factors gives a
finer mesh with the same row-major device order, so a layout over whole axes is also a layout
over factors, and the planner may then move half of an axis where whole axes would move all of
it (e.g. [{"x"}, {"y"}] -> [{"y"}, {"x"}] with |x|=2, |y|=4 becomes an all-to-all on "y":(2)2
and one permute, as XLA does). Factors are cut where the layouts' own sub-axes begin and end,
then into primes when `full` (small meshes: the state space grows with the number of factors).
"""
from __future__ import annotations

import re

from .layout import Layout, MeshSpec, ReshardError

_SUB = re.compile(r"^(?P<parent>.+):\((?P<pre>\d+)\)(?P<size>\d+)$")


def split_name(name: str) -> tuple[str, int | None, int | None]:
    """('x', m, k) for 'x:(m)k'; ('x', None, None) for a whole axis."""
    m = _SUB.match(name)
    if not m:
        return name, None, None
    return m.group("parent"), int(m.group("pre")), int(m.group("size"))


def sub_name(parent: str, pre: int, size: int, parent_size: int) -> str:
    return parent if pre == 1 and size == parent_size else f"{parent}:({pre}){size}"


def prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out + ([n] if n > 1 else [])


def _interval(mesh: MeshSpec, name: str) -> tuple[str, int, int]:
    parent, pre, size = split_name(name)
    n = mesh.size(parent)
    return (parent, 1, n) if pre is None else (parent, pre, pre * size)


def refine(mesh: MeshSpec, layouts, full: bool):
    """(finer mesh, the layouts over it); the finer mesh keeps the device order."""
    cuts = {p: {1, mesh.size(p)} for p in mesh.names}
    for layout in layouts:
        for a in [a for axes in layout.dims for a in axes] + list(layout.partial):
            parent, lo, hi = _interval(mesh, a)
            cuts[parent] |= {lo, hi}
    pieces: dict[str, list[tuple[int, int]]] = {}
    axes = []
    for p in mesh.names:
        chain = sorted(cuts[p])
        for lo, hi in zip(chain, chain[1:]):
            if hi % lo:
                raise ReshardError(f"sub-axes of '{p}' do not nest: cuts at {chain} (each must divide the next)")
        out = []
        for lo, hi in zip(chain, chain[1:]):
            factors = prime_factors(hi // lo) if full else [hi // lo]
            pre = lo
            for f in factors:
                out.append((pre, f))
                pre *= f
        pieces[p] = out or [(1, 1)]
        axes += [(sub_name(p, pre, size, mesh.size(p)), size) for pre, size in pieces[p]]
    fine = MeshSpec.make(axes)

    def expand(a):
        parent, lo, hi = _interval(mesh, a)
        return [sub_name(parent, pre, size, mesh.size(parent)) for pre, size in pieces[parent] if lo <= pre < hi]

    out = []
    for layout in layouts:
        dims = [[f for a in axes_ for f in expand(a)] for axes_ in layout.dims]
        partial = [f for a in layout.partial for f in expand(a)]
        out.append(Layout.make(fine, dims, partial, layout.reduce))
    return fine, out


def coarse_text(layout: Layout, mesh: MeshSpec) -> str:
    """A layout over factors written with as few (sub-)axes of `mesh` as possible: runs of
    consecutive factors of one axis merge, and a whole axis is written "x"."""
    dims = tuple(tuple(_merge(axes, mesh)) for axes in layout.dims)
    return Layout(dims, tuple(_merge(layout.partial, mesh)), layout.reduce).text()


def _merge(names, mesh: MeshSpec) -> list[str]:
    out = []
    for name in names:
        parent, pre, size = split_name(name)
        if out and pre is not None:
            last_parent, last_pre, last_size = split_name(out[-1])
            if last_parent == parent and last_pre is not None and last_pre * last_size == pre:
                out[-1] = f"{parent}:({last_pre}){last_size * size}"
                continue
        out.append(name)
    return [sub_name(*_interval_size(mesh, n), mesh.size(split_name(n)[0])) for n in out]


def _interval_size(mesh: MeshSpec, name: str) -> tuple[str, int, int]:
    parent, lo, hi = _interval(mesh, name)
    return parent, lo, hi // lo


def coarse_axes(names, mesh: MeshSpec) -> tuple[str, ...]:
    """Axis names with runs of consecutive factors of one axis merged (as in coarse_text)."""
    return tuple(_merge(list(names), mesh))
