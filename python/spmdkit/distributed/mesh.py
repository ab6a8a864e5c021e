"""`ProcessMesh`: Paddle's name for a grid of devices with named dims, mapped onto spmdkit's
sharding Mesh (what programs carry) and a jax Mesh (what runs)."""
from __future__ import annotations

import numpy as np

from ..sharding import Mesh
from .errors import DistError


class ProcessMesh:
    """A grid of device ids with one name per dim.

    `ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])` (Paddle's form: nested ids) or
    `ProcessMesh(shape=(2, 2), dim_names=["dp", "mp"])` (ids 0..n-1 row-major). Ids are JAX
    device ids (`jax.devices()[i].id`, global across processes)."""

    def __init__(self, mesh=None, dim_names=None, *, shape=None):
        if (mesh is None) == (shape is None):
            raise DistError("ProcessMesh takes either nested device ids or shape=..., not both or neither")
        if shape is not None:
            shape = tuple(int(s) for s in shape)
            ids = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
        else:
            ids = np.asarray(mesh)
            if ids.dtype.kind not in "iu" or ids.ndim == 0:
                raise DistError(f"ProcessMesh ids must be a nested list of integers, got {mesh!r}")
        if any(s < 1 for s in ids.shape):
            raise DistError(f"ProcessMesh shape {list(ids.shape)} has an empty dim")
        if dim_names is None:
            dim_names = [f"d{i}" for i in range(ids.ndim)]
        dim_names = [str(n) for n in dim_names]
        if len(dim_names) != ids.ndim or len(set(dim_names)) != len(dim_names):
            raise DistError(f"ProcessMesh of shape {list(ids.shape)} needs {ids.ndim} distinct dim names, "
                            f"got {dim_names}")
        if len(set(ids.flat)) != ids.size or ids.min() < 0:
            raise DistError(f"ProcessMesh ids must be distinct non-negative integers, got {ids.tolist()}")
        self._ids = ids.astype(np.int64)
        self.dim_names = dim_names
        self._jax_mesh = None

    shape = property(lambda self: list(self._ids.shape))
    ndim = property(lambda self: self._ids.ndim)
    process_ids = property(lambda self: [int(i) for i in self._ids.flat])
    mesh = property(lambda self: self._ids.tolist())

    def get_dim_size(self, name: str) -> int:
        if name not in self.dim_names:
            raise DistError(f"mesh has no dim {name!r} (dims: {self.dim_names})")
        return self.shape[self.dim_names.index(name)]

    @property
    def sharding_mesh(self) -> Mesh:
        """The same grid as spmdkit.sharding.Mesh (axes named as the dims)."""
        return Mesh(dict(zip(self.dim_names, self.shape)), device_ids=self.process_ids)

    def jax_mesh(self):
        """A jax.sharding.Mesh of the devices with these ids (Auto axis types)."""
        if self._jax_mesh is None:
            import jax
            from jax.sharding import AxisType
            by_id = {int(d.id): d for d in jax.devices()}
            missing = [i for i in self.process_ids if i not in by_id]
            if missing:
                raise DistError(f"ProcessMesh {self} names devices {missing} that JAX does not have (it has "
                                f"{len(by_id)}; for virtual CPU devices set XLA_FLAGS="
                                f"--xla_force_host_platform_device_count=N before JAX starts)")
            devices = np.array([by_id[i] for i in self.process_ids], dtype=object).reshape(self.shape)
            self._jax_mesh = jax.sharding.Mesh(devices, tuple(self.dim_names),
                                               axis_types=(AxisType.Auto,) * self.ndim)
        return self._jax_mesh

    def __eq__(self, other):
        return isinstance(other, ProcessMesh) and self.dim_names == other.dim_names and \
            np.array_equal(self._ids, other._ids)

    def __hash__(self):
        return hash((tuple(self.dim_names), tuple(self.shape), tuple(self.process_ids)))

    def __repr__(self):
        return f"ProcessMesh({self.mesh}, dim_names={self.dim_names})"


def as_process_mesh(mesh) -> ProcessMesh:
    """A ProcessMesh from a ProcessMesh or a text like '2x2' (dims named dp, mp, sp, then d3, d4...)
    or 'dp=2,mp=2' (spmdkit.sharding.mesh_text: the syntax of every command)."""
    if isinstance(mesh, ProcessMesh):
        return mesh
    if isinstance(mesh, str):
        from ..sharding.mesh_text import MeshTextError, parse_mesh_text
        try:
            parsed = parse_mesh_text(mesh)
        except MeshTextError as e:
            raise DistError(str(e)) from None
        shape = list(parsed.sizes)
        names = parsed.names or ["dp", "mp", "sp"][:len(shape)] + [f"d{i}" for i in range(3, len(shape))]
        return ProcessMesh(shape=shape, dim_names=list(names))
    raise DistError(f"expected a ProcessMesh, got {type(mesh).__name__}")
