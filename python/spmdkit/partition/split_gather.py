"""A gather from an operand split along a dim it indexes (an embedding table split on the vocab):
each shard looks up the rows it owns, zeros the rest, and the result is a partial sum over the
table's axes. An all-reduce of the looked-up rows then replaces an all-gather of the table (what
XLA does for a vocab-parallel embedding). The rule keeps indexed dims whole (a lookup can land
anywhere), so this placement is offered to choice.py as a candidate of its own, priced like the
rule's answers, and run by `masked_gather` (localize.py attaches it to the op's attributes).

Only windows of size 1 along the split dims (a row lookup) are taken, for float and integer
values. Index semantics match the global gather: `clip`/`promise_in_bounds` clamp the global
index first; `fill` gives the fill value (on the first shard of the axes, zeros elsewhere) where
the global window is out of bounds.
"""
from __future__ import annotations

from ..reshard import Layout
from .layouts import ProgramMesh

# the attribute key under which localize.py leaves the kernel that runs the op instead of its primitive
LOCAL_KERNEL = "spmdkit.local_kernel"


def split_indexed_axes(op, layout: Layout) -> dict[int, tuple]:
    """{operand dim: axes} of the dims `layout` splits that the gather indexes with window 1."""
    attrs = op.attrs
    sizes = list(attrs.get("slice_sizes") or ())
    batching = set(attrs.get("operand_batching_dims") or ())
    out = {}
    for d in attrs.get("start_index_map") or ():
        if layout.dims[d] and d not in batching and sizes[d] == 1:
            out[d] = layout.dims[d]
    return out


def _numeric(value) -> bool:
    dtype = value.type.dtype
    return dtype != "i1" and (dtype.startswith(("f", "bf", "i", "ui", "si")))


def candidate(op, versions: dict, pm: ProgramMesh, op_layouts):
    """(operand layouts, result layouts) of the gather run on the table as it is split, or None."""
    if op.name != "jax.gather" or not _numeric(op.results[0]):
        return None
    table, indices = op.operands
    have = versions[id(table)][0]
    split = split_indexed_axes(op, have)
    if not split or have.partial:
        return None
    axes = {a for axs in split.values() for a in axs}
    whole = Layout.make(pm.spec, [() if d in split else dims for d, dims in enumerate(have.dims)])
    try:
        operands, results = op_layouts(op, {id(table): whole, id(indices): versions[id(indices)][0]}, pm)
    except Exception:  # the rule refuses the rest: no candidate
        return None
    if results[0].partial or any(axes & layout.used_axes() for layout in (*operands, results[0])):
        return None
    dims = list(operands[0].dims)
    for d, axs in split.items():
        if dims[d]:
            return None
        dims[d] = axs
    partial = tuple(a for a in pm.spec.names if a in axes)
    return ([Layout.make(pm.spec, dims), operands[1]],
            [Layout.make(pm.spec, results[0].dims, partial, "sum")])


def masked_gather(step, inputs, pm) -> list:
    """The kernel: local lookups of the owned rows, others zero (and fill values where due)."""
    import jax
    import jax.numpy as jnp
    from jax.lax import GatherScatterMode

    from ..ir.jax_params import params_from_attrs
    op = step.op
    table, indices = inputs
    layout = step.operand_layouts[0]
    shape = op.operands[0].type.shape
    attrs = {k: v for k, v in step.attrs.items() if k != LOCAL_KERNEL}
    params = params_from_attrs("gather", attrs, [table.dtype, indices.dtype])
    mode = params["mode"]
    fill = mode == GatherScatterMode.FILL_OR_DROP
    params["mode"] = GatherScatterMode.CLIP
    local = layout.local_shape(pm.spec, shape)
    sizes = params["slice_sizes"]
    mine = True          # the window lies in this shard's rows
    valid = True         # the global window is in bounds (fill mode)
    first = True         # this device is the first shard of every split axis
    comps = []
    for k, d in enumerate(params["dimension_numbers"].start_index_map):
        i = indices[..., k]
        if fill:
            valid = valid & (i >= 0) & (i <= shape[d] - sizes[d])
        axes = layout.dims[d]
        if axes:
            i = jnp.clip(i, 0, shape[d] - 1)
            block = 0
            for a in axes:
                block = block * pm.spec.size(a) + jax.lax.axis_index(a)
                first = first & (jax.lax.axis_index(a) == 0)
            i = i - (block * local[d]).astype(i.dtype)
            mine = mine & (i >= 0) & (i < local[d])
            i = jnp.clip(i, 0, local[d] - 1)
        comps.append(i)
    local_indices = jnp.stack(comps, axis=-1).astype(indices.dtype)
    rows = jax.lax.gather_p.bind(table, local_indices, **params)
    dims = params["dimension_numbers"]
    batch = [d for d in range(rows.ndim) if d not in dims.offset_dims]  # the indices' batch dims, in order

    def spread(mask):  # a mask over the indices' batch dims, broadcast over the window dims
        return jax.lax.broadcast_in_dim(mask, rows.shape, batch) if batch else mask
    out = jnp.where(spread(mine), rows, jnp.zeros((), rows.dtype))
    if fill:
        value = params.get("fill_value")
        if value is None:
            value = jnp.nan if jnp.issubdtype(rows.dtype, jnp.inexact) else jnp.iinfo(rows.dtype).min
        pad = jnp.where(first, jnp.asarray(value, rows.dtype), jnp.zeros((), rows.dtype))
        out = jnp.where(spread(valid), out, pad)
    return [out]
