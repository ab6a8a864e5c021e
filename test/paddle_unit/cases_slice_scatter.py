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

GND, GA = "test_gather_nd_rule", "test_gather_rule"
# an index of shape [4] addresses 4 dims of the 1-D x (index.shape[-1] is the depth)
DEPTH = dict(differs="index.shape[-1] = 4 exceeds x's rank 1: the kernel refuses the call", ours="raises")
ENGINE = "fixed on branch paddle-engine"
CASES += [
    Case(GND, "gather_nd", "fwd", (2, 4), ["[10,20]{-1,-1}", "[2,4,1]{0,-1,-1}"], ins=["{-1,-1}", "{0,-1,-1}"], outs=["{0,-1,-1}"]),
    Case(GND, "gather_nd", "fwd", (2, 4), ["[10]{-1}", "[8,1]{0,-1}"], ins=["{-1}", "{0,-1}"], outs=["{0}"]),
    Case(GND, "gather_nd", "fwd", (2, 4), ["[10]{-1}", "[4]{0}"], ins=["{-1}", "{0}"], outs=["{0}"], **DEPTH),
    Case(GND, "gather_nd", "bwd", (2, 4), ["[10,20]{-1,-1}", "[2,4,1]{0,-1,-1}", "[2,4,20]{0,-1,-1}"],
         ins=["{-1,-1}", "{0,-1,-1}"], outs=["{0,-1,-1}"]),
    Case(GND, "gather_nd", "bwd", (2, 4), ["[10]{-1}", "[4]{0}", "[4]{0}"], ins=["{-1}", "{0}"], outs=["{0}"], **DEPTH),
    Case(GND, "gather_nd", "bwd", (2, 4), ["[10]{-1}", "[8,1]{0,-1}", "[8]{0}"], ins=["{-1}", "{0,-1}"], outs=["{0}"]),
    # gather(x, index, axis)
    Case(GA, "gather", "fwd", (4,), ["[64,32,48]{0,-1,-1}", "[16]{-1}", 0], ins=["{-1,-1,-1}", "{-1}"], outs=["{-1,-1,-1}"]),
    Case(GA, "gather", "fwd", (4,), ["[64,32,48]{-1,0,-1}", "[16]{-1}", 0], ins=["{-1,0,-1}", "{-1}"], outs=["{-1,0,-1}"]),
    Case(GA, "gather", "fwd", (4,), ["[64,32,48]{0,-1,-1}", "[16]{0}", 0], ins=["{-1,-1,-1}", "{0}"], outs=["{0,-1,-1}"]),
    # the 0-D index case sets the mapping [0] on the index of shape []
    Case(GA, "gather", "fwd", (4,), ["[64,32,48]{-1,0,-1}", "[]{0}", 1], ins=["{-1,-1,-1}", "{-1}"], outs=["{-1,-1}"],
         differs="the index of shape [] is given the rank-1 mapping [0]", ours="raises", bad_input="[]{0}"),
    Case(GA, "gather", "fwd", (2, 3), ["[64,32,48]{0,1,-1}", "[16]{1}", 1], ins=["{0,-1,-1}", "{1}"], outs=["{0,1,-1}"]),
    Case(GA, "gather", "fwd", (2, 3), ["[64,32,48]{0,1,-1}", "[16]{0}", 1], ins=["{0,-1,-1}", "{0}"], outs=["{0,-1,-1}"],
         differs="x's rows and the index both split by mesh dim 0: each rank gathers only its own block of the index",
         ours=(["{0,-1,-1}", "{-1}"], ["{0,-1,-1}"]), int_inputs={1: 32}),
    # reverse: out is a copy of x (shape [64, 32, 48]) though the gathered axis has 16 entries
    Case(GA, "gather", "bwd", (2, 3), ["[64,32,48]{-1,-1,-1}", "[16]{-1}", "copy:[64,32,48]{1,0,-1}", 1],
         ins=["{1,-1,-1}", "{0}"], outs=["{1,0,-1}"],
         differs="out's gathered axis has 32 entries but the index 16: no gather gives that output", ours="raises"),
]
