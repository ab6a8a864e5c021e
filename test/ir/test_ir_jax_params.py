"""jax_params: a jaxpr equation's params survive the trip to printable attributes and back.

The proof is exact: for every equation of the GPT training step (30 primitives), rebuilding the
params from the attributes gives params equal to JAX's; attributes carry the registry's names;
random small programs built from many primitives import and evaluate to JAX's values.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax.extend.core import ClosedJaxpr, Jaxpr

from spmdkit.ir import evaluate, import_jax, parse, print_program
from spmdkit.ir.attributes import to_text
from spmdkit.ir.jax_params import (NONE_PARAMS, STRUCTURAL_PARAMS, ParamError, attrs_from_params,
                                   params_from_attrs, primitive)
from spmdkit.models import gpt


def _equations(jaxpr):
    for eqn in jaxpr.eqns:
        yield eqn
        for v in eqn.params.values():
            for sub in (v if isinstance(v, tuple) else (v,)):
                if isinstance(sub, ClosedJaxpr):
                    yield from _equations(sub.jaxpr)
                elif isinstance(sub, Jaxpr):
                    yield from _equations(sub)


@pytest.fixture(scope="module")
def train_equations():
    cfg = gpt.GPTConfig()
    params = gpt.init_params(jax.random.PRNGKey(0), cfg)
    tokens, targets = gpt.example_batch(jax.random.PRNGKey(1), cfg)
    return list(_equations(jax.make_jaxpr(gpt.train_step)(params, tokens, targets).jaxpr))


def _comparable(params):
    out = {}
    for k, v in params.items():
        if k in STRUCTURAL_PARAMS:
            continue
        out[k] = str(v) if isinstance(v, (Jaxpr, ClosedJaxpr)) else v
    return out


def test_every_gpt_param_round_trips_exactly(train_equations):
    prims = set()
    for eqn in train_equations:
        prim = eqn.primitive.name
        if prim == "jit":
            continue
        prims.add(prim)
        attrs = attrs_from_params(prim, eqn.params)
        for key, value in attrs.items():  # printable: the printer's own conversion accepts each
            assert to_text(value, None, key)
        rebuilt = params_from_attrs(prim, attrs, [v.aval.dtype for v in eqn.invars])
        assert _comparable(rebuilt) == _comparable(eqn.params), prim
        assert primitive(prim) is eqn.primitive
    assert len(prims) >= 28


def test_registry_attribute_names(train_equations):
    by_prim = {e.primitive.name: e for e in train_equations}
    dot = attrs_from_params("dot_general", by_prim["dot_general"].params)
    assert {"lhs_contracting_dimensions", "rhs_contracting_dimensions", "lhs_batching_dimensions",
            "rhs_batching_dimensions"} <= set(dot)
    gather = attrs_from_params("gather", by_prim["gather"].params)
    assert {"offset_dims", "collapsed_slice_dims", "start_index_map", "slice_sizes", "operand_batching_dims",
            "start_indices_batching_dims"} <= set(gather)
    scatter = attrs_from_params("scatter-add", by_prim["scatter-add"].params)
    assert {"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", "input_batching_dims",
            "scatter_indices_batching_dims"} <= set(scatter)
    assert "update_jaxpr" not in scatter and "operand_batching_dims" not in scatter
    pow_eqn = by_prim["integer_pow"]
    assert attrs_from_params("integer_pow", pow_eqn.params) == {"y": pow_eqn.params["y"]}
    assert attrs_from_params("convert_element_type", by_prim["convert_element_type"].params)["new_dtype"] in (
        "float32", "int32", "bool")
    bid = attrs_from_params("broadcast_in_dim", by_prim["broadcast_in_dim"].params)
    assert set(bid) == {"shape", "broadcast_dimensions", NONE_PARAMS} and bid[NONE_PARAMS] == ["sharding"]
    assert attrs_from_params("split", by_prim["split"].params)["sizes"] == [32, 32, 32]
    assert all(type(x) is int for x in attrs_from_params("split", by_prim["split"].params)["sizes"])


def test_pad_config_is_flattened_and_restored():
    eqn = jax.make_jaxpr(lambda x: jax.lax.pad(x, 0.0, [(1, 2, 0), (0, 1, 1)]))(jnp.ones((2, 3))).eqns[0]
    attrs = attrs_from_params("pad", eqn.params)
    assert attrs["padding_config"] == [1, 2, 0, 0, 1, 1]
    assert params_from_attrs("pad", attrs) == dict(eqn.params)
    with pytest.raises(ParamError, match="multiple of 3"):
        params_from_attrs("pad", {"padding_config": [1, 2]})


def test_bad_params_and_attributes_are_typed_errors():
    with pytest.raises(ParamError, match="param 'weird'.*object"):
        attrs_from_params("foo", {"weird": object()})
    with pytest.raises(ParamError, match="lhs_contracting_dimensions"):
        params_from_attrs("dot_general", {"rhs_contracting_dimensions": [0]})
    with pytest.raises(ParamError, match="mode='SIDEWAYS'"):
        params_from_attrs("gather", {"offset_dims": [], "collapsed_slice_dims": [], "start_index_map": [],
                                     "operand_batching_dims": [], "start_indices_batching_dims": [],
                                     "mode": "SIDEWAYS"})
    with pytest.raises(ParamError, match="unknown JAX primitive 'no_such_prim'"):
        primitive("no_such_prim")


# -- random programs over many primitives ------------------------------------------------------
UNARY = [jnp.exp, jnp.tanh, jnp.sin, jnp.abs, jnp.negative, jax.nn.sigmoid, lambda a: a ** 3,
         lambda a: jnp.cumsum(a, axis=-1), lambda a: jnp.flip(a, 0), lambda a: jnp.clip(a, -0.5, 0.5),
         lambda a: jnp.sort(a, axis=-1), lambda a: a.astype(jnp.bfloat16).astype(jnp.float32),
         lambda a: jnp.pad(a, ((1, 0), (0, 1)))[1:, :-1], lambda a: jnp.roll(a, 1, axis=1),
         lambda a: jnp.where(a > 0, a, 0.5 * a), lambda a: jnp.max(a, axis=0, keepdims=True) + a,
         lambda a: (a @ a.T)[:, : a.shape[1]] if a.shape[0] >= a.shape[1] else a * 2.0,
         lambda a: jnp.argmax(a, axis=1)[:, None].astype(jnp.float32) + a,
         lambda a: jax.nn.softmax(a, axis=-1), lambda a: jnp.expm1(a) + jnp.log1p(jnp.abs(a))]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(st.integers(0, len(UNARY) - 1), min_size=1, max_size=4),
       rows=st.integers(1, 4), cols=st.integers(1, 4), seed=st.integers(0, 2 ** 16))
def test_random_programs_import_print_parse_and_evaluate_exactly(ops, rows, cols, seed):
    def f(a):
        for i in ops:
            a = UNARY[i](a)
        return a

    x = jax.random.normal(jax.random.PRNGKey(seed), (rows, cols), jnp.float32)
    program = parse(print_program(import_jax(f, x)), strict_ops=False)
    got = jax.jit(lambda a: evaluate(program, a)[0])(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(jax.jit(f)(x)))


# -- any params of the plain kinds round trip, by property ----------------------------------------
_PLAIN = st.one_of(
    st.integers(-2 ** 31, 2 ** 31), st.booleans(), st.text("abcxyz_", min_size=1, max_size=5),
    st.floats(allow_nan=False, width=32), st.none(),
    st.lists(st.integers(0, 9), max_size=4).map(tuple),
    st.frozensets(st.sampled_from(["a", "b", "c"])),
    st.lists(st.lists(st.integers(0, 3), max_size=2).map(tuple), max_size=2).map(tuple),
    st.integers(0, 100).map(np.int64))


@settings(max_examples=60, deadline=None)
@given(params=st.dictionaries(st.sampled_from(["alpha", "axes", "sizes", "flag", "name", "groups", "limit"]), _PLAIN,
                              max_size=5),
       dtype=st.sampled_from([None, "float32", "bfloat16", "int8", "bool"]))
def test_plain_params_round_trip(params, dtype):
    if dtype is not None:
        params = dict(params, new_dtype=jnp.dtype(dtype))
    attrs = attrs_from_params("some_primitive", params)
    for key, value in attrs.items():
        assert to_text(value, None, key)
    assert params_from_attrs("some_primitive", attrs) == params


@pytest.mark.parametrize("prim,params", [
    ("round", {"rounding_method": jax.lax.RoundingMethod.TO_NEAREST_EVEN}),
    ("round", {"rounding_method": jax.lax.RoundingMethod.AWAY_FROM_ZERO}),
    ("fft", {"fft_type": jax.lax.FftType.IRFFT, "fft_lengths": (4, 8)})])
def test_int_enum_params_come_back_as_their_members(prim, params):
    # an IntEnum is kept as its number (what the rules read); binding needs the member back
    attrs = attrs_from_params(prim, params)
    assert all(type(v) is int for k, v in attrs.items() if k in ("rounding_method", "fft_type"))
    back = params_from_attrs(prim, attrs)
    assert back == params and all(type(back[k]) is type(v) for k, v in params.items())
