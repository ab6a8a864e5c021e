"""`ctx` in a kernel expression: where this rank's shards sit in the global tensors."""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

import numpy as np


@dataclass
class RankContext:
    coords: tuple[int, ...] = ()
    offsets: dict[str, tuple[int, ...]] = field(default_factory=dict)
    global_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    mesh_shape: tuple[int, ...] = ()
    placements: dict = field(default_factory=dict)   # input name -> its Placement on this call
    peer_shard: dict = field(default_factory=dict)   # input name -> (coords -> that rank's shard)

    def offset(self, name: str, dim: int | None = None):
        """The global index of the shard's first element (one dim of it when `dim` is given)."""
        off = self.offsets[name]
        return off if dim is None else (off[dim] if off else 0)

    def global_shape(self, name: str) -> tuple[int, ...]:
        return self.global_shapes[name]

    def global_size(self, name: str) -> int:
        return prod(self.global_shapes[name])

    def gather(self, name: str, dim: int, local):
        """(`local` joined along tensor dim `dim` with the shards of the ranks that differ from this
        one only in the mesh dims splitting that dim, this shard's offset in it): what a kernel
        sees that communicates over exactly those ranks (c_softmax_with_cross_entropy all-reduces
        over the ranks splitting the class axis). Partial addends are not reduced."""
        dims = self.placements[name].dims[dim] if name in self.placements else ()
        if not dims:
            return local, 0
        blocks = []
        for j in range(prod(self.mesh_shape[m] for m in dims)):  # block j: mixed radix, outer first
            coords, rest = list(self.coords), j
            for m in reversed(dims):
                coords[m], rest = rest % self.mesh_shape[m], rest // self.mesh_shape[m]
            blocks.append(self.peer_shard[name](tuple(coords)))
        return np.concatenate(blocks, axis=dim), self.offset(name, dim % len(self.offsets[name]))
