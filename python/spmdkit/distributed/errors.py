"""Typed errors of `spmdkit.distributed`: ValueErrors that name the value (and the op, when one is to blame)."""
from __future__ import annotations


class DistError(ValueError):
    """Bad input to the user API: placements that do not fit the mesh or the shape, a mesh that
    does not fit the devices, results that cannot be laid out as asked."""

    def __init__(self, message: str, value: str | None = None, op: str | None = None):
        self.reason, self.value, self.op = message, value, op
        where = ", ".join(w for w in (f"op '{op}'" if op else "", f"value {value}" if value else "") if w)
        super().__init__(f"{where}: {message}" if where else message)
