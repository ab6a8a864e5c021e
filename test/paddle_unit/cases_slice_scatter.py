"""Paddle's slice and scatter rule tests as cases (see notation.py)."""
from .notation import Case

SL = "test_slice_rule"
SNA = "test_scatter_nd_add_rule"
X = "[8,8,16,16]"


def _slice(fn, mapping, axes, starts, ends, expect):
    args = [f"{X}{{{mapping}}}", axes, starts, ends, [0], [0]]
    if fn == "bwd":  # reverse: x (replicated), out, then the attributes
        args = [f"{X}{{-1,-1,-1,-1}}", f"copy:{X}{{{mapping}}}"] + args[1:]
    return Case(SL, "slice", fn, (2, 4), args, ins=[expect], outs=[expect])


SNA_X, SNA_I, SNA_U = "[64,32,48]", "[16]", "[32,32,48]"

CASES = [
    _slice("fwd", "-1,0,1,-1", [-1], [4], [8], "{-1,0,1,-1}"),
    _slice("fwd", "-1,-1,1,0", [-1], [4], [-1], "{-1,-1,1,-1}"),
    _slice("fwd", "0,-1,-1,1", [1, 2], [4, 4], [-1, 32], "{0,-1,-1,1}"),
    _slice("fwd", "-1,1,0,-1", [1, 2], [4, 4], [-1, 32], "{-1,-1,-1,-1}"),
    _slice("fwd", "0,1,-1,-1", [0, 1, 2, 3], [0, 0, 4, 4], [4, 4, -1, 32], "{-1,-1,-1,-1}"),
    _slice("bwd", "-1,-1,0,1", [-1], [4], [8], "{-1,-1,0,-1}"),
    _slice("bwd", "-1,1,0,-1", [-1], [4], [-1], "{-1,1,0,-1}"),
    _slice("bwd", "-1,1,0,-1", [1, 2], [4, 4], [-1, 32], "{-1,-1,-1,-1}"),
    _slice("bwd", "0,-1,-1,1", [1, 2], [4, 4], [-1, 32], "{0,-1,-1,1}"),
    _slice("bwd", "0,1,-1,-1", [0, 1, 2, 3], [0, 0, 4, 4], [4, 4, -1, 32], "{-1,-1,-1,-1}"),
    # scatter_nd_add(x, index, updates, overwrite): Paddle's 4-argument call
    Case(SNA, "scatter_nd_add", "fwd", (4,), [f"{SNA_X}{{-1,-1,-1}}", f"{SNA_I}{{-1}}", f"{SNA_U}{{-1,0,-1}}", True],
         ins=["{-1,0,-1}", "{-1}", "{-1,0,-1}"], outs=["{-1,0,-1}p{}"]),
    Case(SNA, "scatter_nd_add", "fwd", (4,), [f"{SNA_X}{{0,-1,-1}}", f"{SNA_I}{{-1}}", f"{SNA_U}{{0,-1,-1}}", True],
         ins=["{-1,-1,-1}", "{0}", "{0,-1,-1}"], outs=["{-1,-1,-1}p{0}"]),
    Case(SNA, "scatter_nd_add", "fwd", (4,), [f"{SNA_X}{{-1,0,-1}}", f"{SNA_I}{{-1}}", f"{SNA_U}{{-1,-1,-1}}", True],
         ins=["{-1,-1,-1}", "{-1}", "{-1,-1,-1}"], outs=["{-1,-1,-1}p{}"]),
    Case(SNA, "scatter_nd_add", "fwd", (2, 3), [f"{SNA_X}{{1,-1,0}}", f"{SNA_I}{{-1}}", f"{SNA_U}{{-1,0,-1}}", True],
         ins=["{-1,0,-1}", "{-1}", "{-1,0,-1}"], outs=["{-1,0,-1}"]),
    Case(SNA, "scatter_nd_add", "fwd", (2, 3), [f"{SNA_X}{{-1,-1,-1}}", f"{SNA_I}{{0}}", f"{SNA_U}{{-1,1,-1}}", True],
         ins=["{-1,1,-1}", "{0}", "{0,1,-1}"], outs=["{-1,1,-1}p{0}"]),
    Case(SNA, "scatter_nd_add", "bwd", (2, 3),
         [f"{SNA_X}{{-1,-1,-1}}", f"{SNA_I}{{-1}}", f"{SNA_U}{{-1,-1,-1}}", f"copy:{SNA_X}{{1,0,-1}}", True],
         ins=["{-1,0,-1}", "{-1}", "{-1,0,-1}"], outs=["{-1,0,-1}"]),
]
