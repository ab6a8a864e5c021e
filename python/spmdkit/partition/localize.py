"""Params that carry global sizes, rewritten for the local shards an op runs on.

A table per primitive (data): each entry says which attribute holds what, and the op runs on
local shapes once it is rewritten. Primitives not in the table have params that do not depend on
sizes (dimension numbers, axes, permutations) and run unchanged. A dim that a param addresses as
a whole (the split axis, a concatenate dim, a scan axis, a padded or sliced dim, an argmax axis)
must be whole on this device; otherwise LocalizeError names the op, the param and the dim.
"""
from __future__ import annotations

from typing import Callable

from ..reshard import Layout
from .errors import LocalizeError
from .layouts import ProgramMesh
from .split_gather import LOCAL_KERNEL, masked_gather, split_indexed_axes


class Context:
    """What a localizer sees: the op, its operand and result layouts, and the mesh."""

    def __init__(self, op, operands: list[Layout], results: list[Layout], pm: ProgramMesh):
        self.op, self.operands, self.results, self.pm = op, operands, results, pm

    def local_result_shape(self, i: int = 0) -> list[int]:
        layout, shape = self.results[i], self.op.results[i].type.shape
        key = (id(layout), shape)  # the layout is kept in the memo, so that its id stays its own
        hit = self.pm.local_shapes.get(key)
        if hit is None:
            hit = self.pm.local_shapes[key] = (layout, layout.local_shape(self.pm.spec, shape))
        return list(hit[1])

    def require_whole(self, layout: Layout, dims, param: str, what: str = "operand") -> None:
        for d in dims:
            if layout.dims[d]:
                raise LocalizeError(f"param {param!r} addresses dim {d} of the {what} as a whole, but the layout "
                                    f"splits it over {list(layout.dims[d])}; the rule must make it whole",
                                    op=self.op.name)


def _result_shape(param: str) -> Callable:
    """The param is the result's shape: it becomes the local result shape."""
    def run(ctx: Context, attrs: dict) -> None:
        attrs[param] = ctx.local_result_shape()
    return run


def _whole_dims(param: str, operand: int = 0, many: bool = False) -> Callable:
    """The param names operand dims the op treats as whole (scan/arg-reduce/split axes)."""
    def run(ctx: Context, attrs: dict) -> None:
        dims = attrs[param] if many else [attrs[param]]
        for i in (range(len(ctx.operands)) if operand is None else [operand]):
            rank = len(ctx.operands[i].dims)
            ctx.require_whole(ctx.operands[i], [d % rank for d in dims], param)
    return run


def _slice_sizes(ctx: Context, attrs: dict) -> None:
    """gather / dynamic_slice: a window spanning a split dim whole becomes the local dim. A
    gather whose result is partial over the axes of the row dims it looks up is a split lookup
    (split_gather.py): those windows stay 1 and its kernel runs the op."""
    layout, shape = ctx.operands[0], ctx.op.operands[0].type.shape
    local = layout.local_shape(ctx.pm.spec, shape)
    sizes = list(attrs["slice_sizes"])
    batching = set(attrs.get("operand_batching_dims") or ())  # one row per batch index: size 1 anywhere
    looked_up = {}
    if ctx.op.name == "jax.gather" and ctx.results[0].partial:
        looked_up = split_indexed_axes(ctx.op, layout)
        if {a for axes in looked_up.values() for a in axes} <= set(ctx.results[0].partial):
            attrs[LOCAL_KERNEL] = masked_gather
            batching |= set(looked_up)
    for d, size in enumerate(sizes):
        if layout.dims[d] and d not in batching:
            if size != shape[d]:
                raise LocalizeError(f"slice_sizes[{d}] = {size} is a part of dim {d} (size {shape[d]}), which the "
                                    f"layout splits over {list(layout.dims[d])}", op=ctx.op.name)
            sizes[d] = local[d]
    attrs["slice_sizes"] = sizes


def _pad(ctx: Context, attrs: dict) -> None:
    """Padding is global: a split dim must be unpadded (then the local op pads nothing there)."""
    config = attrs["padding_config"]
    padded = [d for d in range(len(config) // 3) if any(config[3 * d:3 * d + 3])]
    ctx.require_whole(ctx.operands[0], padded, "padding_config")


def _slice(ctx: Context, attrs: dict) -> None:
    """A split dim passes through whole ([0:size:1], the rule keeps cut dims whole): its limit
    becomes the local size. Cut dims keep their global bounds (they are whole here)."""
    shape = ctx.op.operands[0].type.shape
    layout = ctx.operands[0]
    starts, limits = list(attrs["start_indices"]), list(attrs["limit_indices"])
    strides = list(attrs.get("strides") or [1] * len(shape))
    cut = [d for d in range(len(shape)) if (starts[d], limits[d], strides[d]) != (0, shape[d], 1)]
    ctx.require_whole(layout, cut, "start_indices")
    local = layout.local_shape(ctx.pm.spec, shape)
    attrs["limit_indices"] = [local[d] if layout.dims[d] else limits[d] for d in range(len(shape))]


def _split(ctx: Context, attrs: dict) -> None:
    _whole_dims("axis")(ctx, attrs)


LOCALIZERS: dict[str, Callable] = {
    "jax.broadcast_in_dim": _result_shape("shape"),
    "jax.reshape": _result_shape("new_sizes"),
    "jax.iota": _result_shape("shape"),
    "jax.split": _split,
    "jax.concatenate": _whole_dims("dimension", operand=None),
    "jax.gather": _slice_sizes,
    "jax.dynamic_slice": _slice_sizes,
    "jax.pad": _pad,
    "jax.slice": _slice,
    "jax.rev": _whole_dims("dimensions", many=True),
    "jax.argmax": _whole_dims("axes", many=True),
    "jax.argmin": _whole_dims("axes", many=True),
    **{f"jax.{p}": _whole_dims("axis") for p in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp")},
}


def localize(op, operands: list[Layout], results: list[Layout], pm: ProgramMesh) -> dict:
    """The op's attributes with global sizes made local (a new dict; the op is not changed)."""
    attrs = dict(op.attrs)
    fix = LOCALIZERS.get(op.name)
    if fix is not None:
        try:
            fix(Context(op, operands, results, pm), attrs)
        except KeyError as e:
            raise LocalizeError(f"attribute {e.args[0]!r} is missing", op=op.name) from None
    return attrs
