"""The typed errors of `spmdkit.sharding`; all are ValueErrors so callers may catch either."""
from __future__ import annotations


class ShardingError(ValueError):
    """Anything wrong with a mesh, an axis reference or a tensor sharding."""


class MeshError(ShardingError):
    """A mesh that cannot exist (duplicate axis name, bad size, device ids that do not fit)."""


def line_and_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of `offset` in `text`."""
    before = text[:max(0, min(offset, len(text)))]
    return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1


def _caret(text: str, line: int, column: int, width: int = 100) -> str:
    """The line and a caret under the column; a long line is cut to a window around it."""
    shown, col = text.split("\n")[line - 1], column - 1
    if len(shown) > width:
        start = max(0, min(col - width // 2, len(shown) - width))
        head, tail = ("..." if start else ""), ("..." if start + width < len(shown) else "")
        shown, col = head + shown[start:start + width] + tail, col - start + len(head)
    return f"\n  {shown}\n  {' ' * col}^"


class ShardingParseError(ShardingError):
    """Malformed sharding or mesh text; names the line, the column (both 1-based) and the text."""

    def __init__(self, message: str, text: str, offset: int):
        self.text = text
        self.offset = max(0, min(offset, len(text)))
        self.line, self.column = line_and_column(text, self.offset)
        self.reason = message
        super().__init__(f"line {self.line}, column {self.column}: {message}" + _caret(text, self.line, self.column))


def _where(tensor, dim, axis) -> str:
    where = f"tensor {tensor!r}"
    if dim is not None:
        where += f", dim {dim}" if isinstance(dim, int) else f", {dim}"
    if axis is not None:
        where += f", axis {axis}"
    return where


class ShardingVerifyError(ShardingError):
    """A sharding that breaks an invariant of the representation; names the tensor, dim and axis.

    `dim` is the tensor dim (an int), or "replicated" / "unreduced" when the axis sits in those
    lists, or None when the problem is the sharding as a whole (rank, mesh).
    """

    def __init__(self, message: str, tensor: str = "tensor", dim=None, axis: str | None = None,
                 text: str | None = None, offset: int | None = None):
        self.tensor, self.dim, self.axis, self.reason = tensor, dim, axis, message
        self.text, self.line, self.column = text, None, None
        full = f"{_where(tensor, dim, axis)}: {message}"
        if text is not None and offset is not None:  # raised for parsed text: point at the culprit
            self.line, self.column = line_and_column(text, offset)
            full = f"line {self.line}, column {self.column}: {full}" + _caret(text, self.line, self.column)
        super().__init__(full)


class ShardingConversionError(ShardingError):
    """A sharding that the target form (dims_mapping, placements) cannot say exactly, or bad
    input to a conversion; names the tensor, and the dim and axis where there is one."""

    def __init__(self, message: str, tensor: str | None = None, dim=None, axis: str | None = None):
        self.tensor, self.dim, self.axis, self.reason = tensor, dim, axis, message
        super().__init__(message if tensor is None else f"{_where(tensor, dim, axis)}: {message}")
