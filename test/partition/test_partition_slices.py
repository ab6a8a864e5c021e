"""Slices, dynamic slices, pads, gathers (split lookups included) and scatter-adds partitioned
with local bounds (issue 18): hypothesis draws random ops of randomly split arrays on 2x2 and 2x2x2 meshes; each is
partitioned and run on 8 virtual CPU devices in a child process (slices_worker.py) and must equal
the one-device result. Enough examples must run the op on a split operand (bounds made local),
not only gathered to whole. Plus the typed errors of bounds that cannot be made local."""
from __future__ import annotations

from pathlib import Path

import jax.numpy as jnp
import pytest
from jax import lax

from child_process import json_rows, run_child
from spmdkit.ir import import_jax
from spmdkit.partition import LocalizeError, PartitionError
from spmdkit.partition.layouts import ProgramMesh
from spmdkit.partition.localize import localize
from spmdkit.reshard import Layout
from spmdkit.sharding import Mesh

HERE = Path(__file__).parent
EXAMPLES = 10


@pytest.fixture(scope="module")
def families():
    proc = run_child([HERE / "slices_worker.py", "--examples", str(EXAMPLES)], timeout=900)
    return {row["family"]: row for row in json_rows(proc.stdout)}


@pytest.mark.parametrize("family", ["slices", "dynamic_slices", "pads", "gathers", "lookups"])
def test_random_ops_of_split_arrays_equal_one_device(families, family):
    row = families[family]
    assert row["examples"] >= EXAMPLES
    assert row["ran_split"] >= 2, row   # some ran on local shards with local bounds


def test_lookups_from_a_split_table_run_split(families):
    """A gather from a table split along the rows it looks up runs as masked local lookups whose
    sum is the result (split_gather.py): the 8 fixed cases (fill/clip/promise modes, out-of-bounds
    indices) and some random ones."""
    assert families["lookups"]["split_lookups"] >= 8 + 1, families["lookups"]


def _program(fn, *args):
    return import_jax(fn, *args, inline_calls=True, meshes={"mesh": Mesh([("x", 2), ("y", 2)])})


def _layout(*dims):
    return Layout(tuple(tuple(d) for d in dims), (), None)


def test_slice_of_a_split_dim_that_cuts_it_names_the_op():
    p = _program(lambda a: a[1:3], jnp.ones((4, 4)))
    op = next(o for o in p.main.body.ops if o.name == "jax.slice")
    pm = ProgramMesh.of(p)
    with pytest.raises(LocalizeError, match=r"op 'jax.slice'.*dim 0.*\['x'\]"):
        localize(op, [_layout(["x"], [])], [_layout(["x"], [])], pm)


def test_split_pass_through_dims_get_local_bounds():
    p = _program(lambda a: a[:, 1:3], jnp.ones((4, 4)))
    op = next(o for o in p.main.body.ops if o.name == "jax.slice")
    attrs = localize(op, [_layout(["x", "y"], [])], [_layout(["x", "y"], [])], ProgramMesh.of(p))
    assert list(attrs["limit_indices"]) == [1, 3] and list(attrs["start_indices"]) == [0, 1]


def test_pad_of_a_split_dim_names_the_op():
    p = _program(lambda a: jnp.pad(a, ((0, 0), (1, 0))), jnp.ones((4, 4)))
    op = next(o for o in p.main.body.ops if o.name == "jax.pad")
    with pytest.raises(LocalizeError, match=r"op 'jax.pad'.*padding_config"):
        localize(op, [_layout([], ["y"]), _layout()], [_layout([], ["y"])], ProgramMesh.of(p))


def test_dynamic_slice_window_inside_a_split_dim_names_the_op():
    p = _program(lambda a, i: lax.dynamic_slice(a, (i, 0), (2, 4)), jnp.ones((4, 4)), 1)
    op = next(o for o in p.main.body.ops if o.name == "jax.dynamic_slice")
    with pytest.raises(PartitionError, match=r"op 'jax.dynamic_slice'.*slice_sizes\[0\]"):
        localize(op, [_layout(["x"], []), _layout(), _layout()], [_layout(["x"], [])], ProgramMesh.of(p))
