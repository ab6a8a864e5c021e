"""Bad input to the partitioner: typed errors (ValueError subclasses) naming the op and the value.
Runs on one device: partitioning needs no JAX devices, only the rules."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from spmdkit.ir import import_jax
from spmdkit.partition import LocalizeError, PartitionError, complete_forward, localize, partition
from spmdkit.partition.layouts import ProgramMesh
from spmdkit.reshard import Layout
from spmdkit.sharding import Mesh, parse_sharding

MESHES = {"mesh": Mesh({"x": 2, "y": 2})}


def program(fn, *args, shardings):
    return import_jax(fn, *args, arg_shardings=[parse_sharding(s) if s else None for s in shardings],
                      meshes=MESHES, inline_calls=True)


def test_not_divisible_shape_names_the_value():
    p = program(lambda a: a * 2.0, jnp.ones((3, 4)), shardings=['#sdy.sharding<@mesh, [{"x"}, {}]>'])
    with pytest.raises(PartitionError, match=r"%a.*dim 0 of size 3 does not divide"):
        partition(p)


def test_axis_not_in_mesh_is_refused():
    with pytest.raises(ValueError, match="z"):
        program(lambda a: a * 2.0, jnp.ones((4, 4)), shardings=['#sdy.sharding<@mesh, [{"z"}, {}]>'])


def test_op_without_rule_names_the_op():
    # approx_top_k has no rule (docs/jax_primitives.md)
    p = program(lambda a: lax.approx_max_k(a, 2)[0], jnp.eye(4),
                shardings=['#sdy.sharding<@mesh, [{"x"}, {}]>'])
    with pytest.raises(PartitionError, match=r"op 'jax.approx_top_k'.*no sharding rule"):
        complete_forward(p)


def test_calls_must_be_inlined():
    p = import_jax(lambda a: jax.jit(jnp.sin)(a), jnp.ones((4,)), meshes=MESHES)
    with pytest.raises(PartitionError, match="inline_calls=True"):
        partition(p)


def test_a_call_inside_a_loop_body_is_refused_as_the_full_check_refuses_it():
    # the partitioner checks only the ops its region scan lists (regions, calls, opaque results);
    # a loop is listed, and the check walks into its body
    from spmdkit.partition.partitioner import check_function
    p = import_jax(lambda a: lax.fori_loop(0, 3, lambda i, x: jax.jit(jnp.sin)(x), a), jnp.ones((4,)),
                   meshes=MESHES)
    with pytest.raises(PartitionError) as full:
        check_function(p.main, control_flow=True)
    with pytest.raises(PartitionError, match="inline_calls=True") as ours:
        partition(p)
    assert str(ours.value) == str(full.value)


def test_partial_argument_is_refused():
    p = program(lambda a: a + 1.0, jnp.ones((4, 4)), shardings=['#sdy.sharding<@mesh, [{}, {}], unreduced={"x"}>'])
    with pytest.raises(PartitionError, match="cannot be partial"):
        partition(p)


def test_two_meshes_are_refused():
    p = program(lambda a: a + 1.0, jnp.ones((4, 4)), shardings=[None])
    p.meshes["other"] = Mesh({"x": 4})
    with pytest.raises(PartitionError, match="exactly one mesh"):
        partition(p)


def test_result_sharding_that_does_not_divide():
    p = program(lambda a: a[:3] * 2.0, jnp.ones((4, 4)), shardings=[None])
    p.main.result_shardings = [parse_sharding('#sdy.sharding<@mesh, [{"x"}, {}]>')]
    complete_forward(p)
    with pytest.raises(PartitionError, match="does not divide"):
        partition(p)


@pytest.mark.parametrize("fn,param", [
    (lambda a: jnp.argmax(a, axis=0), "axes"),
    (lambda a: jnp.cumsum(a, axis=0), "axis"),
    (lambda a: jnp.split(a, 2, axis=0)[0], "axis"),
])
def test_params_over_a_split_dim_cannot_be_localized(fn, param):
    """The localization table refuses a scan/arg-reduce/split axis that the layout splits."""
    p = program(fn, jnp.ones((4, 4)), shardings=[None])
    op = next(o for o in p.main.body.ops if o.name.startswith("jax."))
    pm = ProgramMesh.of(p)
    split = Layout.make(pm.spec, [("x",), ()])
    with pytest.raises(LocalizeError, match=rf"op '{op.name}'.*'{param}'.*dim 0"):
        localize(op, [split], [split] * len(op.results), pm)


def test_localized_shapes_follow_the_result_layout():
    p = program(lambda a: jnp.broadcast_to(a, (4, 8)).reshape(2, 16), jnp.ones((8,)), shardings=[None])
    pm = ProgramMesh.of(p)
    bcast, reshape = [o for o in p.main.body.ops if o.name in ("jax.broadcast_in_dim", "jax.reshape")]
    xy = Layout.make(pm.spec, [("x",), ("y",)])
    assert localize(bcast, [Layout.make(pm.spec, [("y",)])], [xy], pm)["shape"] == [2, 4]
    assert localize(reshape, [xy], [xy], pm)["new_sizes"] == [1, 8]
    assert bcast.attrs["shape"] == [4, 8]  # the op itself is not changed


def test_annotation_on_an_axis_the_mesh_lacks_names_value_and_axis():
    p = program(lambda a: a * 2.0, jnp.ones((4, 4)), shardings=[None])
    p.main.args[0].sharding = parse_sharding('#sdy.sharding<@mesh, [{"z"}, {}]>')
    with pytest.raises(PartitionError, match=r"%a.*axis 'z'"):
        partition(p)


def test_annotation_on_another_mesh_is_refused():
    p = program(lambda a: a * 2.0, jnp.ones((4, 4)), shardings=[None])
    p.main.args[0].sharding = parse_sharding('#sdy.sharding<@elsewhere, [{"x"}, {}]>')
    with pytest.raises(PartitionError, match="@elsewhere"):
        partition(p)


def test_jax_mesh_must_be_the_programs_mesh():
    from spmdkit.partition import to_jax
    p = program(lambda a: a * 2.0, jnp.ones((4, 4)), shardings=['#sdy.sharding<@mesh, [{"x"}, {}]>'])
    parted = partition(complete_forward(p))
    one_device = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",))  # whatever the device count
    with pytest.raises(PartitionError, match="is not the program's mesh"):
        to_jax(parted, one_device)


def _first_op(p, name):
    return next(o for o in p.main.body.ops if o.name == name)


def test_gather_window_over_a_split_dim_is_local_only_when_whole():
    """Rows gathered from a table split on its columns: the window spans the columns whole, so
    it becomes the local column count; a window cutting a split dim is refused."""
    p = program(lambda t, i: t[i], jnp.ones((8, 4)), jnp.zeros((3,), jnp.int32), shardings=[None, None])
    gather = _first_op(p, "jax.gather")
    pm = ProgramMesh.of(p)
    cols = Layout.make(pm.spec, [(), ("y",)])
    rows = Layout.make(pm.spec, [("x",), ()])
    out = Layout.make(pm.spec, [(), ("y",)])
    assert localize(gather, [cols, Layout.make(pm.spec, [()])], [out], pm)["slice_sizes"] == [1, 2]
    with pytest.raises(LocalizeError, match=r"op 'jax.gather'.*slice_sizes\[0\] = 1.*\['x'\]"):
        localize(gather, [rows, Layout.make(pm.spec, [()])], [out], pm)


def test_pad_and_slice_need_their_cut_dims_whole():
    pm_prog = program(lambda a: (jnp.pad(a, ((0, 0), (1, 1))), a[:, 1:3]), jnp.ones((4, 4)), shardings=[None])
    pm = ProgramMesh.of(pm_prog)
    pad, cut = _first_op(pm_prog, "jax.pad"), _first_op(pm_prog, "jax.slice")
    rows, cols = Layout.make(pm.spec, [("x",), ()]), Layout.make(pm.spec, [(), ("y",)])
    assert localize(pad, [rows, Layout.make(pm.spec, [])], [rows], pm)  # rows are not padded: fine
    assert localize(cut, [rows], [rows], pm)
    with pytest.raises(LocalizeError, match=r"op 'jax.pad'.*dim 1"):
        localize(pad, [cols, Layout.make(pm.spec, [])], [cols], pm)
    with pytest.raises(LocalizeError, match=r"op 'jax.slice'.*dim 1"):
        localize(cut, [cols], [cols], pm)
