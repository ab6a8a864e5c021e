"""We read the sdy text JAX actually exports: every `#sdy.sharding<...>` of a lowered jit parses
and prints back to the same characters, and the `sdy.mesh` lines (with JAX's extra attributes)
give the mesh."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from spmdkit.sharding import AxisRef, Mesh, parse_mesh_table, parse_sharding


def _attributes(text: str, prefix: str = "#sdy.sharding<") -> list[str]:
    """Each `#sdy.sharding<...>` with balanced angle brackets."""
    out = []
    for m in re.finditer(re.escape(prefix), text):
        depth, i = 0, m.start() + len(prefix) - 1
        while True:
            depth += {"<": 1, ">": -1}.get(text[i], 0)
            i += 1
            if depth == 0:
                break
        out.append(text[m.start():i])
    return out


@pytest.fixture(scope="module")
def exported():
    worker = Path(__file__).with_name("sharding_jax_export_worker.py")
    done = subprocess.run([sys.executable, str(worker)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_every_exported_sharding_round_trips_to_the_same_text(exported):
    seen = 0
    for module in exported:
        for attr in _attributes(module):
            assert str(parse_sharding(attr)) == attr
            seen += 1
    assert seen >= 9  # two arguments and a result per module


def test_exported_meshes_and_partition_specs_read_as_expected(exported):
    for module in exported:
        decls = "\n".join(line.strip() for line in module.splitlines() if line.strip().startswith("sdy.mesh"))
        assert parse_mesh_table(decls) == {"mesh": Mesh({"x": 2, "y": 2, "z": 2})}
    first = [parse_sharding(a) for a in _attributes(exported[0])]
    assert [d.axes for d in first[0].dims] == [(AxisRef("x"),), ()]
    assert [d.axes for d in first[1].dims] == [(), (AxisRef("y"), AxisRef("z"))]
    assert [d.axes for d in first[2].dims] == [(AxisRef("y"), AxisRef("x"))]
    verified = [parse_sharding(a, parse_mesh_table(
        "sdy.mesh @mesh = <[\"x\"=2, \"y\"=2, \"z\"=2]>"), None) for a in _attributes(exported[1])]
    assert [d.axes for d in verified[0].dims] == [(AxisRef("z"), AxisRef("x")), (AxisRef("y"),)]
