"""The partitioner's choices beyond propagation's placement, on small programs without running them
(no JAX devices): gathering a weight instead of moving activations (choice.py), a lookup from a
vocab-split table run as a partial sum (split_gather.py), and propagated splits that do not divide
a dim dropped (layouts.py)."""
from __future__ import annotations

import jax.numpy as jnp
import pytest

from spmdkit import _core, propagate
from spmdkit.ir import import_jax
from spmdkit.partition import LocalOp, PartitionError, complete_forward, partition
from spmdkit.partition.layouts import ProgramMesh, layout_of_sharding
from spmdkit.partition.split_gather import LOCAL_KERNEL
from spmdkit.sharding import Mesh, parse_sharding

MESH3 = Mesh({"x": 2, "y": 2, "z": 2})
needs_propagation = pytest.mark.skipif(not hasattr(_core, "PropagationGraph"),
                                       reason="this build has no propagation engine")


def program(fn, *args, shardings, results, mesh=MESH3):
    p = import_jax(fn, *args, arg_shardings=[parse_sharding(s) if s else None for s in shardings],
                   meshes={"mesh": mesh}, inline_calls=True)
    p.main.result_shardings = [parse_sharding(s) if s else None for s in results]
    return p


@needs_propagation
def test_projection_gathers_the_weight_instead_of_moving_activations():
    """Issue 18's attention case in small: the batch on (x, y), the weight split (y, z) on
    (contracting, output). Propagation keeps the weight's y, which moves the activations (an
    all-to-all in, a reduce-scatter out: 4096 B); gathering the weight moves 1024 B."""
    p = program(lambda a, w: (a @ w).reshape(8, 16, 4, 8), jnp.ones((8, 16, 32)), jnp.ones((32, 32)),
                shardings=['#sdy.sharding<@mesh, [{"x", "y"}, {}, {}]>', '#sdy.sharding<@mesh, [{"y"}, {"z"}]>'],
                results=['#sdy.sharding<@mesh, [{"x", "y"}, {}, {"z"}, {}]>'])
    propagate(p)
    parted = partition(complete_forward(p))
    summary = parted.summary()
    assert summary.collectives["all_to_all"] == 0 and summary.collectives["reduce_scatter"] == 0, parted.describe()
    (gather,) = [r for r in parted.reshards if r.plan.steps]
    assert gather.value.type.shape == (32, 32) and [s.kind for s in gather.plan.steps] == ["all_gather"]
    assert summary.bytes_per_device == pytest.approx(1024.0)


def test_lookup_from_a_vocab_split_table_is_a_partial_sum():
    """A 1024x32 table split on its rows over y: each shard looks up its own rows and one
    all-reduce over y of the 8x4x32 rows (2 KiB local) replaces an all-gather of the table (64 KiB)."""
    p = program(lambda t, i: t[i] * 2.0, jnp.ones((1024, 32)), jnp.zeros((16, 4), jnp.int32),
                shardings=['#sdy.sharding<@mesh, [{"y"}, {}]>', '#sdy.sharding<@mesh, [{"x"}, {}]>'],
                results=['#sdy.sharding<@mesh, [{"x"}, {}, {}]>'], mesh=Mesh({"x": 2, "y": 2}))
    parted = partition(complete_forward(p))
    (gather,) = [s for s in parted.steps if isinstance(s, LocalOp) and s.op.name == "jax.gather"]
    assert LOCAL_KERNEL in gather.attrs
    assert gather.operand_layouts[0].dims == (("y",), ()) and gather.result_layouts[0].partial == ("y",)
    summary = parted.summary()
    assert summary.collectives["all_gather"] == 0 and summary.collectives["all_reduce"] == 1, parted.describe()
    assert summary.bytes_per_device == pytest.approx(2 * 0.5 * 8 * 4 * 32 * 4)


def test_open_dims_keep_the_axes_that_divide_them_and_closed_ones_refuse():
    pm = ProgramMesh("mesh", Mesh({"x": 2, "y": 2}))
    open_ = parse_sharding('#sdy.sharding<@mesh, [{"x", ?}, {"y"}]>')
    assert layout_of_sharding(open_, 2, pm, "v", shape=(1, 4)).dims == ((), ("y",))
    assert layout_of_sharding(open_, 2, pm, "v", shape=(2, 4)).dims == (("x",), ("y",))
    p = program(lambda a: a[:1] * 2.0, jnp.ones((4, 4)), shardings=[None],
                results=['#sdy.sharding<@mesh, [{"x"}, {}]>'], mesh=Mesh({"x": 2, "y": 2}))
    with pytest.raises(PartitionError, match="does not divide"):
        partition(complete_forward(p))
