"""Hypothesis strategies for meshes and (valid or arbitrary) tensor shardings."""
from __future__ import annotations

from hypothesis import strategies as st

from spmdkit.sharding import AxisRef, DimSharding, Mesh, MeshAxis, TensorSharding, canonicalize

AXIS_NAMES = ["x", "y", "z", "w", "data", "model"]
SIZES = [1, 2, 3, 4, 6, 8]


def factor_chains(n: int) -> list[list[int]]:
    """Every way to write n as an ordered product of factors > 1 (major to minor)."""
    if n == 1:
        return [[]]
    out = []
    for f in range(2, n + 1):
        if n % f == 0:
            out += [[f] + rest for rest in factor_chains(n // f)]
    return out


@st.composite
def meshes(draw, min_axes=0, max_axes=3, names=AXIS_NAMES, explicit_ids=True, arbitrary_ids=False):
    """`arbitrary_ids`: ids beyond 0..n-1 (Paddle's sub-meshes have them; Shardy refuses them)."""
    names = draw(st.lists(st.sampled_from(names), min_size=min_axes, max_size=max_axes, unique=True))
    axes = [MeshAxis(n, draw(st.sampled_from(SIZES))) for n in names]
    size = 1
    for a in axes:
        size *= a.size
    ids = None
    if explicit_ids and draw(st.booleans()):
        ids = draw(st.permutations(list(range(size))))
        if arbitrary_ids and draw(st.booleans()):
            ids = [i * 3 + 1 for i in ids]
    return Mesh(axes, ids)


@st.composite
def valid_shardings(draw, mesh: Mesh, rank: int | None = None, mesh_ref=None, full_axes_only=False,
                    allow_open=True, allow_replicated=True, allow_unreduced=True, reduce_types=None):
    """A sharding that satisfies every invariant: axes cut into sub-axis chains, pieces dealt out."""
    if mesh.is_maximal:  # Shardy writes any tensor on a maximal mesh as `[]`
        return TensorSharding(mesh_ref if mesh_ref is not None else mesh, [])
    if rank is None:
        rank = draw(st.integers(0, 4))
    slots = list(range(rank)) + ["unused"] + (["replicated"] if allow_replicated else []) + \
        (["unreduced"] if allow_unreduced else [])
    dims: list[list[AxisRef]] = [[] for _ in range(rank)]
    replicated, unreduced = [], []
    for a in mesh.axes:
        chain = [a.size] if full_axes_only else draw(st.sampled_from(factor_chains(a.size)))
        pre = 1
        for k in chain:
            ref = AxisRef(a.name) if k == a.size else AxisRef(a.name, pre, k)
            pre *= k
            slot = draw(st.sampled_from(slots))
            if isinstance(slot, int):
                dims[slot].insert(draw(st.integers(0, len(dims[slot]))), ref)
            elif slot == "replicated":
                replicated.append(ref)
            elif slot == "unreduced":
                unreduced.append(ref)
    kinds = {}
    for ref in unreduced:
        kinds[ref] = draw(st.sampled_from(reduce_types or ["sum", "sum", "max", "min", "avg", "prod"]))
    dim_shardings = []
    for axes in dims:
        closed = True if not allow_open else draw(st.booleans())
        priority = None
        if allow_open and (axes or not closed) and draw(st.booleans()):
            priority = draw(st.integers(0, 5))
        dim_shardings.append(DimSharding(axes, closed, priority))
    ref = mesh_ref if mesh_ref is not None else mesh
    raw = TensorSharding(ref, dim_shardings, replicated, unreduced, kinds)
    return canonicalize(raw, mesh)
