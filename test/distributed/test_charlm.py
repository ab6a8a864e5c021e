"""The charlm real run, short: `spmdkit train --example charlm` for 20 steps on a 2x2x2 mesh of
virtual CPU devices (one child process): the loss falls and tracks the one-device run, the PNG of
the curves is written, and a run resumed from the step-10 checkpoint continues exactly as the
uninterrupted one did (same losses at steps 10..19). The 300-step run is a README command."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from child_process import json_rows, run_child  # noqa: E402
from dist_support import has_jax_rules, has_propagation  # noqa: E402

pytestmark = pytest.mark.skipif(not (has_jax_rules() and has_propagation()),
                                reason="this build of spmdkit._core lacks the jax.* rules or propagation")

STEPS = 20
CHILD = """
import json, os, sys
from spmdkit.examples.cli import run_module
args = json.loads(sys.argv[1])
codes = [run_module(argv=args["first"])]
os.remove(os.path.join(args["ckpt"], "step_{:07d}.npz".format(args["steps"])))  # as if killed after step 10
codes.append(run_module(argv=args["resumed"]))
print(json.dumps({"codes": codes}))
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("charlm")
    ckpt, png = str(tmp / "ckpt"), str(tmp / "loss.png")
    common = ["--example", "charlm", "--mesh", "2x2x2", "--steps", str(STEPS), "--ckpt", ckpt, "--json",
              "--sample-bytes", "24"]
    args = {"steps": STEPS, "ckpt": ckpt, "first": common + ["--save-every", "10", "--plot", png],
            "resumed": common + ["--resume", "--save-every", "10"]}
    proc = run_child(["-c", CHILD, json.dumps(args)], timeout=300)
    first, resumed, codes = json_rows(proc.stdout)
    return {"first": first, "resumed": resumed, "codes": codes["codes"], "png": Path(png), "ckpt": Path(ckpt),
            "stdout": proc.stdout}


def test_loss_falls_and_tracks_one_device(runs):
    first = runs["first"]
    assert runs["codes"][0] == 0, {k: v for k, v in first.items() if k == "checks"}
    loss, ref = first["loss"], first["ref_loss"]
    assert len(loss) == len(ref) == STEPS
    assert abs(loss[0] - 5.545) < 0.3            # a fresh model guesses ~uniformly over 256 bytes
    assert sum(loss[-5:]) / 5 < 0.75 * loss[0]    # it learns
    assert max(abs(a - b) / b for a, b in zip(loss, ref)) <= 1e-3
    assert first["tokens_per_s"] > 0 and "ETA" in runs["stdout"] and "tok/s" in runs["stdout"]
    assert isinstance(first["sample"], str) and first["sample"].startswith("def ")


def test_png_of_the_curves(runs):
    from matplotlib import image
    data = runs["png"].read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert image.imread(str(runs["png"])).shape[:2] == (400, 700)   # figsize 7x4 at 100 dpi


def test_resume_continues_from_the_saved_step(runs):
    first, resumed = runs["first"], runs["resumed"]
    assert runs["codes"][1] == 0
    assert resumed["start"] == 10 and len(resumed["loss"]) == STEPS
    assert resumed["loss"][:10] == first["loss"][:10]               # the history came from the checkpoint
    for a, b in zip(resumed["loss"][10:], first["loss"][10:]):
        assert abs(a - b) <= 1e-6 * abs(b), (resumed["loss"][10:], first["loss"][10:])
    assert (runs["ckpt"] / "step_0000020.npz").exists()             # the resumed run saved its own last step
