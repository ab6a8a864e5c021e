"""Paddle's elementwise-like rule tests (clip, ...) as cases (see notation.py)."""
from .notation import Case

CLIP = "test_clip_rule"

CASES = [
    Case(CLIP, "clip", "fwd", (4,), ["[64,36]{-1,0}"], ins=["{-1,0}"], outs=["{-1,0}"]),
    # the reverse test's x keeps setUp's mapping [1, 0]: mesh dim 1 of a 1-D mesh
    Case(CLIP, "clip", "bwd", (4,), ["[64,36]{1,0}", "copy:[64,36]{-1,0}"], ins=["{-1,0}"], outs=["{-1,0}"],
         differs="x's mapping names mesh dim 1 of a 1-D mesh", ours="raises", bad_input="[64,36]{1,0}"),
]
