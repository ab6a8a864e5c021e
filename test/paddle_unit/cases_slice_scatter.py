"""Paddle's slice and scatter rule tests as cases (see notation.py)."""
from .notation import Case

SL = "test_slice_rule"
SNA = "test_scatter_nd_add_rule"
X = "[8,8,16,16]"


# Every call of the test passes decrease_axis=[0] (with infer_flags=[0]) although no call leaves
# dim 0 at size 1: Paddle's kernel refuses such a call, and Paddle's rule ignores decrease_axis.
# spmdkit drops the dim decrease_axis names (forward) and so refuses an output of the input's
# rank (reverse).
DECREASE = "decrease_axis=[0] names dim 0, which the slice leaves at size 8: the kernel refuses the call"


def _slice(fn, mapping, axes, starts, ends, expect, ours=None):
    args = [f"{X}{{{mapping}}}", axes, starts, ends, [0], [0]]
    if fn == "bwd":  # reverse: x (replicated), out, then the attributes
        args = [f"{X}{{-1,-1,-1,-1}}", f"copy:{X}{{{mapping}}}"] + args[1:]
    return Case(SL, "slice", fn, (2, 4), args, ins=[expect], outs=[expect], differs=DECREASE,
                ours=ours or "raises", kernel_refuses=True)


SNA_X, SNA_I, SNA_U = "[64,32,48]", "[16]", "[32,32,48]"

# The test's index [16] is 1-D: its last dim (16) would address 16 dims of a rank-3 x. Paddle's
# rule reads it as 16 scalar row indices; the kernel refuses it, and so does spmdkit.
NDIM = dict(differs="index.shape[-1] = 16 exceeds x's rank 3: the kernel refuses the call", ours="raises")

CASES = [
    _slice("fwd", "-1,0,1,-1", [-1], [4], [8], "{-1,0,1,-1}", (["{-1,0,1,-1}"], ["{0,1,-1}"])),
    _slice("fwd", "-1,-1,1,0", [-1], [4], [-1], "{-1,-1,1,-1}", (["{-1,-1,1,-1}"], ["{-1,1,-1}"])),
    _slice("fwd", "0,-1,-1,1", [1, 2], [4, 4], [-1, 32], "{0,-1,-1,1}", (["{-1,-1,-1,1}"], ["{-1,-1,1}"])),
    _slice("fwd", "-1,1,0,-1", [1, 2], [4, 4], [-1, 32], "{-1,-1,-1,-1}", (["{-1,-1,-1,-1}"], ["{-1,-1,-1}"])),
    _slice("fwd", "0,1,-1,-1", [0, 1, 2, 3], [0, 0, 4, 4], [4, 4, -1, 32], "{-1,-1,-1,-1}", (["{-1,-1,-1,-1}"], ["{-1,-1,-1}"])),
    _slice("bwd", "-1,-1,0,1", [-1], [4], [8], "{-1,-1,0,-1}"),
    _slice("bwd", "-1,1,0,-1", [-1], [4], [-1], "{-1,1,0,-1}"),
    _slice("bwd", "-1,1,0,-1", [1, 2], [4, 4], [-1, 32], "{-1,-1,-1,-1}"),
    _slice("bwd", "0,-1,-1,1", [1, 2], [4, 4], [-1, 32], "{0,-1,-1,1}"),
    _slice("bwd", "0,1,-1,-1", [0, 1, 2, 3], [0, 0, 4, 4], [4, 4, -1, 32], "{-1,-1,-1,-1}"),
    # scatter_nd_add(x, index, updates, overwrite): Paddle's 4-argument call
    Case(SNA, "scatter_nd_add", "fwd", (4,), [f"{SNA_X}{{-1,-1,-1}}", f"{SNA_I}{{-1}}", f"{SNA_U}{{-1,0,-1}}", True], **NDIM,
         ins=["{-1,0,-1}", "{-1}", "{-1,0,-1}"], outs=["{-1,0,-1}p{}"]),
    Case(SNA, "scatter_nd_add", "fwd", (4,), [f"{SNA_X}{{0,-1,-1}}", f"{SNA_I}{{-1}}", f"{SNA_U}{{0,-1,-1}}", True], **NDIM,
         ins=["{-1,-1,-1}", "{0}", "{0,-1,-1}"], outs=["{-1,-1,-1}p{0}"]),
    Case(SNA, "scatter_nd_add", "fwd", (4,), [f"{SNA_X}{{-1,0,-1}}", f"{SNA_I}{{-1}}", f"{SNA_U}{{-1,-1,-1}}", True], **NDIM,
         ins=["{-1,-1,-1}", "{-1}", "{-1,-1,-1}"], outs=["{-1,-1,-1}p{}"]),
    Case(SNA, "scatter_nd_add", "fwd", (2, 3), [f"{SNA_X}{{1,-1,0}}", f"{SNA_I}{{-1}}", f"{SNA_U}{{-1,0,-1}}", True], **NDIM,
         ins=["{-1,0,-1}", "{-1}", "{-1,0,-1}"], outs=["{-1,0,-1}"]),
    Case(SNA, "scatter_nd_add", "fwd", (2, 3), [f"{SNA_X}{{-1,-1,-1}}", f"{SNA_I}{{0}}", f"{SNA_U}{{-1,1,-1}}", True], **NDIM,
         ins=["{-1,1,-1}", "{0}", "{0,1,-1}"], outs=["{-1,1,-1}p{0}"]),
    Case(SNA, "scatter_nd_add", "bwd", (2, 3),
         [f"{SNA_X}{{-1,-1,-1}}", f"{SNA_I}{{-1}}", f"{SNA_U}{{-1,-1,-1}}", f"copy:{SNA_X}{{1,0,-1}}", True], **NDIM,
         ins=["{-1,0,-1}", "{-1}", "{-1,0,-1}"], outs=["{-1,0,-1}"]),
]

CONCAT = "test_concat_rule"
CAT_IN = ["[16,16,16]{-1,0,1}", "[4,16,16]{-1,1,0}", "[2,16,16]{-1,-1,0}"]
CASES += [
    Case(CONCAT, "concat", "fwd", (2, 2), [CAT_IN, 0], ins=[["{-1,1,0}"] * 3], outs=["{-1,1,0}"]),
    Case(CONCAT, "concat", "bwd", (2, 2), [CAT_IN, "[4,16,16]{-1,1,0}", 0], ins=[["{-1,1,0}"] * 3], outs=["{-1,1,0}"]),
]
