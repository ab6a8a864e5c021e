"""Typed errors of `spmdkit.ir`: every one is a ValueError naming where (line, column, op, value).

`IRParseError` is text MLIR cannot read; `IRVerifyError` and its subclasses are text that reads but
breaks a rule (an op in no dialect and no rule registry, a sharding on an unknown mesh or axis, a
sharding whose rank is not its value's); `UnsupportedIRError` is valid MLIR that the IR cannot
hold (dynamic shapes, tokens, blocks with successors).
"""
from __future__ import annotations

import re
from typing import Optional


class IRError(ValueError):
    """Anything wrong with a program or its text. `line`/`column` are 1-based, None when unknown."""

    def __init__(self, message: str, line: Optional[int] = None, column: Optional[int] = None,
                 op: Optional[str] = None, value: Optional[str] = None, source: Optional[str] = None):
        self.reason = message
        self.line = line
        self.column = column
        self.op = op
        self.value = value
        where = []
        if line is not None:
            where.append(f"line {line}" + (f", column {column}" if column is not None else ""))
        if op is not None:
            where.append(f"op '{op}'")
        if value is not None:
            where.append(f"value {value}")
        text = (": ".join([", ".join(where), message]) if where else message)
        if source is not None and line is not None:
            lines = source.splitlines()
            if 0 < line <= len(lines):
                text += "\n  " + lines[line - 1]
                if column is not None and column > 0:
                    text += "\n  " + " " * (column - 1) + "^"
        super().__init__(text)


class IRParseError(IRError):
    """Text that MLIR cannot parse (syntax, undeclared values, types that disagree)."""


class IRVerifyError(IRError):
    """Text that parses but that MLIR's verifiers or ours reject."""


class UnknownOpError(IRVerifyError):
    """An op in no registered dialect and with no rule of that name in the registry."""


class UnknownMeshError(IRVerifyError):
    """A sharding that names a mesh the module does not declare."""


class UnknownAxisError(IRVerifyError):
    """A sharding that names an axis its mesh does not have."""


class ShardingRankError(IRVerifyError):
    """A sharding whose number of dims is not the rank of the value it annotates."""


class UnsupportedIRError(IRError):
    """Valid MLIR that this IR does not represent (dynamic shapes, non-tensor types, successors)."""


class AttributeConversionError(IRError):
    """A Python attribute value that has no MLIR attribute form (or the reverse)."""


# MLIR's diagnostics name the problem in words; map the ones we test for onto typed errors.
_CLASSIFY = [
    (re.compile(r"unknown mesh"), UnknownMeshError),
    (re.compile(r"unknown axis"), UnknownAxisError),
    (re.compile(r"doesn't match tensor rank|doesn't match the number of dims|rank mismatch"), ShardingRankError),
    (re.compile(r"unregistered operation|is unknown \(tried"), UnknownOpError),
]
_OP_IN_MESSAGE = re.compile(r"'([A-Za-z_][\w$.-]*)' op\b")
_LOC = re.compile(r'loc\("(?P<file>(?:[^"\\]|\\.)*)":(?P<line>\d+):(?P<col>\d+)')


def location_line_column(location) -> tuple[Optional[int], Optional[int]]:
    """(line, column) of an MLIR location printed as `loc("file":L:C)`, else (None, None)."""
    m = _LOC.search(str(location))
    return (int(m.group("line")), int(m.group("col"))) if m else (None, None)


def error_from_diagnostic(message: str, location, source: Optional[str] = None,
                          default: type = IRParseError) -> IRError:
    """A typed error for one MLIR error diagnostic."""
    line, column = location_line_column(location)
    cls = default
    for pattern, candidate in _CLASSIFY:
        if pattern.search(message):
            cls = candidate
            break
    m = _OP_IN_MESSAGE.search(message)
    op = m.group(1) if m else None
    if cls is UnknownOpError and op is None:
        found = re.search(r"operation '([^']+)'|custom op '([^']+)'", message)
        if found:
            op = found.group(1) or found.group(2)
    return cls(message, line=line, column=column, op=op, source=source)
