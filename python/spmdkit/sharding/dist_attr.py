"""Exact conversions between TensorSharding and spmdkit's Paddle-style TensorDistAttr.

A dim's axes become its multi_dims_mapping entry (mesh dim indices, major to minor) and the
unreduced axes its partial status with their reduce types. What dims_mapping cannot say is
refused with ShardingConversionError: sub-axes always; open dims, priorities and explicitly
replicated axes unless `exact=False` (then they are dropped); an empty mesh, since a 0-D
ProcessMesh still names one device (it converts as the maximal mesh on device 0).
"""
from __future__ import annotations

from typing import Mapping

from .errors import ShardingConversionError
from .mesh import Mesh, MeshAxis
from .tensor_sharding import DimSharding, TensorSharding
from .verifier import verify


def _core():
    from .. import _core
    return _core


def to_process_mesh(mesh: Mesh):
    """A ProcessMesh with the mesh's shape, axis names and device ids."""
    return _core().ProcessMesh(mesh.device_grid(), list(mesh.axis_names))


def from_process_mesh(process_mesh) -> Mesh:
    axes = [MeshAxis(n, s) for n, s in zip(process_mesh.dim_names, process_mesh.shape)]
    return Mesh(axes, list(process_mesh.process_ids))


def to_dist_attr(sharding: TensorSharding, mesh: Mesh | Mapping[str, Mesh] | None = None, *,
                 exact: bool = True, name: str = "tensor", rank: int | None = None):
    """The TensorDistAttr saying the same as `sharding` (verified first).

    A sharding on a maximal mesh is `[]` whatever the tensor's rank (Shardy's rule), so `rank`
    gives the dims_mapping's length there (default 0); elsewhere it must equal sharding.rank.
    """
    m = verify(sharding, mesh, rank, name)
    if exact and not m.axes and not m.has_explicit_device_ids:
        raise ShardingConversionError("an empty mesh <[]> has no ProcessMesh form "
                                      "(a 0-D ProcessMesh names a device; use a maximal mesh)", name)
    mapping = []
    for i, d in enumerate(sharding.dims):
        for a in d.axes:
            if a.is_sub_axis:
                raise ShardingConversionError("a sub-axis has no dims_mapping form", name, i, str(a))
        if exact and d.is_open:
            raise ShardingConversionError(f"an open dim ({d}) has no dims_mapping form", name, i)
        if exact and d.priority is not None:
            raise ShardingConversionError(f"priority p{d.priority} has no dims_mapping form", name, i)
        mapping.append([m.axis_index(a.name) for a in d.axes])
    for where, axes in (("replicated", sharding.replicated), ("unreduced", sharding.unreduced)):
        for a in axes:
            if a.is_sub_axis:
                raise ShardingConversionError("a sub-axis has no dims_mapping form", name, where, str(a))
    if exact and sharding.replicated:
        raise ShardingConversionError("explicitly replicated axes have no dims_mapping form",
                                      name, "replicated", str(sharding.replicated[0]))
    core = _core()
    attr = core.TensorDistAttr()
    attr.process_mesh = to_process_mesh(m)
    if m.is_maximal:
        mapping = [[] for _ in range(rank or 0)]
    attr.multi_dims_mapping = mapping
    for kind, axes in sharding.unreduced_by_type().items():
        attr._set_partial_dims([m.axis_index(a.name) for a in axes], kind)
    return attr


def from_dist_attr(attr, mesh_name: str | None = None, *, name: str = "tensor") -> TensorSharding:
    """A closed TensorSharding from a TensorDistAttr; bound to `mesh_name` or to an inline mesh.

    The result is verified: a mesh dim that splits two dims, or is both split and partial, raises
    ShardingVerifyError naming the dim and axis; a mesh dim outside the mesh ShardingConversionError.
    """
    m = from_process_mesh(attr.process_mesh)

    def axis(j: int, dim) -> str:
        if not 0 <= j < len(m.axes):
            raise ShardingConversionError(f"mesh dim {j} is outside the {len(m.axes)}-D mesh {m}", name, dim)
        return m.axes[j].name

    dims = [DimSharding([axis(j, i) for j in mesh_dims]) for i, mesh_dims in enumerate(attr.multi_dims_mapping)]
    if m.is_maximal:  # a 0-D ProcessMesh: Shardy writes the whole tensor on one device as `[]`
        dims = []
    partial = sorted(attr.partial_status.items())
    unreduced = [axis(j, "unreduced") for j, _ in partial]
    kinds = {axis(j, "unreduced"): kind for j, kind in partial}
    sharding = TensorSharding(mesh_name if mesh_name is not None else m, dims, (), unreduced, kinds)
    verify(sharding, m, None, name)
    return sharding
