"""`ctx` in a kernel expression: where this rank's shards sit in the global tensors."""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod


@dataclass
class RankContext:
    coords: tuple[int, ...] = ()
    offsets: dict[str, tuple[int, ...]] = field(default_factory=dict)
    global_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def offset(self, name: str, dim: int | None = None):
        """The global index of the shard's first element (one dim of it when `dim` is given)."""
        off = self.offsets[name]
        return off if dim is None else (off[dim] if off else 0)

    def global_shape(self, name: str) -> tuple[int, ...]:
        return self.global_shapes[name]

    def global_size(self, name: str) -> int:
        return prod(self.global_shapes[name])
