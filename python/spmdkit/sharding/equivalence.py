"""Whether two shardings, possibly on different meshes over the same devices, lay a tensor out
the same way (the seed: `<@mesh_0, [{"b"}]>` on a=4,b=2 is `<@mesh_1, [{"z"}]>` on x=y=z=2).

Same layout = every device holds the same slice, and for each reduce type the devices whose
partial values are combined form the same groups.
"""
from __future__ import annotations

from itertools import product
from typing import Iterable, Mapping

from .errors import MeshError
from .layout import device_slices
from .mesh import MAX_ENUMERATED_DEVICES, Mesh
from .tensor_sharding import TensorSharding
from .verifier import verify


def reduction_groups(sharding: TensorSharding, mesh: Mesh | Mapping[str, Mesh] | None = None
                     ) -> dict[str, frozenset[frozenset[int]]]:
    """Per reduce type, the sets of devices whose partial values that reduction combines."""
    m = verify(sharding, mesh)
    if m.size > MAX_ENUMERATED_DEVICES:
        raise MeshError(f"mesh {m} has {m.size} devices, too many to list (at most {MAX_ENUMERATED_DEVICES})")
    out = {}
    for kind, axes in sharding.unreduced_by_type().items():
        groups: dict[tuple, set[int]] = {}
        for coord in product(*(range(s) for s in m.shape)):
            coords = dict(zip(m.axis_names, coord))
            key = []
            for name, c in coords.items():
                n = m.axis_size(name)
                for a in axes:  # drop the digits of c that the unreduced (sub-)axes own
                    if a.name == name:
                        lo, hi = a.interval(m)
                        post = n // hi
                        c -= ((c // post) % (hi // lo)) * post
                key.append(c)
            groups.setdefault(tuple(key), set()).add(m.device_at(coords))
        out[kind] = frozenset(frozenset(g) for g in groups.values())
    return out


def equivalent(a: TensorSharding, b: TensorSharding, shape: Iterable[int],
               meshes: Mapping[str, Mesh] | None = None) -> bool:
    """Same devices, same slice on each, same reduction groups; meshes may differ in axes."""
    shape = tuple(shape)
    ma, mb = a.resolve_mesh(meshes), b.resolve_mesh(meshes)
    if set(ma.device_ids) != set(mb.device_ids):
        return False
    if device_slices(a, shape, ma) != device_slices(b, shape, mb):
        return False
    return reduction_groups(a, ma) == reduction_groups(b, mb)
