"""PRNG key arrays in an imported jaxpr: replaced by their uint32 data, as JAX's own lowering does.

A `key<fry>[S]` value is held in the IR as its physical array `uint32[S + (2,)]` (the key
implementation's key shape appended). An equation that reads or writes keys is replaced by the
jaxpr of what JAX lowers it to, on physical arrays:
- `random_seed` / `random_split` / `random_fold_in` / `random_bits`: the key implementation's
  function (threefry: `threefry2x32` over counters from `iota_2x32_shape`), vmapped over the
  key array's dims exactly as JAX's lowering rules do, so the bits are the same bits;
- `random_wrap` / `random_unwrap`: the identity on the data;
- any other primitive applied to keys (slice, squeeze, broadcast_in_dim, select_n, gather,
  concatenate, ...): the same primitive vmapped over the trailing key-data dims, so JAX's
  batching rules rewrite its params for the longer physical shape.
The importer lowers that jaxpr in place of the equation (as it does a scan). The PRNG internals
of `jax._src` (private) come through spmdkit.jax_compat.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

RANDOM_PRIMITIVES = frozenset({"random_seed", "random_split", "random_fold_in", "random_bits", "random_wrap",
                               "random_unwrap"})


def is_key(aval) -> bool:
    dtype = getattr(aval, "dtype", None)
    if dtype is None:
        return False
    try:
        return _is_key_dtype(dtype)
    except TypeError:  # a dtype that cannot be hashed: asked directly
        return _is_key_dtype.__wrapped__(dtype)


@lru_cache(maxsize=256)
def _is_key_dtype(dtype) -> bool:
    """Asked once per dtype: an importer asks for every value of a program."""
    from ..jax_compat import prng_internals
    dtypes = prng_internals()[0]
    return dtypes.issubdtype(dtype, dtypes.prng_key)


def key_impl(aval):
    """The PRNG implementation of a key array or key aval (for jax.random.wrap_key_data; `.name`
    is the name it takes too, e.g. threefry2x32)."""
    return aval.dtype._impl


def key_data_shape(aval) -> tuple:
    """The shape of a key array's (or key aval's) uint32 data: its own shape, then the key's."""
    return tuple(aval.shape) + tuple(key_impl(aval).key_shape)


def physical_aval(aval):
    """The uint32 aval that holds a key aval's data (other avals unchanged)."""
    if not is_key(aval):
        return aval
    from ..jax_compat import prng_internals
    return prng_internals()[1].physical_aval(aval)


def physical_data(value, aval):
    """The uint32 data of a key constant (other constants unchanged)."""
    if not is_key(aval):
        return value
    import jax
    return jax.random.key_data(value)


def touches_keys(eqn) -> bool:
    return eqn.primitive.name in RANDOM_PRIMITIVES or any(is_key(v.aval) for v in (*eqn.invars, *eqn.outvars))


def physical_jaxpr(eqn) -> Any:
    """The closed jaxpr, over physical arrays, that computes `eqn` (see the module docstring)."""
    import jax

    specs = [jax.ShapeDtypeStruct(physical_aval(v.aval).shape, physical_aval(v.aval).dtype) for v in eqn.invars]
    fn = _physical_fn(eqn)
    return jax.make_jaxpr(fn)(*specs)


def _physical_fn(eqn):
    from ..jax_compat import prng_internals
    prng = prng_internals()[2]

    prim, params = eqn.primitive, dict(eqn.params)
    name = prim.name
    in_avals = [v.aval for v in eqn.invars]
    out_avals = [v.aval for v in eqn.outvars]
    key_aval = next((a for a in (*in_avals, *out_avals) if is_key(a)), None)
    impl = params.get("impl") or (key_aval.dtype._impl if key_aval is not None else None)

    if name in ("random_wrap", "random_unwrap"):
        return lambda data: data
    if name == "random_seed":
        return lambda seeds: prng.random_seed_impl_base(seeds, impl=impl)
    if name == "random_split":
        return lambda data: prng.random_split_impl_base(impl, data, in_avals[0].ndim, shape=params["shape"])
    if name == "random_fold_in":
        return lambda data, msgs: prng.random_fold_in_impl_base(impl, data, msgs, in_avals[0].shape)
    if name == "random_bits":
        return lambda data: prng.random_bits_impl_base(impl, data, in_avals[0].ndim, bit_width=params["bit_width"],
                                                       shape=params["shape"])
    return _vmapped_over_key_data(eqn, impl, in_avals, out_avals)


def _vmapped_over_key_data(eqn, impl, in_avals, out_avals):
    """The primitive bound on key data, vmapped once per trailing key-data dim."""
    import jax

    prim, params = eqn.primitive, dict(eqn.params)
    key_in = [is_key(a) for a in in_avals]
    key_out = [is_key(a) for a in out_avals]
    if prim.multiple_results:
        def bound(*args):
            return list(prim.bind(*args, **params))
        out_axes = [-1 if k else None for k in key_out]
    else:
        def bound(*args):
            return prim.bind(*args, **params)
        out_axes = -1 if key_out[0] else None
    if any(not k for k in key_out):
        raise TypeError(f"jax.{prim.name}: reads PRNG keys and returns a non-key value; only the random_* "
                        "primitives may do that")
    fn = bound
    for _ in range(len(impl.key_shape)):
        fn = jax.vmap(fn, in_axes=[-1 if k else None for k in key_in], out_axes=out_axes)
    return fn
