"""One sharded value, three spellings: Shardy's TensorSharding (what the program carries), the
rules' TensorDistAttr/DistTensorSpec (what infer_forward takes and returns), and the reshard
planner's Layout (what the partitioner reasons with: per dim the axes, plus partial axes)."""
from __future__ import annotations

from ..reshard import Layout, MeshSpec, ReshardError, as_layout, as_mesh
from ..sharding import DimSharding, TensorSharding, to_process_mesh
from .errors import PartitionError, value_name


class ProgramMesh:
    """The one mesh a program is sharded over, in the forms each library wants."""

    def __init__(self, name: str, mesh):
        self.name = name
        self.mesh = mesh                    # spmdkit.sharding.Mesh
        self.spec: MeshSpec = as_mesh(mesh)
        self.axis_names = list(mesh.axis_names)
        self.axis_index = {n: i for i, n in enumerate(self.axis_names)}
        self._process_mesh = None
        # memos for one partition (the program's shardings and rules do not change meanwhile):
        # (id(sharding), rank, shape) -> (sharding, Layout): propagation writes equal shardings
        # as one object, and the sharding is kept so that its id is not reused
        self.layouts: dict = {}
        self.signature_numbers: dict = {}  # op_signature(op) -> a small int
        self.signatures: dict = {}  # id(op) -> its signature's number (-1 when it has none)
        self.signed_ops: list = []  # the ops in `signatures` (one by one or a block at a time), kept so that
        # their ids are not reused
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
    def of(program) -> "ProgramMesh":
        if len(program.meshes) != 1:
            raise PartitionError(f"the program must declare exactly one mesh to partition over, it has "
                                 f"{len(program.meshes)} ({', '.join(program.meshes) or 'none'})")
        name, mesh = next(iter(program.meshes.items()))
        return ProgramMesh(name, mesh)


def replicated(rank: int) -> Layout:
    return Layout(tuple(() for _ in range(rank)), (), None)


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
    for d, dim in enumerate(sharding.dims):
        for a in dim.axes:
            if a.is_sub_axis:  # the rules' dims_mapping has no sub-axes
                raise PartitionError(f"dim {d} is split over the sub-axis {a}; the partitioner takes whole mesh "
                                     f"axes only", value=where)
            if a.name not in pm.spec.names:
                raise PartitionError(f"dim {d} is split over axis {a.name!r}, which mesh @{pm.name} "
                                     f"({', '.join(pm.spec.names)}) lacks", value=where)
    try:
        return as_layout(sharding, pm.spec, rank)
    except ReshardError as e:
        raise PartitionError(str(e), value=where) from None


def _parts(pm: ProgramMesh, axes) -> int:
    n = 1
    for a in axes:
        n *= pm.spec.size(a.name) if a.name in pm.spec.names else 1
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
    """The Layout as a closed TensorSharding on the program's mesh (partial axes are unreduced)."""
    kinds = {a: layout.reduce for a in layout.partial}
    return TensorSharding(pm.name, [DimSharding(axes) for axes in layout.dims], (), list(layout.partial), kinds)
