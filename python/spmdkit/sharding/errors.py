"""The typed errors of `spmdkit.sharding`; all are ValueErrors so callers may catch either."""
from __future__ import annotations


class ShardingError(ValueError):
    """Anything wrong with a mesh, an axis reference or a tensor sharding."""


class MeshError(ShardingError):
    """A mesh that cannot exist (duplicate axis name, bad size, device ids that do not fit)."""


class ShardingParseError(ShardingError):
    """Malformed sharding or mesh text; names the line, the column (both 1-based) and the text."""

    def __init__(self, message: str, text: str, offset: int):
        self.text = text
        self.offset = max(0, min(offset, len(text)))
        before = text[: self.offset]
        self.line = before.count("\n") + 1
        self.column = self.offset - (before.rfind("\n") + 1) + 1
        self.reason = message
        line_text = text.split("\n")[self.line - 1]
        caret = " " * (self.column - 1) + "^"
        super().__init__(f"line {self.line}, column {self.column}: {message}\n  {line_text}\n  {caret}")


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

    def __init__(self, message: str, tensor: str = "tensor", dim=None, axis: str | None = None):
        self.tensor, self.dim, self.axis, self.reason = tensor, dim, axis, message
        super().__init__(f"{_where(tensor, dim, axis)}: {message}")


class ShardingConversionError(ShardingError):
    """A sharding that the target form (dims_mapping, placements) cannot say exactly, or bad
    input to a conversion; names the tensor, and the dim and axis where there is one."""

    def __init__(self, message: str, tensor: str | None = None, dim=None, axis: str | None = None):
        self.tensor, self.dim, self.axis, self.reason = tensor, dim, axis, message
        super().__init__(message if tensor is None else f"{_where(tensor, dim, axis)}: {message}")
