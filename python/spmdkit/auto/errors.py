"""Typed errors of `spmdkit.auto`."""
from __future__ import annotations

from typing import Optional


class AutoShardingError(ValueError):
    """Input the search cannot plan for: an op without a sharding rule, a pinned placement that
    the shape cannot divide, a memory limit no plan meets (with the smallest one that works)."""

    def __init__(self, message: str, op: Optional[str] = None, value: Optional[str] = None,
                 smallest_feasible: Optional[float] = None):
        self.reason, self.op, self.value, self.smallest_feasible = message, op, value, smallest_feasible
        where = ", ".join(w for w in (f"op '{op}'" if op else "", f"value {value}" if value else "") if w)
        super().__init__(f"{where}: {message}" if where else message)
