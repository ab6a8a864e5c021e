"""import_jax on functions whose jaxprs hold shardings: arrays laid out on an explicit-axes mesh
(JAX writes `sharding` params into broadcast_in_dim and friends, and `reshard` equations),
`jax.sharding.reshard` and `with_sharding_constraint` inside the function (both become
`sdy.sharding_constraint`), and conv_general_dilated's padding pairs. The imported programs print,
parse back, evaluate equal to JAX, and their params rebuild exactly. One device suffices: a 1x1
mesh makes JAX write the same equations."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
from spmdkit.ir import JaxImportError, evaluate, import_jax, parse, print_program
from spmdkit.ir.jax_params import SHARDING_PARAMS, attrs_from_params, params_from_attrs
from spmdkit.sharding import Mesh

MESH = Mesh({"dp": 1, "mp": 1})


def _explicit():
    return jax.make_mesh((1, 1), ("dp", "mp"), axis_types=(AxisType.Explicit,) * 2, devices=jax.devices()[:1])


def _ops(program):
    return [op for op in program.main.body.ops]


def test_shardings_in_an_explicit_mesh_trace_import_as_attributes_and_constraints():
    em = _explicit()
    x = jax.device_put(np.arange(24, dtype=np.float32).reshape(4, 6), NamedSharding(em, P("dp", "mp")))

    def f(x):
        return jax.sharding.reshard(x + jnp.zeros_like(x), P(None, "mp")).sum(0)
    with jax.sharding.set_mesh(em):
        program = import_jax(f, x, meshes={"mesh": MESH})
    names = [op.name for op in _ops(program)]
    assert "jax.reshard" not in names and "sdy.sharding_constraint" in names
    constraint = next(op for op in _ops(program) if op.name == "sdy.sharding_constraint")
    assert str(constraint.attrs["sharding"]) == '#sdy.sharding<@mesh, [{}, {"mp"}]>'
    broadcast = next(op for op in _ops(program) if op.name == "jax.broadcast_in_dim")
    # the trace's AbstractMesh is the program's mesh of the same axes, not a second mesh
    assert str(broadcast.attrs["sharding"]) == '#sdy.sharding<@mesh, [{"dp"}, {"mp"}]>'
    assert broadcast.attrs[SHARDING_PARAMS] == ["sharding"] and list(program.meshes) == ["mesh"]
    text = print_program(program)
    assert print_program(parse(text)) == text
    np.testing.assert_array_equal(np.asarray(evaluate(parse(text), np.asarray(x))[0]), np.asarray(x).sum(0))


def test_with_sharding_constraint_keeps_open_dims():
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]).reshape(1, 1), ("dp", "mp"))
    open_rows = NamedSharding(mesh, P(P.UNCONSTRAINED, "mp"))
    program = import_jax(lambda x: jax.lax.with_sharding_constraint(x * 2, open_rows), np.ones((4, 4), np.float32))
    constraint = next(op for op in _ops(program) if op.name == "sdy.sharding_constraint")
    assert str(constraint.attrs["sharding"]) == '#sdy.sharding<@mesh, [{?}, {"mp"}]>'


def test_a_constraint_that_is_not_a_named_sharding_names_the_op():
    single = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    with pytest.raises(JaxImportError, match=r"op 'jax.sharding_constraint'.*only NamedSharding"):
        import_jax(lambda x: jax.lax.with_sharding_constraint(x, single), np.ones(3, np.float32))


def test_a_sharding_param_without_an_importer_is_refused_by_name():
    named = NamedSharding(_explicit(), P("dp"))
    with pytest.raises(ValueError, match=r"jax.broadcast_in_dim: param 'sharding': cannot keep a param of type "
                                         r"NamedSharding"):
        attrs_from_params("broadcast_in_dim", {"shape": (4,), "broadcast_dimensions": (), "sharding": named})


@settings(max_examples=5, deadline=None)
@given(pads=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=2),
       stride=st.integers(1, 2))
def test_conv_padding_pairs_round_trip_and_evaluate_like_jax(pads, stride):
    rank = len(pads)
    spatial = "HW"[:rank]
    x = np.linspace(-1, 1, 2 * 3 * 7 ** rank, dtype=np.float32).reshape(2, 3, *([7] * rank))
    k = np.linspace(-1, 1, 4 * 3 * 2 ** rank, dtype=np.float32).reshape(4, 3, *([2] * rank))

    def f(x, k):
        return jax.lax.conv_general_dilated(x, k, (stride,) * rank, pads,
                                            dimension_numbers=("NC" + spatial, "OI" + spatial, "NC" + spatial))
    program = import_jax(f, x, k)
    conv = next(op for op in _ops(program) if op.name == "jax.conv_general_dilated")
    assert conv.attrs["padding"] == [v for pair in pads for v in pair]  # flat (lo, hi)*, as the rule reads it
    eqn = jax.make_jaxpr(f)(x, k).jaxpr.eqns[0]
    rebuilt = params_from_attrs("conv_general_dilated", attrs_from_params("conv_general_dilated", eqn.params))
    assert rebuilt == dict(eqn.params)
    back = parse(print_program(program))
    np.testing.assert_allclose(np.asarray(evaluate(back, x, k)[0]), np.asarray(f(x, k)), rtol=1e-6, atol=1e-6)
