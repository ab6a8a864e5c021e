"""Paddle's slice and scatter rule tests as cases (see notation.py)."""
from .notation import EMPTY, Case, DType

SL = "test_slice_rule"
SNA = "test_scatter_nd_add_rule"
X = "[8,8,16,16]"


# Every call of the test passes decrease_axis=[0] (with infer_flags=[0]) although no call leaves
# dim 0 at size 1: Paddle's kernel refuses such a call, and Paddle's rule ignores decrease_axis.
# spmdkit refuses decrease_axis naming a dim the slice leaves as it is (size 8); where dim 0 is
# sliced (the last forward call) it drops the dim, and refuses an output of the input's rank
# (reverse).
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
    _slice("fwd", "-1,0,1,-1", [-1], [4], [8], "{-1,0,1,-1}"),
    _slice("fwd", "-1,-1,1,0", [-1], [4], [-1], "{-1,-1,1,-1}"),
    _slice("fwd", "0,-1,-1,1", [1, 2], [4, 4], [-1, 32], "{0,-1,-1,1}"),
    _slice("fwd", "-1,1,0,-1", [1, 2], [4, 4], [-1, 32], "{-1,-1,-1,-1}"),
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

IPUT, ISEL = "test_index_put_rule", "test_index_select_rule"
IDX3 = ["[16]{-1}"] * 3
# The test (newer than Paddle 3.3.1, which fails it) keeps x's splits, but three index tensors
# address all three dims of x: a rank holding a block of x cannot place values whose indices
# fall outside it. Its reverse is of a later API too: Paddle 3.3.1's (and spmdkit's) second
# function is the grad rule (x, indices, value, out_grad) -> (x_grad, value_grad).
IPUT_WHOLE = "indices address every dim of x: x must be whole on every rank"
IPUT_GRAD = "Paddle 3.3.1's second function of index_put is its grad rule, not the test's reverse"
IPUT_PROOF = dict(proof_shapes={"[64,32,1024]": "[8,8,8]", "[16]": "[4]"}, int_inputs={1: 8},
                  paddle="fails: Paddle 3.3.1 fails this test (it replicates x, as spmdkit does)")
R3 = "{-1,-1,-1}"
for m in ("0,1,-1", "0,-1,1", "1,0,-1", "-1,0,1", "1,-1,0", "-1,1,0"):
    CASES += [
        Case(IPUT, "index_put", "fwd", (2, 4), [f"[64,32,1024]{{{m}}}", IDX3, "copy:[16]{-1}", False],
             ins=[f"{{{m}}}", ["{-1}"] * 3, "{-1}"], outs=[f"{{{m}}}"], differs=IPUT_WHOLE,
             ours=([R3, ["{-1}"] * 3, "{-1}"], [R3]), **IPUT_PROOF),
        Case(IPUT, "index_put", "bwd", (2, 4), [f"[64,32,1024]{{{m}}}", IDX3, "copy:[16]{-1}", f"copy:[64,32,1024]{{{m}}}", False],
             ins=[f"{{{m}}}", ["{-1}"] * 3, "{-1}"], outs=[f"{{{m}}}"], differs=IPUT_GRAD,
             ours=([R3, ["{-1}"] * 3, "{-1}", R3], [R3, "{-1}"]), **IPUT_PROOF),
    ]
X48 = "[4,8,16]"
CASES += [
    Case(ISEL, "index_select", "fwd", (2, 3), [f"{X48}{{-1,-1,-1}}", "[3]{0}", 1], ins=["{-1,-1,-1}", "{0}"], outs=["{-1,0,-1}"]),
    Case(ISEL, "index_select", "fwd", (2, 3), [f"{X48}{{-1,0,-1}}", "[3]{0}", 0], ins=["{-1,0,-1}", "{-1}"], outs=["{-1,0,-1}"]),
    Case(ISEL, "index_select", "fwd", (2, 3), [f"{X48}{{-1,1,-1}}", "[3]{0}", 0], ins=["{-1,1,-1}", "{0}"], outs=["{0,1,-1}"]),
    Case(ISEL, "index_select", "fwd", (2, 3), [f"{X48}{{-1,1,-1}}", "[3]{0}", 1], ins=["{-1,-1,-1}", "{0}"], outs=["{-1,0,-1}"]),
    # grad(x, index, out_grad, axis)
    Case(ISEL, "index_select", "bwd", (2, 3), [f"{X48}{{-1,-1,-1}}", "[3]{0}", "copy:[4,3,16]{-1,0,-1}", 1],
         ins=["{-1,-1,-1}", "{0}", "{-1,0,-1}"], outs=["{-1,-1,-1}p{0}"]),
    # the second grad call gives out_grad x's shape [3, 4, 2], 4 entries on the selected axis for an index of 3
    Case(ISEL, "index_select", "bwd", (2, 3), ["[3,4,2]{1,-1,-1}", "[3]{0}", "copy:[3,4,2]{1,0,-1}", 1],
         ins=["{1,-1,-1}", "{0}", "{1,0,-1}"], outs=["{1,-1,-1}p{0}"],
         differs="out_grad's selected axis has 4 entries for an index of 3: the grad kernel refuses it", ours="raises",
         int_inputs={1: 4}),
]

PAD, PUT, ROLL = "test_pad_rule", "test_put_along_axis_rule", "test_roll_rule"
XP3 = "[8,16,16]{0,1,-1}"
CASES += [
    # pad([x], paddings, pad_value): the test passes x inside a one-element list
    Case(PAD, "pad", "fwd", (2, 4), [[XP3], [0, 0, 0, 1, 2, 3], 0], outs=["{0,-1,-1}"]),
    Case(PAD, "pad", "bwd", (2, 4), [[XP3], [XP3], [0, 0, 0, 1, 2, 3], 0], ins=["{0,-1,-1}"]),
]


def _put(mesh, x, i, v, axis, want, fn="fwd", out=None, ints=32):
    args = [x, i, v] + (out or []) + [axis, "assign", True]
    n_in = 3 if fn == "fwd" else 5
    return Case(PUT, "put_along_axis", fn, mesh, args, ins=[want] * n_in, outs=[want] * (1 if fn == "fwd" else 2))


XS, XD = "[64,32,48]", "[8,4,48]"
CASES += [
    _put((4,), f"{XS}{{-1,-1,-1}}", f"{XS}{{0,-1,-1}}", f"{XS}{{0,-1,-1}}", 0, "{-1,-1,-1}"),
    _put((4,), f"{XS}{{-1,-1,-1}}", f"{XS}{{-1,0,-1}}", f"{XS}{{-1,0,-1}}", 0, "{-1,0,-1}"),
    _put((4,), f"{XS}{{0,-1,-1}}", f"{XS}{{-1,-1,-1}}", f"{XS}{{-1,-1,-1}}", 0, "{-1,-1,-1}"),
    _put((4,), f"{XS}{{-1,-1,-1}}", f"{XS}{{-1,-1,-1}}", f"{XS}{{-1,0,-1}}", 0, "{-1,0,-1}"),
    _put((4,), f"{XS}{{-1,-1,-1}}", f"{XD}{{0,-1,-1}}", f"{XD}{{0,-1,-1}}", 1, "{-1,-1,-1}"),
    _put((2, 4), f"{XS}{{-1,0,-1}}", f"{XS}{{-1,-1,1}}", f"{XS}{{-1,-1,1}}", 0, "{-1,0,1}"),
    _put((2, 4), f"{XS}{{0,-1,-1}}", f"{XS}{{-1,1,-1}}", f"{XS}{{-1,1,-1}}", 1, "{0,-1,-1}"),
    _put((2, 4), f"{XS}{{-1,1,0}}", f"{XD}{{-1,1,0}}", f"{XD}{{-1,1,0}}", 0, "{-1,-1,0}"),
    # grad(x, index, value, out, out_grad) -> (x_grad, value_grad)
    _put((2, 4), f"{XS}{{-1,-1,-1}}", f"{XS}{{-1,-1,-1}}", f"{XS}{{-1,-1,-1}}", 1, "{1,-1,-1}", fn="bwd",
         out=[f"copy:{XS}{{1,0,-1}}", f"copy:{XS}{{1,0,-1}}"]),
    _put((2, 4), f"{XS}{{-1,-1,-1}}", f"{XD}{{-1,-1,-1}}", f"{XD}{{-1,-1,-1}}", 1, "{-1,-1,-1}", fn="bwd",
         out=[f"copy:{XS}{{1,-1,-1}}", f"copy:{XS}{{1,-1,-1}}"]),
    # roll(x, shifts, axis); grad(x, out_grad, shifts, axis)
    Case(ROLL, "roll", "fwd", (2, 2), ["[16,16,16]{0,1,-1}", [1], []], ins=["{-1,-1,-1}"], outs=["{-1,-1,-1}"]),
    Case(ROLL, "roll", "fwd", (2, 2), ["[16,16,16]{0,1,-1}", [1, 2], [0, 2]], ins=["{-1,1,-1}"], outs=["{-1,1,-1}"]),
    Case(ROLL, "roll", "bwd", (2, 2), ["[16,16,16]{-1,-1,-1}", "[16,16,16]{0,1,-1}", [1], []],
         ins=["{-1,-1,-1}"] * 2, outs=["{-1,-1,-1}"]),
    Case(ROLL, "roll", "bwd", (2, 2), ["[16,16,16]{-1,-1,-1}", "[16,16,16]{0,1,-1}", [1, 2], [0, 2]],
         ins=["{-1,1,-1}"] * 2, outs=["{-1,1,-1}"]),
]

TAA, SCAT, ROI = "test_take_along_axis_rule", "test_scatter_rule", "test_roi_align_rule"
XT3, IT3 = "[64,32,48]", "[8,4,48]"


def _taa(mesh, x, i, axis, want_x, want_i, want_out, **kw):
    return Case(TAA, "take_along_axis", "fwd", mesh, [x, i, axis], ins=[want_x, want_i], outs=[want_out], **kw)


CASES += [
    _taa((4,), f"{XT3}{{-1,-1,-1}}", f"{XT3}{{0,-1,-1}}", 0, "{-1,-1,-1}", "{0,-1,-1}", "{0,-1,-1}"),
    _taa((4,), f"{XT3}{{-1,-1,-1}}", f"{XT3}{{-1,0,-1}}", 0, "{-1,0,-1}", "{-1,0,-1}", "{-1,0,-1}"),
    _taa((4,), f"{XT3}{{0,-1,-1}}", f"{XT3}{{-1,-1,-1}}", 0, "{-1,-1,-1}", "{-1,-1,-1}", "{-1,-1,-1}"),
    _taa((4,), f"{XT3}{{0,-1,-1}}", f"{IT3}{{0,-1,-1}}", 0, "{-1,-1,-1}", "{0,-1,-1}", "{0,-1,-1}"),
    _taa((4,), f"{XT3}{{-1,0,-1}}", f"{XT3}{{-1,-1,-1}}", 0, "{-1,0,-1}", "{-1,0,-1}", "{-1,0,-1}"),
    _taa((4,), f"{XT3}{{-1,-1,-1}}", f"{IT3}{{0,-1,-1}}", 0, "{-1,-1,-1}", "{0,-1,-1}", "{0,-1,-1}"),
    _taa((4,), f"{XT3}{{0,-1,-1}}", f"{IT3}{{0,-1,-1}}", 1, "{-1,-1,-1}", "{-1,-1,-1}", "{-1,-1,-1}"),
    _taa((2, 4), f"{XT3}{{-1,0,-1}}", f"{XT3}{{-1,-1,1}}", 0, "{-1,0,1}", "{-1,0,1}", "{-1,0,1}"),
    _taa((2, 4), f"{XT3}{{0,-1,-1}}", f"{XT3}{{1,-1,-1}}", 0, "{-1,-1,-1}", "{1,-1,-1}", "{1,-1,-1}"),
    _taa((2, 4), f"{XT3}{{0,-1,-1}}", f"{XT3}{{-1,1,-1}}", 1, "{0,-1,-1}", "{0,1,-1}", "{0,1,-1}"),
    _taa((2, 4), f"{XT3}{{-1,-1,0}}", f"{IT3}{{-1,1,0}}", 1, "{-1,-1,0}", "{-1,1,0}", "{-1,1,0}"),
    _taa((2, 4), f"{XT3}{{0,-1,-1}}", f"{IT3}{{0,1,-1}}", 1, "{-1,-1,-1}", "{-1,1,-1}", "{-1,1,-1}"),
    # grad(x, index, out_grad, axis); the test's second grad call (index [8, 4, 48]) is at the end
    Case(TAA, "take_along_axis", "bwd", (2, 4), [f"{XT3}{{-1,-1,-1}}", f"{XT3}{{-1,-1,-1}}", f"copy:{XT3}{{1,0,-1}}", 1],
         ins=["{1,-1,-1}", "{1,0,-1}", "{1,0,-1}"], outs=["{1,-1,-1}"]),
]

XS3, IS, US = "[64,32,48]", "[16]", "[32,32,48]"


def _scat(mesh, x, i, u, want, out, fn="fwd", **kw):
    args = [f"{XS3}{{{x}}}", f"{IS}{{{i}}}", f"{US}{{{u}}}"] + ([f"copy:{XS3}{{{out}}}"] if fn == "bwd" else []) + [True]
    return Case(SCAT, "scatter", fn, mesh, args, ins=want[:3], outs=[want[3]], **kw)


# index [16] with updates of 32 rows (the kernel, Paddle's too, reads the first 16 rows)
ROWS = dict(int_inputs={1: 64},
            differs="16 ids, 32 update rows split alike: a rank's 4 ids read the first 4 of its 8 rows, rows of "
                    "other ids, and the partial sum adds x's untouched rows once per rank; spmdkit keeps ids and rows whole")
CASES += [
    _scat((4,), "-1,-1,-1", "-1", "-1,0,-1", ["{-1,0,-1}", "{-1}", "{-1,0,-1}", "{-1,0,-1}p{}"], None),
    _scat((4,), "0,-1,-1", "-1", "0,-1,-1", ["{-1,-1,-1}", "{0}", "{0,-1,-1}", "{-1,-1,-1}p{0}"], None, **ROWS,
          ours=(["{-1,-1,-1}", "{-1}", "{-1,-1,-1}"], ["{-1,-1,-1}p{}"])),
    _scat((4,), "-1,0,-1", "-1", "-1,-1,-1", ["{-1,-1,-1}", "{-1}", "{-1,-1,-1}", "{-1,-1,-1}p{}"], None),
    _scat((2, 3), "1,-1,0", "-1", "-1,0,-1", ["{-1,0,-1}", "{-1}", "{-1,0,-1}", "{-1,0,-1}"], None),
    _scat((2, 3), "-1,-1,-1", "0", "-1,1,-1", ["{-1,1,-1}", "{0}", "{0,1,-1}", "{-1,1,-1}p{0}"], None, **ROWS,
          ours=(["{-1,1,-1}", "{-1}", "{-1,1,-1}"], ["{-1,1,-1}p{}"])),
    _scat((2, 3), "-1,-1,-1", "-1", "-1,-1,-1", ["{-1,0,-1}", "{-1}", "{-1,0,-1}", "{-1,0,-1}"], "1,0,-1", fn="bwd"),
]

ROI_CHANNELS = dict(differs="out_grad [6, 2, 3, 3] has 2 channels, x 4: the grad kernel refuses the call",
                    ours="raises", kernel_refuses=True)
XR, BR, NR = "[2,4,16,16]{0,1,-1,-1}", "[6,6]{-1,1}", "[2]{-1}"
ROI_ATTRS = [3, 3, 0.5, -1, True]
CASES += [
    Case(ROI, "roi_align", "fwd", (2, 2), [XR, BR, NR] + ROI_ATTRS,
         ins=["{-1,1,-1,-1}", "{-1,-1}", "{-1}"], outs=["{-1,1,-1,-1}"]),
    # an absent boxes_num given as DistTensorSpec() (no mesh): Paddle echoes its empty attr; given
    # with the mesh (shape [], mapping []) Paddle answers a replicated layout, as spmdkit does for both
    Case(ROI, "roi_align", "fwd", (2, 2), [XR, BR, EMPTY] + ROI_ATTRS,
         ins=["{-1,1,-1,-1}", "{-1,-1}", EMPTY], outs=["{-1,1,-1,-1}"], convention=True,
         differs="an absent boxes_num comes back replicated however it is given",
         ours=(["{-1,1,-1,-1}", "{-1,-1}", "{-1}"], ["{-1,1,-1,-1}"])),
    # grad(x, boxes, boxes_num, out_grad): out_grad [6, 2, 3, 3] has 2 channels to x's 4
    Case(ROI, "roi_align", "bwd", (2, 2), [XR, BR, NR, "[6,2,3,3]{0,-1,-1,-1}"] + ROI_ATTRS,
         ins=["{-1,1,-1,-1}", "{-1,-1}", "{-1}", "{-1,1,-1,-1}"], outs=["{-1,1,-1,-1}"], **ROI_CHANNELS),
    Case(ROI, "roi_align", "bwd", (2, 2), [XR, BR, EMPTY, "[6,2,3,3]{0,-1,-1,-1}"] + ROI_ATTRS,
         ins=["{-1,1,-1,-1}", "{-1,-1}", EMPTY, "{-1,1,-1,-1}"], outs=["{-1,1,-1,-1}"], **ROI_CHANNELS),
    # the consistent call: out_grad with x's 4 channels
    Case(ROI, "roi_align", "bwd", (2, 2), [XR, BR, NR, "[6,4,3,3]{0,-1,-1,-1}"] + ROI_ATTRS,
         ins=["{-1,1,-1,-1}", "{-1,-1}", "{-1}", "{-1,1,-1,-1}"], outs=["{-1,1,-1,-1}"],
         note="the test's call with out_grad given x's 4 channels"),
]

STACK, TILE = "test_stack_rule", "test_tile_rule"
CASES += [
    Case(STACK, "stack", "fwd", (2, 4), [["[2,4]{0,-1}", "[2,4]{0,-1}"], -1], outs=["{0,-1,-1}"]),
    Case(STACK, "stack", "bwd", (2, 4), [["[2,4]{0,-1}", "[2,4]{0,-1}"], "[2,4,2]{0,-1,-1}", -1], ins=[["{0,-1}", "{0,-1}"]]),
    Case(TILE, "tile", "fwd", (2, 2), ["[16,16,16]{0,-1,1}", [2, 2, 1, 1]], ins=["{-1,-1,1}"], outs=["{-1,-1,-1,1}"]),
    Case(TILE, "tile", "bwd", (2, 2), ["[16,16,16]{0,-1,1}", "[2,32,16,16]{-1,-1,-1,1}", [2, 2, 1, 1]],
         ins=["{-1,-1,1}"], outs=["{-1,-1,-1,1}"]),
]

TOPK, UNBIND, WHERE = "test_topk_rule", "test_unbind_rule", "test_where_rule"
XU = "[64,2,48]"
CASES += [
    Case(TOPK, "topk", "fwd", (2, 2), ["[16,16,16]{0,1,-1}", 2, 1, True, True], ins=["{0,-1,-1}"], outs=["{0,-1,-1}", None]),
    # grad(x, indices, out_grad, ...): the test passes its out spec ([16, 2, 16]) as both
    Case(TOPK, "topk", "bwd", (2, 2), ["[16,16,16]{0,-1,1}", "copy:[16,2,16]{-1,1,-1}", "copy:[16,2,16]{-1,1,-1}", 2, 1, True, True],
         ins=["{0,-1,1}", None, None], outs=["{0,-1,1}"]),
    Case(UNBIND, "unbind", "fwd", (2, 3), [f"{XU}{{-1,-1,-1}}", 1], ins=["{-1,-1,-1}"], outs=["{-1,-1}", "{-1,-1}"]),
    Case(UNBIND, "unbind", "fwd", (2, 3), [f"{XU}{{0,-1,1}}", 1], ins=["{0,-1,1}"], outs=["{0,1}", "{0,1}"]),
    Case(UNBIND, "unbind", "fwd", (2, 3), [f"{XU}{{0,1,-1}}", -2], ins=["{0,-1,-1}"], outs=["{0,-1}", "{0,-1}"]),
    Case(UNBIND, "unbind", "fwd", (2, 3), [f"{XU}{{0,1,-1}}", 3], raises=True),
    Case(UNBIND, "unbind", "bwd", (2, 3), [f"{XU}{{-1,-1,-1}}", ["copy:[64,48]{0,1}", "copy:[64,48]{0,-1}"], 1],
         ins=["{0,-1,1}"], outs=["{0,1}", "{0,1}"]),
    Case(UNBIND, "unbind", "bwd", (2, 3), [f"{XU}{{-1,-1,-1}}", ["copy:[64,48]{0,-1}", "copy:[64,48]{-1,1}"], -2],
         ins=["{0,-1,1}"], outs=["{0,1}", "{0,1}"]),
    # the outputs split dim 0 by mesh dims 0 and 1: Paddle refuses, spmdkit keeps the first output's splits
    Case(UNBIND, "unbind", "bwd", (2, 3), [f"{XU}{{-1,-1,-1}}", ["copy:[64,48]{0,1}", "copy:[64,48]{1,0}"], 1], raises=True,
         differs="the outputs split one dim by different mesh dims: spmdkit keeps the first, as its merges do",
         ours=(["{0,-1,1}"], ["{0,1}", "{0,1}"])),
    Case(WHERE, "where", "fwd", (2, 2), ["[16,16,16]{-1,0,-1}", "[16,16]{-1,0}", "[16]{0}"],
         ins=["{-1,0,-1}", "{0,-1}", "{-1}"], outs=["{-1,0,-1}"]),
    Case(WHERE, "where", "bwd", (2, 2), ["[16,16,16]{-1,0,-1}", "[16,16]{-1,0}", "[16]{0}", "[16,16,16]{-1,0,-1}"],
         ins=["{-1,0,-1}", "{0,-1}", "{-1}"], outs=["{-1,0,-1}"]),
]

SPLIT, UNIQUE = "test_split_rule", "test_unique_rule"
XS6, XS4 = "[64,32,48]", "[96,32,48,24]"
R3x = "{-1,-1,-1}"
CASES += [
    Case(SPLIT, "split_with_num", "fwd", (4,), [f"{XS6}{{0,-1,-1}}", 2, 1], ins=["{0,-1,-1}"], outs=["{0,-1,-1}"] * 2),
    Case(SPLIT, "split", "fwd", (4,), [f"{XS6}{{0,-1,-1}}", [15, 16, 17], 2], ins=["{0,-1,-1}"], outs=["{0,-1,-1}"] * 3),
    Case(SPLIT, "split", "fwd", (4,), [f"{XS6}{{-1,-1,0}}", [15, 16, 17], 2], ins=[R3x], outs=[R3x] * 3),
    Case(SPLIT, "split_with_num", "fwd", (4,), [f"{XS6}{{0,-1,-1}}", 2, -2], ins=["{0,-1,-1}"], outs=["{0,-1,-1}"] * 2),
    Case(SPLIT, "split_with_num", "fwd", (2, 3), [f"{XS4}{{0,1,-1,-1}}", 3, -1], ins=["{0,1,-1,-1}"], outs=["{0,1,-1,-1}"] * 3),
    Case(SPLIT, "split", "fwd", (2, 3), [f"{XS4}{{0,1,-1,-1}}", [32, 32, 32], 0], ins=["{-1,1,-1,-1}"], outs=["{-1,1,-1,-1}"] * 3),
    # reverse (x, [outs], ...): x given replicated (the test's keeps setUp's rank-2 mapping);
    # the file's later reverse calls are not re-expressed here
    Case(SPLIT, "split_with_num", "bwd", (4,), [f"{XS6}{{-1,-1,-1}}", ["copy:[64,16,48]{0,-1,-1}"] * 2, 2, 1],
         ins=["{0,-1,-1}"], outs=["{0,-1,-1}"] * 2),
    Case(SPLIT, "split", "bwd", (4,), [f"{XS6}{{-1,-1,-1}}", ["copy:[64,32,15]{0,-1,-1}", "copy:[64,32,16]{0,-1,-1}",
                                                                 "copy:[64,32,17]{0,-1,-1}"], [15, 16, 17], 2],
         ins=["{0,-1,-1}"], outs=["{0,-1,-1}"] * 3),
    Case(SPLIT, "split", "bwd", (4,), [f"{XS6}{{-1,-1,-1}}", ["copy:[64,32,15]{-1,-1,-1}", "copy:[64,32,16]{-1,-1,-1}",
                                                                 "copy:[64,32,17]{-1,-1,-1}"], [15, 16, 17], 2],
         ins=[R3x], outs=[R3x] * 3),
    Case(SPLIT, "split_with_num", "bwd", (4,), [f"{XS6}{{-1,-1,-1}}", ["copy:[64,16,48]{0,-1,-1}"] * 2, 2, -2],
         ins=["{0,-1,-1}"], outs=["{0,-1,-1}"] * 2),
    Case(SPLIT, "split_with_num", "bwd", (4,), [f"{XS6}{{-1,-1,-1}}", ["copy:[64,16,48]{-1,0,-1}", "copy:[64,16,48]{-1,-1,-1}"], 2, -2],
         ins=[R3x], outs=[R3x] * 2),
    # unique(x, return_index, return_inverse, return_counts, axis, dtype)
    Case(UNIQUE, "unique", "fwd", (2, 2), ["[4,8]{0,-1}", True, True, True, [], DType("int32")],
         ins=["{-1,-1}"], outs=["{-1}"] * 4),
    Case(UNIQUE, "unique", "fwd", (2, 2), ["[4,8]{0,-1}", True, True, True, [0], DType("int32")],
         ins=["{-1,-1}"], outs=["{-1,-1}", "{-1}", "{-1}", "{-1}"]),
]
XS4R = "[96,32,48,24]{-1,-1,-1,-1}"
CASES += [
    Case(SPLIT, "split_with_num", "bwd", (2, 3), [XS4R, ["copy:[96,32,48,8]{0,1,-1,-1}"] * 3, 3, -1],
         ins=["{0,1,-1,-1}"], outs=["{0,1,-1,-1}"] * 3),
    Case(SPLIT, "split", "bwd", (2, 3), [XS4R, ["copy:[32,32,48,24]{-1,1,-1,-1}"] * 3, [32, 32, 32], 0],
         ins=["{-1,1,-1,-1}"], outs=["{-1,1,-1,-1}"] * 3),
    # sections [32, 32, 32] on axis 2 of size 48, the outputs shaped as for axis 0
    Case(SPLIT, "split", "bwd", (2, 3), [XS4R, ["copy:[32,32,48,24]{0,-1,1,-1}", "copy:[32,32,48,24]{-1,1,-1,-1}",
                                                "copy:[32,32,48,24]{-1,-1,-1,-1}"], [32, 32, 32], 2],
         ins=["{0,-1,-1,-1}"], outs=["{0,-1,-1,-1}"] * 3,
         differs="sections [32, 32, 32] do not add up to dim 2 (48), nor do the outputs' shapes fit: no split gives them",
         ours="raises"),
]
CASES += [
    # the second grad call: index [8, 4, 48] with an out_grad of x's shape [64, 32, 48]
    Case(TAA, "take_along_axis", "bwd", (2, 4), [f"{XT3}{{-1,-1,-1}}", f"{IT3}{{-1,-1,-1}}", f"copy:{XT3}{{1,0,-1}}", 1],
         ins=["{-1,-1,-1}", "{-1,0,-1}", "{-1,0,-1}"], outs=["{-1,-1,-1}"], int_inputs={1: 32}, kernel_refuses=True,
         differs="out_grad has x's shape [64, 32, 48], not the index's [8, 4, 48]: the grad kernel refuses the call; "
                 "spmdkit makes the dims whose sizes disagree whole",
         ours=(["{-1,-1,-1}", "{-1,-1,-1}", "{-1,-1,-1}"], ["{-1,-1,-1}"])),
    # the consistent call: out_grad of the index's shape. The index's axis is split, so x_grad
    # sums the ranks' scatters: Paddle 3.3.1 gives the same layouts but misses that partial sum
    Case(TAA, "take_along_axis", "bwd", (2, 4), [f"{XT3}{{-1,-1,-1}}", f"{IT3}{{-1,-1,-1}}", f"copy:{IT3}{{1,0,-1}}", 1],
         ins=["{-1,-1,-1}", "{-1,0,-1}", "{-1,0,-1}"], outs=["{-1,-1,-1}p{}"], int_inputs={1: 32},
         note="the test's second grad call with out_grad given the index's shape [8, 4, 48]",
         differs="the index's axis is split: each rank scatters its rows of out_grad, x_grad is their sum; Paddle "
                 "gives the same layouts but not partial",
         ours=(["{-1,-1,-1}", "{-1,0,-1}", "{-1,0,-1}"], ["{-1,-1,-1}p{0}"])),
]
