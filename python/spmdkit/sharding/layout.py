"""Which part of a tensor each device holds under a sharding (for tests and simulators).

A device's coordinate along a sub-axis "x":(m)k of an axis of size n is (c // (n/(m*k))) % k,
c its coordinate along "x" (the axis reshaped to [m, k, n/(m*k)]). A dim split over axes
a1..ar (major to minor) is cut into prod(sizes) ceil-div blocks, like Paddle and spmdkit's
simulator; a device takes the block whose index is the mixed-radix number of its coordinates.
Unreduced axes do not cut: those devices hold partial values of the same block.
"""
from __future__ import annotations

from itertools import product
from typing import Iterable, Mapping

from .axes import AxisRef
from .errors import MeshError
from .mesh import MAX_ENUMERATED_DEVICES, Mesh
from .tensor_sharding import TensorSharding
from .verifier import verify


def axis_coordinate(axis: AxisRef, mesh: Mesh, coords: Mapping[str, int]) -> int:
    c = coords[axis.name]
    if not axis.is_sub_axis:
        return c
    post = mesh.axis_size(axis.name) // (axis.pre_size * axis.size)
    return (c // post) % axis.size


def device_slices(sharding: TensorSharding, shape: Iterable[int],
                  mesh: Mesh | Mapping[str, Mesh] | None = None) -> dict[int, tuple[slice, ...]]:
    """Device id -> the slice of the global tensor it holds (empty slices past uneven ends)."""
    shape = tuple(shape)
    m = verify(sharding, mesh, shape)
    if m.size > MAX_ENUMERATED_DEVICES:
        raise MeshError(f"mesh {m} has {m.size} devices, too many to list (at most {MAX_ENUMERATED_DEVICES})")
    if m.is_maximal:
        return {m.device_ids[0]: tuple(slice(0, n) for n in shape)}
    out = {}
    for coord in product(*(range(s) for s in m.shape)):
        coords = dict(zip(m.axis_names, coord))
        slices = []
        for n, d in zip(shape, sharding.dims):
            index, count = 0, 1
            for a in d.axes:
                size = a.size_on(m)
                index = index * size + axis_coordinate(a, m, coords)
                count *= size
            block = -(-n // count)
            slices.append(slice(min(index * block, n), min((index + 1) * block, n)))
        out[m.device_at(coords)] = tuple(slices)
    return out
