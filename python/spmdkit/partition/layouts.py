"""One sharded value, three spellings: Shardy's TensorSharding (what the program carries), the
rules' TensorDistAttr/DistTensorSpec (what infer_forward takes and returns), and the reshard
planner's Layout (what the partitioner reasons with: per dim the axes, plus partial axes)."""
from __future__ import annotations

import re
from functools import lru_cache

from ..ir.signatures import OpSignatures
from ..reshard import Layout, MeshSpec, ReshardError, as_layout, as_mesh
from ..sharding import AxisRef, DimSharding, TensorSharding, to_process_mesh
from .errors import PartitionError, value_name
from .fine_mesh import SubAxisFound, fine_mesh, sub_axis_cuts


class ProgramMesh:
    """The one mesh a program is sharded over, in the forms each library wants.

    With `cuts` (parent axis -> the bounds of the sub-axes the program's shardings use), the
    partitioner works on the *fine* mesh: each axis cut into the factors between those bounds
    (`"mp":(1)2` is the fine axis `mp(1)2`). Its devices are in
    the same row-major order, so a whole axis is the run of its factors and a sub-axis is a whole
    fine axis: layouts, rules, plans and the shard_map all see whole axes only (fine_mesh.py)."""

    def __init__(self, name: str, mesh, cuts: dict | None = None, signatures: OpSignatures | None = None):
        self.name = name
        self.user_mesh = mesh               # the program's own mesh (spmdkit.sharding.Mesh)
        self.pieces = None                  # refined: parent axis -> [(fine name, pre-size, size)]
        if cuts:
            mesh, self.pieces = fine_mesh(mesh, cuts)
        self.mesh = mesh                    # spmdkit.sharding.Mesh (the fine one when refined)
        self.spec: MeshSpec = as_mesh(mesh)
        self.axis_names = list(mesh.axis_names)
        self.axis_index = {n: i for i, n in enumerate(self.axis_names)}
        self._process_mesh = None
        self._parent_of = None
        # memos for one partition (the program's shardings and rules do not change meanwhile):
        # (id(sharding), rank, shape) -> (sharding, Layout): propagation writes equal shardings
        # as one object, and the sharding is kept so that its id is not reused
        self.layouts: dict = {}
        # every op's signature number (given: propagation's, of this program unchanged since)
        self.signed = signatures if signatures is not None else OpSignatures()
        self.signatures: dict = self.signed.by_op  # id(op) -> its number (-1 when it has none), read in C++
        self.answers: dict = {}     # (signature, layouts asked about) -> a rule's answer
        self.elementwise: dict = {}  # signature -> whether its ops are elementwise (regions.py)
        self.dist_layouts: dict = {}  # (multi_dims_mapping, partial_status) -> Layout
        self.bound: dict = {}  # id(op) -> (op, rule name, RuleCall) (rules._bound)
        self.specs: dict = {}  # (Layout, shape) -> DistTensorSpec (to_spec)
        self.shapes_checked: set = set()  # (shape, id(canonical Layout)) that divide evenly (check_shape passed)
        # one object per distinct Layout (kept alive here, so that keys may hold ids), and
        # partition_op's answers by situation (see _Partitioner.situation)
        self.canonicals: dict = {}
        self.outcomes: dict = {}
        self.wholes: dict = {}  # rank -> canonical replicated Layout
        self.annotations: dict = {}  # (id(sharding), id(type)) -> (sharding, type, id(its canonical Layout))
        self.prices: dict = {}  # (shape, dtype, id(source), id(target)) -> (source, target, modeled us)
        self.plans: dict = {}  # (shape, dtype, id(source), id(target)) -> (source, target, reshard Plan)
        self.local_shapes: dict = {}  # (id(layout), shape) -> (layout, local shape)
        # execute.py's, while JAX traces the local program: steps of one situation share their attrs
        self.jax_params: dict = {}  # (id(step attrs), operand dtypes) -> (attrs, primitive, params)
        self.constants: dict = {}  # (value attribute's text or id, type) -> (attribute, numpy array)

    def canonical(self, layout: Layout) -> Layout:
        """The one object of this partition equal to `layout`."""
        return self.canonicals.setdefault(layout, layout)

    def whole(self, rank: int) -> Layout:
        """The canonical replicated layout of a rank-`rank` value."""
        layout = self.wholes.get(rank)
        if layout is None:
            layout = self.wholes[rank] = self.canonical(replicated(rank))
        return layout

    @property
    def process_mesh(self):
        if self._process_mesh is None:
            self._process_mesh = to_process_mesh(self.mesh)
        return self._process_mesh

    @staticmethod
    def of(program, refine: bool = False, signatures: OpSignatures | None = None) -> "ProgramMesh":
        """The program's mesh; with `refine`, cut at every sub-axis its shardings use (none: as is).
        `signatures`: the ops' numbers, if known (OpSignatures)."""
        if len(program.meshes) != 1:
            raise PartitionError(f"the program must declare exactly one mesh to partition over, it has "
                                 f"{len(program.meshes)} ({', '.join(program.meshes) or 'none'})")
        name, mesh = next(iter(program.meshes.items()))
        return ProgramMesh(name, mesh, sub_axis_cuts(program, mesh) if refine else None, signatures)

    def fine_names(self, ref) -> tuple:
        """The fine mesh's axes that make up the program mesh's axis or sub-axis `ref` (AxisRef)."""
        if self.pieces is None:
            return (ref.name,)
        lo, hi = ref.interval(self.user_mesh)
        pieces = self.pieces[ref.name]
        if lo == hi:  # an axis of size 1
            return tuple(n for n, _, _ in pieces)
        return tuple(n for n, pre, _ in pieces if lo <= pre < hi)

    def user_refs(self, names) -> list:
        """Fine axis names as the program mesh's axes and sub-axes (runs of one axis merged)."""
        if self.pieces is None:
            return [AxisRef(n) for n in names]
        out: list = []
        for n in names:
            parent, pre, size = self.parent_of[n]
            if out and out[-1][0] == parent and out[-1][1] * out[-1][2] == pre:
                out[-1] = (parent, out[-1][1], out[-1][2] * size)
            else:
                out.append((parent, pre, size))
        full = {a.name: a.size for a in self.user_mesh.axes}
        return [AxisRef(p) if pre == 1 and size == full[p] else AxisRef(p, pre, size) for p, pre, size in out]

    @property
    def parent_of(self) -> dict:
        """fine axis name -> (parent axis, pre-size, size)."""
        if self._parent_of is None:
            self._parent_of = {n: (p, pre, size) for p, pieces in (self.pieces or {}).items()
                               for n, pre, size in pieces}
        return self._parent_of


def itemsize(value) -> int:
    """Bytes per element of an IR value (i1/pred counts one byte, as XLA stores it)."""
    return _itemsize(value.type.dtype)


@lru_cache(maxsize=None)
def _itemsize(dtype: str) -> int:
    m = re.search(r"(\d+)$", dtype)
    return max(1, int(m.group(1)) // 8) if m else 4


def replicated(rank: int) -> Layout:
    return Layout(tuple(() for _ in range(rank)), (), None)


def without_axes(layout: Layout, axes: set, pm: ProgramMesh) -> Layout:
    """`layout` with `axes` gathered away (dims keep their other axes, major ones first)."""
    dims = []
    for d in layout.dims:
        keep = []
        for a in d:  # a dim can only lose a minor-most run: stop at the first dropped axis
            if a in axes:
                break
            keep.append(a)
        dims.append(tuple(keep))
    partial = tuple(a for a in layout.partial if a not in axes)
    return Layout.make(pm.spec, dims, partial, layout.reduce if partial else None)


def layout_of_value(value, pm: ProgramMesh) -> Layout:
    """The value's annotated sharding as a Layout (replicated when it has none)."""
    sharding, shape = value.sharding, value.type.shape
    if sharding is None:
        return replicated(len(shape))
    hit = pm.layouts.get((id(sharding), len(shape), shape))
    if hit is not None:  # the value's name is for messages only: not made on the hot path
        return hit[1]
    return layout_of_sharding(sharding, len(shape), pm, value_name(value), shape)


def layout_of_sharding(sharding, rank: int, pm: ProgramMesh, where: str, shape=None) -> Layout:
    """A TensorSharding (or None: replicated) of a rank-`rank` value as a Layout on `pm`.

    With `shape`, an open dim (`?`: what propagation wrote, a hint) keeps only the leading axes
    that divide it: propagation passes a split through a slice to a size-1 result, as Shardy
    does (it pads), while we refuse uneven dims. A closed dim that does not divide is an error
    where it is used."""
    if sharding is None:
        return replicated(rank)
    key = (id(sharding), rank, shape)
    hit = pm.layouts.get(key)
    if hit is not None:
        return hit[1]
    layout = pm.canonical(_layout_of_sharding(sharding, rank, pm, where, shape))
    pm.layouts[key] = (sharding, layout)
    return layout


def _layout_of_sharding(sharding, rank: int, pm: ProgramMesh, where: str, shape) -> Layout:
    if shape is not None and sharding.rank == rank and any(
            not d.is_closed and shape[i] % _parts(pm, d.axes) for i, d in enumerate(sharding.dims)):
        sharding = _even_open_dims(sharding, shape, pm)
    if sharding.rank != rank:
        raise PartitionError(f"sharding {sharding} has rank {sharding.rank}, the value has rank {rank}", value=where)
    if isinstance(sharding.mesh, str) and sharding.mesh != pm.name:
        raise PartitionError(f"sharding {sharding} names mesh @{sharding.mesh}, the program's mesh is @{pm.name}",
                             value=where)
    names = pm.user_mesh.axis_names
    for d, dim in enumerate(sharding.dims):
        for a in dim.axes:
            if a.name not in names:
                raise PartitionError(f"dim {d} is split over axis {a.name!r}, which mesh @{pm.name} "
                                     f"({', '.join(names)}) lacks", value=where)
            if a.is_sub_axis and pm.pieces is None:  # partition() starts again on the fine mesh
                raise SubAxisFound(f"dim {d} is split over the sub-axis {a} (partition() takes it on the mesh cut "
                                   f"at its sub-axes)", value=where)
    if any(a.is_sub_axis for a in sharding.unreduced) and pm.pieces is None:
        raise SubAxisFound(f"unreduced over a sub-axis: {sharding}", value=where)
    try:
        if pm.pieces is None:
            return as_layout(sharding, pm.spec, rank)
        return _fine_layout(sharding, pm)
    except ReshardError as e:
        raise PartitionError(str(e), value=where) from None


def _fine_layout(sharding, pm: ProgramMesh) -> Layout:
    """A sharding of the program's mesh as a Layout on the fine mesh (each axis or sub-axis as
    the fine axes that make it up)."""
    dims = [tuple(f for a in dim.axes for f in pm.fine_names(a)) for dim in sharding.dims]
    partial = [f for a in sharding.unreduced for f in pm.fine_names(a)]
    groups = sharding.unreduced_by_type() if partial else {}
    if len(groups) > 1:
        raise ReshardError(f"sharding {sharding} mixes reduce types {sorted(groups)}; the planner needs one type "
                           "(the order of different reductions is not defined)")
    return Layout.make(pm.spec, dims, partial, next(iter(groups)) if groups else None)


def _parts(pm: ProgramMesh, axes) -> int:
    n = 1
    names = pm.user_mesh.axis_names
    for a in axes:
        n *= a.size_on(pm.user_mesh) if a.name in names else 1
    return n


def _even_open_dims(sharding, shape, pm: ProgramMesh):
    dims = []
    for size, dim in zip(shape, sharding.dims):
        axes = list(dim.axes)
        while not dim.is_closed and axes and size % _parts(pm, axes):
            axes.pop()
        dims.append(DimSharding(axes, dim.is_closed, dim.priority))
    return TensorSharding(sharding.mesh, dims, sharding._replicated, sharding.unreduced, sharding.reduce_types)


def to_spec(layout: Layout, shape, pm: ProgramMesh):
    """A DistTensorSpec for infer_forward, made once per layout and shape (the rules read their
    tensor arguments as const: one spec serves every call)."""
    key = (layout, tuple(shape))
    spec = pm.specs.get(key)
    if spec is None:
        spec = pm.specs[key] = _new_spec(layout, shape, pm)
    return spec


def _new_spec(layout: Layout, shape, pm: ProgramMesh):
    DistTensorSpec, TensorDistAttr = _spec_types()
    index = pm.axis_index
    attr = TensorDistAttr()
    attr.process_mesh = pm.process_mesh
    attr.multi_dims_mapping = [[index[a] for a in axes] for axes in layout.dims]
    if layout.partial:
        attr._set_partial_dims([index[a] for a in layout.partial], layout.reduce)
    return DistTensorSpec(list(shape), attr)


def _spec_types():
    """(DistTensorSpec, TensorDistAttr), imported on first use (spmdkit imports this package)."""
    global _SPEC_TYPES
    if _SPEC_TYPES is None:
        from .. import DistTensorSpec, TensorDistAttr
        _SPEC_TYPES = (DistTensorSpec, TensorDistAttr)
    return _SPEC_TYPES


_SPEC_TYPES = None


def from_dist_attr(attr, pm: ProgramMesh, rank: int, where: str) -> Layout:
    """A rule's TensorDistAttr as a Layout (one reduce type, as the planner needs)."""
    names = pm.axis_names
    mapping = list(attr.multi_dims_mapping)
    if len(mapping) != rank:
        raise PartitionError(f"the rule gave a rank-{len(mapping)} layout for a rank-{rank} value", op=where)
    status = attr.partial_status
    key = (tuple(map(tuple, mapping)), tuple(status.items()) if status else ())
    hit = pm.dist_layouts.get(key)
    if hit is not None:
        return hit
    dims = [tuple(names[j] for j in mesh_dims) for mesh_dims in mapping]
    status = dict(status)
    kinds = set(status.values())
    if len(kinds) > 1:
        raise PartitionError(f"the rule left partial axes with mixed reduce types {sorted(kinds)}", op=where)
    partial = [names[j] for j in sorted(status)]
    layout = pm.dist_layouts[key] = Layout.make(pm.spec, dims, partial, kinds.pop() if kinds else None)
    return layout


def to_sharding(layout: Layout, pm: ProgramMesh) -> TensorSharding:
    """The Layout as a closed TensorSharding on the program's mesh (partial axes are unreduced;
    the fine mesh's axes as the program mesh's axes and sub-axes)."""
    if pm.pieces is not None:
        partial = pm.user_refs(layout.partial)
        return TensorSharding(pm.name, [DimSharding(pm.user_refs(axes)) for axes in layout.dims], (), partial,
                              {a: layout.reduce for a in partial} if partial else None)
    kinds = {a: layout.reduce for a in layout.partial}
    return TensorSharding(pm.name, [DimSharding(axes) for axes in layout.dims], (), list(layout.partial), kinds)
