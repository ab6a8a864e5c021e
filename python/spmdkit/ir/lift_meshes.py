"""Inline meshes (`#sdy.sharding<mesh<["a"=2]>, [...]>`) lifted to named `sdy.mesh` symbols, as
Shardy's `sdy-lift-inlined-meshes` does before propagating: a mesh equal to a named one takes its
name; another gets `@mesh` (or `@mesh_0`, `@mesh_1`, ... when taken), a maximal one
`@maximal_mesh_<device>`. The program is changed in place."""
from __future__ import annotations

from ..sharding import Mesh, TensorSharding
from ..sharding.tensor_sharding import inline_meshes_made

_SCALARS = frozenset({int, float, bool, str})  # attribute values that hold no sharding


def lift_inlined_meshes(program) -> None:
    if not inline_meshes_made():  # no sharding in this process names an inline mesh
        return
    names: dict = {}

    def name_of(mesh: Mesh) -> str:
        for name, m in program.meshes.items():
            if m == mesh:
                return name
        if mesh.is_maximal:
            base = f"maximal_mesh_{mesh.device_ids[0]}"
        else:
            base = "mesh"
        name, k = base, 0
        while name in program.meshes:
            name, k = f"{base}_{k}", k + 1
        program.meshes[name] = mesh
        return name

    def lift(s):
        if isinstance(s, TensorSharding):
            if not isinstance(s.mesh, Mesh):
                return s
            key = id(s.mesh)
            if key not in names:
                names[key] = name_of(s.mesh)
            return TensorSharding(names[key], s.dims, s.replicated, s.unreduced, s.reduce_types)
        if isinstance(s, list) and any(isinstance(x, TensorSharding) for x in s):
            return [lift(x) for x in s]
        return s

    def walk(block):
        for a in block.args:
            if a.sharding is not None:
                a.sharding = lift(a.sharding)
        for op in block.ops:
            for r in op.results:
                if r.sharding is not None:
                    r.sharding = lift(r.sharding)
            attrs = op.attrs
            if attrs:
                for key, value in attrs.items():  # values replaced in place: the keys stay
                    if type(value) not in _SCALARS:
                        new = lift(value)
                        if new is not value:
                            attrs[key] = new
            for region in op.regions:
                for b in region.blocks:
                    walk(b)

    for fn in program.functions.values():
        fn.result_shardings = [lift(s) for s in fn.result_shardings]
        walk(fn.body)
