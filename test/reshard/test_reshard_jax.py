"""Plans executed with real XLA collectives (jax.shard_map on 8 virtual CPU devices; 2x2, 2x4 and
2x2x2 meshes): every device's result is its shard of the target, the compiled program holds
exactly the planned collectives with the planned bytes, and the plan moves no more bytes than
XLA's own partitioner does for the same reshard."""
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import spmdkit

pytest.importorskip("jax")

WORKER = Path(__file__).with_name("reshard_jax_worker.py")


@pytest.fixture(scope="module")
def rows():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(spmdkit.__file__).resolve().parent.parent),
                                         env.get("PYTHONPATH", "")])
    env["JAX_PLATFORMS"] = "cpu"
    out = subprocess.run([sys.executable, str(WORKER), "24", "3"], capture_output=True, text=True, env=env,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 13 + 24
    return rows


def test_every_device_holds_its_target_shard(rows):
    bad = [r for r in rows if not r["values_ok"]]
    assert not bad, bad[:3]


def test_compiled_collectives_are_the_planned_ones(rows):
    bad = [(r["steps"], r["planned"], r["compiled"]) for r in rows if r["planned"] != r["compiled"]]
    assert not bad, bad[:3]
    kinds = {k for r in rows for k, n in r["compiled"].items() if n}
    assert kinds == {"all_gather", "reduce_scatter", "all_reduce", "all_to_all", "collective_permute"}


def test_compiled_bytes_are_the_planned_bytes(rows):
    bad = [r for r in rows if abs(r["plan_bytes"] - r["compiled_bytes"]) > 1e-6]
    assert not bad, bad[:3]


def _blocks(dims, sizes):
    return [math.prod(sizes[a] for a in d) for d in dims]


def _swaps_unequal_axes(row):
    """Source and target shard over the same axes but with different blocks per dim, e.g.
    [{"x"}, {"y"}] -> [{"y"}, {"x"}] with |x| != |y|. XLA does these by splitting an axis into
    sub-axes (all-to-all on half of y, then a permute); our planner uses whole axes only
    (docs/reshard.md, known gaps)."""
    src = [re.findall(r'"(\w+)"', d) for d in re.findall(r"\{([^}]*)\}", row["source"])]
    tgt = [re.findall(r'"(\w+)"', d) for d in re.findall(r"\{([^}]*)\}", row["target"])]
    sizes = dict(zip("xyz", {"2x2": (2, 2), "2x4": (2, 4), "2x2x2": (2, 2, 2)}[row["mesh"]]))
    same_axes = sorted(a for d in src for a in d) == sorted(a for d in tgt for a in d)
    return same_axes and _blocks(src, sizes) != _blocks(tgt, sizes)


def test_no_more_bytes_than_xla_partitioner(rows):
    compared = [r for r in rows if r["xla_auto_bytes"] is not None]
    assert len(compared) >= 8
    # the bandwidth-only model: never more bytes, but for the documented sub-axis gap
    worse = [r for r in compared if r["bytes_only_plan_bytes"] > r["xla_auto_bytes"] + 1e-6]
    assert all(_swaps_unequal_axes(r) for r in worse), worse
    assert len(worse) < len(compared) // 4
    # the default alpha-beta model, once bytes dominate latency (the large examples)
    large = [r for r in compared if 4 * math.prod(r["shape"]) >= 2 ** 20]
    assert len(large) == 3
    for r in large:
        if _swaps_unequal_axes(r):
            assert r["plan_bytes"] > r["xla_auto_bytes"]   # the known gap: update docs if this flips
        else:
            assert r["plan_bytes"] <= r["xla_auto_bytes"], r
    assert any(r["plan_bytes"] < r["xla_auto_bytes"] for r in large)
