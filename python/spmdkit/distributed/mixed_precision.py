"""Mixed precision for steps run through `parallelize`: compute in bf16, keep float32 master weights.

    loss_bf16 = mixed_precision(loss_fn)             # loss_fn(params, *batch) -> scalar
    loss, grads = jax.value_and_grad(loss_bf16)(params, *batch)   # params, grads: float32

The wrapped loss casts every floating param leaf to the compute dtype inside the traced step, so
the forward and backward matmuls, and the collectives the partitioner places between them, run
on bf16 values (the plan prices them at 2 bytes per element: half the float32 bytes). The cast's
transpose brings each gradient back to float32, so the optimizer updates float32 masters.

No loss scaling: bf16 has float32's exponent range (8 bits), so small gradients do not underflow
as they do in float16; `loss_scale` exists for float16 compute, where they do.
"""
from __future__ import annotations

from .errors import DistError

PRECISIONS = ("f32", "bf16")


def compute_dtype_of(precision: str):
    """The jnp dtype of a precision name ('f32' or 'bf16')."""
    import jax.numpy as jnp
    if precision not in PRECISIONS:
        raise DistError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    return jnp.float32 if precision == "f32" else jnp.bfloat16


def cast_floating(tree, dtype):
    """`tree` with every floating leaf cast to `dtype` (integer leaves, e.g. tokens, unchanged)."""
    import jax
    import jax.numpy as jnp

    def cast(x):
        return x.astype(dtype) if jnp.issubdtype(jnp.result_type(x), jnp.floating) else x
    return jax.tree_util.tree_map(cast, tree)


def mixed_precision(loss_fn, compute_dtype=None, loss_scale: float = 1.0):
    """`loss_fn(params, *args)` computed with params cast to `compute_dtype` (bf16 by default);
    returns the float32 loss times `loss_scale` (divide the gradients by it; 1.0 for bf16)."""
    import jax.numpy as jnp
    dtype = jnp.bfloat16 if compute_dtype is None else compute_dtype
    if not jnp.issubdtype(dtype, jnp.floating):
        raise DistError(f"mixed_precision: compute_dtype must be a floating dtype, got {dtype!r}")
    if not loss_scale > 0:
        raise DistError(f"mixed_precision: loss_scale must be positive, got {loss_scale!r}")

    def wrapped(params, *args, **kwargs):
        loss = loss_fn(cast_floating(params, dtype), *args, **kwargs)
        loss = loss.astype(jnp.float32)
        return loss * loss_scale if loss_scale != 1.0 else loss
    wrapped.__name__ = f"{getattr(loss_fn, '__name__', 'loss')}_{jnp.dtype(dtype).name}"
    return wrapped
