"""Typed errors of `spmdkit.partition`: ValueErrors that name the op and the value."""
from __future__ import annotations

from typing import Optional


class PartitionError(ValueError):
    """A program the partitioner cannot split: an op with no rule, params that cannot run on
    local shapes, a layout that does not fit the mesh or the shape."""

    def __init__(self, message: str, op: Optional[str] = None, value: Optional[str] = None):
        self.reason, self.op, self.value = message, op, value
        where = ", ".join(w for w in (f"op '{op}'" if op else "", f"value {value}" if value else "") if w)
        super().__init__(f"{where}: {message}" if where else message)


class LocalizeError(PartitionError):
    """An op whose params hold global sizes that cannot be made local under its layouts."""


def value_name(value) -> str:
    """A printable name of an IR value for messages."""
    if value is None:
        return "?"
    if value.name:
        return f"%{value.name}"
    if value.is_block_arg:
        return f"%arg{value.index}"
    return f"{getattr(value.owner, 'name', '?')}#{value.index}"
