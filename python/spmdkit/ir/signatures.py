"""Op signatures by number: the small int that stands for an op's op_signature in memo keys.

Propagation shares one factor table between the ops of a signature, and the partitioner one rule
answer per signature and layouts; both need every op's number. Numbering every op of a step is
a walk over all its values and attributes, so it is done once: propagation numbers the ops, and
parallelize hands the numbers to the partition of the same program (nothing changes the ops in
between). Ops whose attributes propagation rewrites (a constraint's grown sharding) are
forgotten, and numbered again when asked.
"""
from __future__ import annotations

from .. import _core
from .core import frozen_attr, op_signature


class OpSignatures:
    """op_signature(op) -> number (0, 1, ... in order of first sight), and per op its number:
    -1 for an op whose attributes cannot be keyed (op_signature's TypeError)."""

    __slots__ = ("numbers", "by_op", "_kept")

    def __init__(self):
        self.numbers: dict = {}  # op_signature(op) -> number
        self.by_op: dict = {}    # id(op) -> number; its op is kept in _kept, so that the id stays its own
        self._kept: list = []

    def sign(self, ops: list) -> list:
        """The number of every op of `ops`, in order, in one call (_core.signature_numbers makes
        op_signature's keys in C++); known ops keep theirs."""
        numbers = _core.signature_numbers(ops, self.numbers, frozen_attr, self.by_op)
        self._kept.append(tuple(ops))
        return numbers

    def number(self, op) -> int:
        """The number of one op (-1: its attributes cannot be keyed)."""
        number = self.by_op.get(id(op))
        if number is None:
            try:
                number = self.numbers.setdefault(op_signature(op), len(self.numbers))
            except TypeError:
                number = -1
            self.by_op[id(op)] = number
            self._kept.append(op)
        return number

    def forget(self, ops) -> None:
        """Drop these ops' numbers: their attributes changed since they were numbered."""
        for op in ops:
            self.by_op.pop(id(op), None)
