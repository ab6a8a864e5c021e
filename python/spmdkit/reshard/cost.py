"""The alpha-beta cost of one collective on one mesh axis.

A collective over an axis costs `alpha + bytes / bandwidth` for that axis, where `bytes` is what
one device receives (ring algorithms). Defaults follow DTensor's MeshTopoInfo figures: within a
node 87.7 GB/s and 0.6 us; across nodes 0.22x the bandwidth and 2.7 us. Which axes cross nodes
is decided by `devices_per_node` (an axis whose devices span more than that many consecutive
device ids is inter-node) unless `links` names the axis explicitly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from .layout import MeshSpec, ReshardError


@dataclass(frozen=True)
class AxisLink:
    alpha_us: float        # latency per collective, microseconds
    gbytes_per_s: float    # bandwidth, GB/s (1e9 bytes)

    def time_us(self, nbytes: float) -> float:
        return self.alpha_us + nbytes / (self.gbytes_per_s * 1e3)


INTRA_NODE = AxisLink(alpha_us=0.6, gbytes_per_s=87.7)
INTER_NODE = AxisLink(alpha_us=2.7, gbytes_per_s=87.7 * 0.22)


@dataclass(frozen=True)
class CostModel:
    devices_per_node: int = 8
    intra: AxisLink = INTRA_NODE
    inter: AxisLink = INTER_NODE
    links: tuple[tuple[str, AxisLink], ...] = ()   # per-axis overrides, (name, link)

    @staticmethod
    def make(links: dict | None = None, devices_per_node: int = 8, **kw) -> "CostModel":
        if not isinstance(devices_per_node, int) or devices_per_node < 1:
            raise ReshardError(f"devices_per_node must be an integer >= 1, not {devices_per_node!r}")
        pairs = tuple(sorted((links or {}).items()))
        for name, link in pairs:
            if not isinstance(link, AxisLink) or link.gbytes_per_s <= 0 or link.alpha_us < 0:
                raise ReshardError(f"link for axis '{name}' must be an AxisLink with bandwidth > 0, latency >= 0")
        return CostModel(devices_per_node=devices_per_node, links=pairs, **kw)

    def link(self, mesh: MeshSpec, axis: str) -> AxisLink:
        parent = axis.split(":(")[0]   # a factor "x:(m)k" of axis x uses x's override
        for name, link in self.links:
            if name in (axis, parent):
                return link
        names = mesh.names
        stride = math.prod(mesh.size(a) for a in names[names.index(axis) + 1:])
        span = stride * (mesh.size(axis) - 1) + 1
        return self.intra if span <= self.devices_per_node else self.inter

    def slowest(self, mesh: MeshSpec, axes) -> AxisLink:
        """For a collective spanning several axes: the worst latency and bandwidth among them."""
        return _slowest(self, mesh, tuple(axes))

    def collective_us(self, mesh: MeshSpec, kind: str, axes, nbytes: float) -> float:
        """One collective's time over `axes` moving `nbytes` per device: latency (twice for an
        all-reduce, a reduce-scatter then an all-gather) plus bytes over the slowest link."""
        link = self.slowest(mesh, axes)
        hops = 2 if kind == "all_reduce" else 1
        return hops * link.alpha_us + nbytes / (link.gbytes_per_s * 1e3)


@lru_cache(maxsize=65536)
def _slowest(cost: CostModel, mesh: MeshSpec, axes: tuple[str, ...]) -> AxisLink:
    links = [cost.link(mesh, a) for a in axes]
    return AxisLink(max(l.alpha_us for l in links), min(l.gbytes_per_s for l in links))


DEFAULT_COST_MODEL = CostModel()
