"""Placements as pytree prefixes (issue 16): params in lists of dicts, namedtuples and dataclasses,
flax nnx and linen, equinox modules, optax states, typed PRNG keys trained on a 2x2 mesh equal to one device
(every output leaf within 1e-5 over 3 steps, in a child process with 8 virtual devices); and
placements that do not fit the value's pytree raise DistError naming the path, before anything
runs."""
from __future__ import annotations

import collections
import sys
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest
from spmdkit.distributed import DistError, ProcessMesh, Replicate, Shard, parallelize
from spmdkit.distributed.placement_trees import leaf_entries

sys.path.insert(0, str(Path(__file__).parent))
from dist_support import has_jax_rules, has_propagation, run_worker  # noqa: E402

HERE = Path(__file__).parent
MESH = ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
R = Replicate()
COL, ROW = [R, Shard(1)], [R, Shard(0)]
CASES = ["lists", "optax", "flax_nnx", "flax_linen", "equinox", "equinox_module", "keys", "guarded"]
# leaves the prefixes must have placed (label -> placements), per case
EXPECTED = {
    "lists": {"args[0]['layers'][0]['w']": COL, "args[0]['layers'][0]['b']": ROW, "args[0]['layers'][1]['b']": [R, R],
              "args[0]['head'].w": ROW, "args[1].x": [Shard(0), R]},
    "optax": {"args[1][0].mu['w1']": COL, "args[1][0].nu['w2']": ROW, "args[1][0].count": [R, R]},
    "flax_nnx": {"args[0]['l1']['kernel'].value": COL, "args[0]['l2']['kernel'].value": ROW,
                 "args[0]['l1']['bias'].value": [R, R]},
    "flax_linen": {"args[0]['params']['Dense_0']['kernel']": COL, "args[0]['params']['Dense_1']['bias']": [R, R]},
    "equinox": {"args[0].layers[0].weight": ROW, "args[0].layers[1].weight": COL, "args[0].layers[0].bias": [R, R]},
    # the whole module: its function leaves are passed as they are, not traced (no label)
    "equinox_module": {"args[0].layers[0].weight": ROW, "args[0].layers[2].bias": [R, R]},
    "keys": {"args[3]": [R, R], "args[4]": [Shard(0), R]},  # typed PRNG keys: placed as key arrays
    "guarded": {"args[0]['w1']": COL},  # optax.apply_if_finite: a partial logical and
}


@pytest.fixture(scope="module")
def rows():
    if not (has_jax_rules() and has_propagation()):
        pytest.skip("this build of spmdkit._core has no jax.* rules or no propagation engine")
    return {r["case"]: r for r in run_worker(HERE / "pytrees_worker.py", CASES, timeout=600)}


@pytest.mark.parametrize("case", CASES)
def test_library_pytrees_train_equal_to_one_device(rows, case):
    row = rows[case]
    assert "error" not in row, row.get("error")
    assert len(row["diffs"]) == 3 and max(row["diffs"]) <= 1e-5, row["diffs"]
    assert row["losses"][-1] < row["losses"][0]  # it trains
    for label, placements in EXPECTED[case].items():
        assert row["shardings"][label] == repr(placements), (label, row["shardings"])
    if case == "equinox_module":  # the updated module keeps its very functions
        assert all(row["same_functions"]) and not any("activation" in k for k in row["shardings"])


Point = collections.namedtuple("Point", "x y")


def test_prefix_entries_follow_jax_flattening_order():
    tree = {"b": [np.ones(2), np.ones(2)], "a": Point(np.ones(2), {"z": np.ones(2), "q": np.ones(2)})}
    entries = leaf_entries({"a": Point(COL, None), "b": ROW}, tree, "in_placements[0]")
    # jax flattens dicts by sorted key: a.x, a.y.q, a.y.z, b[0], b[1]
    assert entries == [COL, None, None, ROW, ROW]
    # a list may stand for a tuple; None for a whole subtree
    assert leaf_entries([COL, None], (np.ones(2), (np.ones(2), np.ones(2))), "p") == [COL, None, None]


@pytest.mark.parametrize("placements, words", [
    ({"layers": [{"w": COL}, {"w": COL}]}, r"in_placements\[0\]\['layers'\]: the placements are a list of 2 .* "
                                           r"where the value is a list of 3"),
    ({"layers": [{"w": COL}, {"w": COL}, {"v": COL}]}, r"in_placements\[0\]\['layers'\]\[2\] names keys \['v'\]"),
    ({"layers": [{"w": COL}, {"w": COL}, {"w": [R, Shard(3)]}]}, r"value args\[0\]\['layers'\]\[2\]\['w'\]: "
                                                                  r"Shard\(3\) .* rank 2"),
    ({"layers": [{"w": COL}, {"w": COL}, {"w": [Shard(0, shard_order=0), Shard(0, shard_order=0)]}]},
     r"value args\[0\]\['layers'\]\[2\]\['w'\]: dim 0 is split over mesh dims in an ambiguous order"),
    ({"layers": Point(None, None)}, r"in_placements\[0\]\['layers'\]: the placements are a Point of 2"),
    ({"layers": [{"w": {"deeper": COL}}, None, None]}, r"in_placements\[0\]\['layers'\]\[0\]\['w'\] is a dict of "
                                                       r"placements, but the value there is a leaf"),
    ({"layers": "col"}, r"in_placements\[0\]\['layers'\] must be a placements list"),
    ({"layers": [{"w": ["S(1)", R]}, None, None]}, r"in_placements\[0\]\['layers'\]\[0\]\['w'\]: 'S\(1\)' is not a "
                                                  r"placement"),
    ({"layers": [{"w": [R, Shard]}, None, None]}, r"\['w'\]: <class .*Shard'> is not a placement"),
])
def test_placements_that_are_not_a_prefix_name_the_path(placements, words):
    params = {"layers": [{"w": np.ones((8, 8), np.float32)} for _ in range(3)]}

    def step(p, x):
        for layer in p["layers"]:
            x = jnp.tanh(x @ layer["w"])
        return x.sum()
    with pytest.raises(DistError, match=words):
        parallelize(step, MESH, (placements, None), example_args=(params, np.ones((4, 8), np.float32)))
