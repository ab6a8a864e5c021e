"""Our placements to and from PaddlePaddle's own objects (paddle.distributed.Shard, ...).

Paddle is imported only when these are called. Paddle's `Shard(dim, shard_order=k)` means
what ours does (0 = the major mesh axis of a co-sharded dim); Paddle's default order 0 on every
co-shard falls back to mesh order, as ours does with `shard_order=None`.
"""
from __future__ import annotations

from typing import Sequence

from .errors import ShardingConversionError
from .placements import Partial, Placement, Replicate, Shard

_PADDLE_NAMES = {"sum": "kRedSum", "max": "kRedMax", "min": "kRedMin", "prod": "kRedProd",
                 "avg": "kRedAvg", "any": "kRedAny", "all": "kRedAll"}


def to_paddle_placements(placements: Sequence[Placement]) -> list:
    import paddle.distributed as dist
    out = []
    for p in placements:
        if isinstance(p, Shard):
            out.append(dist.Shard(p.dim) if p.shard_order is None else dist.Shard(p.dim, shard_order=p.shard_order))
        elif isinstance(p, Partial):
            out.append(dist.Partial(getattr(dist.ReduceType, _PADDLE_NAMES[p.reduce_type])))
        elif isinstance(p, Replicate):
            out.append(dist.Replicate())
        else:
            raise ShardingConversionError(f"{p!r} is not a Shard, Replicate or Partial placement")
    return out


def from_paddle_placements(placements: Sequence) -> list[Placement]:
    """Paddle placements as ours. A co-sharded dim's axes are ranked as Paddle ranks them (a
    stable sort by shard order, so ties keep mesh order) and get explicit orders 0, 1, ..."""
    by_dim: dict[int, list[tuple[int, int]]] = {}
    for j, p in enumerate(placements):
        if p.is_shard():
            by_dim.setdefault(p.get_dim(), []).append((p.get_co_shard_order(), j))
    position = {}
    for entries in by_dim.values():
        if len(entries) > 1:
            for k, (_, j) in enumerate(sorted(entries, key=lambda e: e[0])):
                position[j] = k
    names = {v: k for k, v in _PADDLE_NAMES.items()}
    out: list[Placement] = []
    for j, p in enumerate(placements):
        if p.is_shard():
            out.append(Shard(p.get_dim(), position.get(j)))
        elif p.is_partial():
            out.append(Partial(names[p.reduce_type().name]))
        elif p.is_replicated():
            out.append(Replicate())
        else:
            raise ShardingConversionError(f"Paddle placement {p!r} has no counterpart")
    return out
