"""spmdkit.distributed without devices: ProcessMesh, placements checked against mesh and shape, the
sharding picture, and parallelize's typed errors (bad placements, shapes that do not divide, an
op with no rule), all raised before anything runs."""
from __future__ import annotations

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from spmdkit.distributed import DistError, Partial, ProcessMesh, Replicate, Shard, parallelize, visualize
from spmdkit.distributed.placements import dim_axes, placements_of_spec, to_spec
from spmdkit.partition import PartitionError

sys.path.insert(0, str(Path(__file__).parent))
from dist_support import has_jax_rules, has_propagation  # noqa: E402

MESH = ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])


def test_process_mesh_from_ids_or_shape():
    assert ProcessMesh(shape=(2, 2), dim_names=["dp", "mp"]) == MESH
    m = ProcessMesh([[3, 2], [1, 0]], ["a", "b"])
    assert m.shape == [2, 2] and m.process_ids == [3, 2, 1, 0] and m.get_dim_size("b") == 2
    assert m.sharding_mesh.device_ids == (3, 2, 1, 0)
    for bad in (lambda: ProcessMesh([[0, 0], [1, 2]], ["a", "b"]), lambda: ProcessMesh([0, 1], ["a", "b"]),
                lambda: ProcessMesh([[0, 1]], ["a", "a"]), lambda: ProcessMesh()):
        with pytest.raises(DistError):
            bad()


def test_placements_become_axes_per_dim_in_mesh_order_or_shard_order():
    assert dim_axes([Shard(0), Shard(0)], MESH, (8,), "x")[0] == [("dp", "mp")]
    assert dim_axes([Shard(0, shard_order=1), Shard(0, shard_order=0)], MESH, (8,), "x")[0] == [("mp", "dp")]
    spec = to_spec([Replicate(), Shard(1)], MESH, (4, 6), "w")
    assert tuple(spec) == (None, "mp")
    assert placements_of_spec(spec, MESH) == [Replicate(), Shard(1)]


@pytest.mark.parametrize("placements, shape, words", [
    ([Shard(0)], (8, 8), "one Shard/Replicate/Partial per mesh dim"),
    ([Shard(2), Replicate()], (8, 8), "rank 2"),
    ([Shard(0), Shard(1)], (8, 5), "dim 1 of size 5 does not divide"),
])
def test_placements_that_do_not_fit_raise_naming_the_value(placements, shape, words):
    with pytest.raises(DistError, match=words) as e:
        to_spec(placements, MESH, shape, "args[0]['w1']")
    assert e.value.value == "args[0]['w1']" and "args[0]['w1']" in str(e.value)


def test_partial_is_refused_for_a_global_array():
    with pytest.raises(DistError, match="cannot be partial"):
        to_spec([Partial(), Replicate()], MESH, (4, 4), "x")


def test_picture_of_a_two_d_split():
    text = visualize((8, 4), MESH, [Shard(0), Shard(1)], name="x")
    # dp splits rows, mp columns: the device at mesh coordinate (i, j) holds block (i, j)
    assert text.splitlines()[1:6] == ["+---+---+", "| 0 | 1 |", "+---+---+", "| 2 | 3 |", "+---+---+"]
    assert "block 4x2" in text
    assert "| 0 1 2 3 |" in visualize((8,), MESH, [Replicate(), Replicate()])


def _mlp_step(params, x):
    def loss(p):
        return jnp.mean(jnp.tanh(x @ p["w"]) ** 2)
    value, grads = jax.value_and_grad(loss)(params)
    return {"w": params["w"] - 0.1 * grads["w"]}, value


ARGS = ({"w": np.ones((8, 4), np.float32)}, np.ones((6, 8), np.float32))


def test_parallelize_names_the_argument_whose_shape_does_not_divide():
    with pytest.raises(DistError, match=r"value args\[1\]: dim 0 of size 6 does not divide over mesh dims "
                                        r"\['dp', 'mp'\]"):
        parallelize(_mlp_step, MESH, ({"w": None}, [Shard(0), Shard(0)]), strategy="complete", example_args=ARGS)


def test_parallelize_names_the_argument_whose_placements_do_not_fit_the_mesh():
    with pytest.raises(DistError, match=r"value args\[0\]\['w'\]: placements .* one .* per mesh dim"):
        parallelize(_mlp_step, MESH, ({"w": [Shard(1)]}, None), strategy="complete", example_args=ARGS)
    with pytest.raises(DistError, match=r"in_placements\[0\] names keys \['v'\]"):
        parallelize(_mlp_step, MESH, ({"v": None}, None), strategy="complete", example_args=ARGS)
    with pytest.raises(DistError, match="one entry per argument"):
        parallelize(_mlp_step, MESH, (None,), strategy="complete", example_args=ARGS)
    with pytest.raises(DistError, match="strategy"):
        parallelize(_mlp_step, MESH, (None, None), strategy="guess")


@pytest.mark.skipif(not has_jax_rules(), reason="this build of spmdkit._core has no jax.* rules")
@pytest.mark.parametrize("strategy", ["complete", "propagate"])
def test_parallelize_names_the_op_without_a_rule(strategy):
    if strategy == "propagate" and not has_propagation():
        pytest.skip("this build of spmdkit._core has no propagation engine")
    # propagation leaves the op opaque; the partitioner then refuses it by name
    # (approx_top_k has no rule: docs/jax_primitives.md)
    with pytest.raises(PartitionError, match="op 'jax.approx_top_k'.*no sharding rule"):
        parallelize(lambda x: jax.lax.approx_max_k(x, 2)[0] * 2.0, MESH, ([Shard(0), Replicate()],), strategy=strategy,
                    example_args=(np.ones((4, 4), np.float32),))


def test_inspection_before_tracing_is_an_error():
    with pytest.raises(DistError, match="not traced"):
        _ = parallelize(_mlp_step, MESH, (None, None)).plan


def test_put_keeps_arrays_already_laid_out_and_moves_the_rest_together():
    # A program's outputs carry specs written another way (P("dp") on a size-1 dim, or a
    # single-device sharding): equivalent layouts are not copied again on the next step.
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    from spmdkit.distributed.tensor import is_placed, put, put_all
    mesh = Mesh(np.array(jax.devices()[:1]).reshape(1, 1), ("dp", "mp"))
    whole = NamedSharding(mesh, P())
    on_device = jnp.ones((4, 6))
    other_spec = jax.device_put(on_device, NamedSharding(mesh, P("dp")))
    assert on_device.sharding != whole and other_spec.sharding != whole
    assert put(on_device, whole) is on_device and put(other_spec, whole) is other_spec
    host = np.arange(24.0).reshape(4, 6)
    out = put_all([on_device, host, other_spec], [whole] * 3)
    assert out[0] is on_device and out[2] is other_spec
    assert isinstance(out[1], jax.Array) and out[1].sharding == whole
    np.testing.assert_array_equal(np.asarray(out[1]), host)
