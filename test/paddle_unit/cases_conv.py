"""Paddle's convolution rule tests (conv3d, depthwise_conv2d) as cases (see notation.py)."""
from .notation import Case

C3 = "test_conv3d_rule"
DW = "test_depthwise_conv2d_rule"
MESH3 = (2, 2, 2)


def _conv3d(fn, x, w, fmt, ins, outs, out=None):
    attrs = [[1, 1, 1], [0, 0, 0], "EXPLICIT", 1, [1, 1, 1], fmt]
    args = [x, w] + ([out] if fn == "bwd" else []) + attrs
    return Case(C3, "conv3d", fn, MESH3, args, ins=ins, outs=outs)


def _dw(fn, x, w, fmt, ins, outs, out=None, **kw):
    attrs = [[1, 1], [0, 0], "EXPLICIT", 4, [1, 1], fmt]
    args = [x, w] + ([out] if fn == "bwd" else []) + attrs
    return Case(DW, "depthwise_conv2d", fn, MESH3, args, ins=ins, outs=outs, **kw)


X3, W3 = "[2,4,6,8,8]", "[10,4,2,3,3]"
# Paddle splits a depthwise convolution's output channels, but each rank's kernel then pairs its
# block of output channels with the wrong input channels (groups stay 4, the channels per group
# change): spmdkit keeps channels whole for groups != 1.
DW_GROUPS = "a grouped convolution's channel split does not line up with each rank's groups"
X3L = "[2,6,8,8,4]"
CHANNEL_LAST = "NDHWC/NHWC: the output channel is the last dim; the test splits a spatial dim by the filter's mesh dim"
PARTIAL_GRAD = "out_grad kept partial over mesh dim 2 while both grads are split by it: the grads lose that sum"
NCHW_GRAD = dict(differs="an NHWC grad given an NCHW-shaped out_grad [2, 6, 10, 10]: its channels (dim 3, 10) are not "
                      "the filter's 6 and its spatial dims not the output's: the kernel refuses the call", ours="raises")
XD, WD, XDL = "[2,4,8,8]", "[8,1,3,3]", "[2,8,8,4]"

CASES = [
    _conv3d("fwd", f"{X3}{{0,-1,-1,-1,-1}}", f"{W3}{{-1,-1,-1,-1,-1}}", "NCDHW",
            ["{0,-1,-1,-1,-1}", "{-1,-1,-1,-1,-1}"], ["{0,-1,-1,-1,-1}p{}"]),
    _conv3d("fwd", f"{X3}{{-1,-1,-1,-1,-1}}", f"{W3}{{0,-1,-1,-1,-1}}", "NCDHW",
            ["{-1,-1,-1,-1,-1}", "{0,-1,-1,-1,-1}"], ["{-1,0,-1,-1,-1}p{}"]),
    _conv3d("fwd", f"{X3}{{0,-1,-1,-1,-1}}", f"{W3}{{1,-1,-1,-1,-1}}", "NCDHW",
            ["{0,-1,-1,-1,-1}", "{1,-1,-1,-1,-1}"], ["{0,1,-1,-1,-1}p{}"]),
    _conv3d("fwd", f"{X3}{{-1,0,-1,-1,-1}}", f"{W3}{{-1,0,-1,-1,-1}}", "NCDHW",
            ["{-1,0,-1,-1,-1}", "{-1,0,-1,-1,-1}"], ["{-1,-1,-1,-1,-1}p{0}"]),
    _conv3d("fwd", f"{X3}{{0,2,-1,-1,-1}}", f"{W3}{{1,2,-1,-1,-1}}", "NCDHW",
            ["{0,2,-1,-1,-1}", "{1,2,-1,-1,-1}"], ["{0,1,-1,-1,-1}p{2}"]),
    _conv3d("fwd", f"{X3L}{{-1,-1,-1,-1,0}}", f"{W3}{{-1,0,-1,-1,-1}}", "NDHWC",
            ["{-1,-1,-1,-1,0}", "{-1,0,-1,-1,-1}"], ["{-1,-1,-1,-1,-1}p{0}"]),
    Case(C3, "conv3d", "fwd", MESH3, [f"{X3L}{{0,-1,-1,-1,2}}", f"{W3}{{1,2,-1,-1,-1}}", [1, 1, 1], [0, 0, 0], "EXPLICIT", 1,
                                       [1, 1, 1], "NDHWC"],
         ins=["{0,-1,-1,-1,2}", "{1,2,-1,-1,-1}"], outs=["{0,1,-1,-1,-1}p{2}"],
         differs=CHANNEL_LAST,
         ours=(["{0,-1,-1,-1,2}", "{1,2,-1,-1,-1}"], ["{0,-1,-1,-1,1}p{2}"])),
    # The reverse test passes data_format NDHWC with NCDHW shapes (input channel 8, filter 4).
    Case(C3, "conv3d", "bwd", MESH3, ["[2,4,8,8,8]{-1,-1,-1,-1,-1}", "[10,4,3,3,3]{-1,-1,-1,-1,-1}",
                                      "[2,10,6,6,6]{0,1,-1,-1,-1}", [1, 1, 1], [0, 0, 0], "EXPLICIT", 1, [1, 1, 1], "NDHWC"],
         ins=["{0,-1,-1,-1,-1}p{}", "{1,-1,-1,-1,-1}p{}", "{0,1,-1,-1,-1}p{}"],
         outs=["{0,-1,-1,-1,-1}p{1}", "{1,-1,-1,-1,-1}p{0}"],
         differs="NDHWC given with NCDHW shapes: the input's channel dim (8) is not the filter's (4)", ours="raises"),
    Case(C3, "conv3d", "bwd", MESH3, ["[2,4,8,8,8]{0,2,-1,-1,-1}", "[10,4,3,3,3]{1,2,-1,-1,-1}",
                                      "[2,10,6,6,6]{0,1,-1,-1,-1}p{2}", [1, 1, 1], [0, 0, 0], "EXPLICIT", 1, [1, 1, 1], "NDHWC"],
         ins=["{0,2,-1,-1,-1}p{}", "{1,2,-1,-1,-1}p{}", "{0,1,-1,-1,-1}p{2}"],
         outs=["{0,2,-1,-1,-1}p{1}", "{1,2,-1,-1,-1}p{0}"], paddle="fails: Paddle 3.3.1 fails this test too",
         differs="NDHWC given with NCDHW shapes: the input's channel dim (8) is not the filter's (4)", ours="raises"),
    # the same two reverse calls with the data format their shapes have
    Case(C3, "conv3d", "bwd", MESH3, ["[2,4,8,8,8]{-1,-1,-1,-1,-1}", "[10,4,3,3,3]{-1,-1,-1,-1,-1}",
                                      "[2,10,6,6,6]{0,1,-1,-1,-1}", [1, 1, 1], [0, 0, 0], "EXPLICIT", 1, [1, 1, 1], "NCDHW"],
         ins=["{0,-1,-1,-1,-1}p{}", "{1,-1,-1,-1,-1}p{}", "{0,1,-1,-1,-1}p{}"],
         outs=["{0,-1,-1,-1,-1}p{1}", "{1,-1,-1,-1,-1}p{0}"], note="data_format as the shapes say"),
    Case(C3, "conv3d", "bwd", MESH3, ["[2,4,8,8,8]{0,2,-1,-1,-1}", "[10,4,3,3,3]{1,2,-1,-1,-1}",
                                      "[2,10,6,6,6]{0,1,-1,-1,-1}p{2}", [1, 1, 1], [0, 0, 0], "EXPLICIT", 1, [1, 1, 1], "NCDHW"],
         ins=["{0,2,-1,-1,-1}p{}", "{1,2,-1,-1,-1}p{}", "{0,1,-1,-1,-1}p{2}"],
         outs=["{0,2,-1,-1,-1}p{1}", "{1,2,-1,-1,-1}p{0}"], note="data_format as the shapes say",
         paddle="fails: Paddle 3.3.1 splits out_grad's D by the partial mesh dim",
         differs=PARTIAL_GRAD,
         ours=(["{0,2,-1,-1,-1}p{}", "{1,2,-1,-1,-1}p{}", "{0,1,-1,-1,-1}p{}"], ["{0,2,-1,-1,-1}p{1}", "{1,2,-1,-1,-1}p{0}"])),
    # depthwise_conv2d (groups = 4 = input channels, NCHW)
    _dw("fwd", f"{XD}{{0,-1,-1,-1}}", f"{WD}{{-1,-1,-1,-1}}", "NCHW", ["{0,-1,-1,-1}", "{-1,-1,-1,-1}"], ["{0,-1,-1,-1}"]),
    _dw("fwd", f"{XD}{{-1,-1,-1,-1}}", f"{WD}{{0,-1,-1,-1}}", "NCHW", ["{-1,-1,-1,-1}", "{0,-1,-1,-1}"], ["{-1,0,-1,-1}"],
        differs=DW_GROUPS, ours=(["{-1,-1,-1,-1}", "{-1,-1,-1,-1}"], ["{-1,-1,-1,-1}"])),
    _dw("fwd", f"{XD}{{0,-1,-1,-1}}", f"{WD}{{1,-1,-1,-1}}", "NCHW", ["{0,-1,-1,-1}", "{1,-1,-1,-1}"], ["{0,1,-1,-1}"],
        differs=DW_GROUPS, ours=(["{0,-1,-1,-1}", "{-1,-1,-1,-1}"], ["{0,-1,-1,-1}"])),
    _dw("fwd", f"{XD}{{-1,0,-1,-1}}", f"{WD}{{-1,-1,-1,-1}}", "NCHW", ["{-1,-1,-1,-1}", "{-1,-1,-1,-1}"], ["{-1,-1,-1,-1}"]),
    _dw("fwd", f"{XD}{{0,2,-1,-1}}", f"{WD}{{1,-1,-1,-1}}", "NCHW", ["{0,-1,-1,-1}", "{1,-1,-1,-1}"], ["{0,1,-1,-1}"],
        differs=DW_GROUPS, ours=(["{0,-1,-1,-1}", "{-1,-1,-1,-1}"], ["{0,-1,-1,-1}"])),
    _dw("fwd", f"{XDL}{{0,-1,-1,-1}}", f"{WD}{{-1,-1,-1,-1}}", "NHWC", ["{0,-1,-1,-1}", "{-1,-1,-1,-1}"], ["{0,-1,-1,-1}"]),
    _dw("fwd", f"{XDL}{{-1,-1,-1,-1}}", f"{WD}{{0,-1,-1,-1}}", "NHWC", ["{-1,-1,-1,-1}", "{0,-1,-1,-1}"], ["{-1,0,-1,-1}"],
        differs=DW_GROUPS, ours=(["{-1,-1,-1,-1}", "{-1,-1,-1,-1}"], ["{-1,-1,-1,-1}"])),
    _dw("fwd", f"{XDL}{{0,-1,-1,-1}}", f"{WD}{{1,-1,-1,-1}}", "NHWC", ["{0,-1,-1,-1}", "{1,-1,-1,-1}"], ["{0,1,-1,-1}"],
        differs=DW_GROUPS, ours=(["{0,-1,-1,-1}", "{-1,-1,-1,-1}"], ["{0,-1,-1,-1}"])),
    _dw("fwd", f"{XDL}{{-1,-1,-1,0}}", f"{WD}{{-1,-1,-1,-1}}", "NHWC", ["{-1,-1,-1,-1}", "{-1,-1,-1,-1}"], ["{-1,-1,-1,-1}"]),
    _dw("bwd", f"{XD}{{-1,-1,-1,-1}}", f"{WD}{{-1,-1,-1,-1}}", "NCHW", ["{0,-1,-1,-1}", "{1,-1,-1,-1}", "{0,1,-1,-1}"],
        ["{0,-1,-1,-1}", "{1,-1,-1,-1}"], out="[2,8,6,6]{0,1,-1,-1}", differs=DW_GROUPS,
        ours=(["{0,-1,-1,-1}", "{-1,-1,-1,-1}", "{0,-1,-1,-1}"], ["{0,-1,-1,-1}", "{-1,-1,-1,-1}p{0}"])),
]

C2, CT = "test_conv2d_rule", "test_conv2d_transpose_rule"
XC, WC = "[2,4,8,8]", "[10,4,3,3]"
CONV2D = [
    # conv2d(input, filter) with the default attributes
    Case(C2, "conv2d", "fwd", MESH3, [f"{XC}{{0,-1,-1,-1}}", f"{WC}{{-1,-1,-1,-1}}"],
         ins=["{0,-1,-1,-1}", "{-1,-1,-1,-1}"], outs=["{0,-1,-1,-1}p{}"]),
    Case(C2, "conv2d", "fwd", MESH3, [f"{XC}{{-1,-1,-1,-1}}", f"{WC}{{0,-1,-1,-1}}"],
         ins=["{-1,-1,-1,-1}", "{0,-1,-1,-1}"], outs=["{-1,0,-1,-1}p{}"]),
    Case(C2, "conv2d", "fwd", MESH3, [f"{XC}{{0,-1,-1,-1}}", f"{WC}{{1,-1,-1,-1}}"],
         ins=["{0,-1,-1,-1}", "{1,-1,-1,-1}"], outs=["{0,1,-1,-1}p{}"]),
    Case(C2, "conv2d", "fwd", MESH3, [f"{XC}{{-1,0,-1,-1}}", f"{WC}{{-1,0,-1,-1}}"],
         ins=["{-1,0,-1,-1}", "{-1,0,-1,-1}"], outs=["{-1,-1,-1,-1}p{0}"]),
    Case(C2, "conv2d", "fwd", MESH3, [f"{XC}{{0,2,-1,-1}}", f"{WC}{{1,2,-1,-1}}"],
         ins=["{0,2,-1,-1}", "{1,2,-1,-1}"], outs=["{0,1,-1,-1}p{2}"]),
    Case(C2, "conv2d", "bwd", MESH3, [f"{XC}{{-1,-1,-1,-1}}", f"{WC}{{-1,-1,-1,-1}}", "[2,10,6,6]{0,1,-1,-1}"],
         ins=["{0,-1,-1,-1}p{}", "{1,-1,-1,-1}p{}"], outs=["{0,1,-1,-1}p{}"]),
]

XT, WT = "[2,4,8,8]", "[4,6,3,3]"
XTL = "[2,8,8,4]"


def _ct(fn, x, w, fmt, ins, outs, out=None, **kw):
    attrs = [[1, 1], [0, 0], [], [], "EXPLICIT", 1, [1, 1], fmt]
    return Case(CT, "conv2d_transpose", fn, MESH3, [x, w] + ([out] if out else []) + attrs, ins=ins, outs=outs, **kw)


# The tests' second reverse calls leave out output_padding and output_size (Paddle then reads
# the attributes shifted); the cases pass the full list.
SHIFTED = "the test passes 7 of the 8 attributes; the case passes all of them"
CONV2D_TRANSPOSE = [
    _ct("fwd", f"{XT}{{0,-1,-1,-1}}", f"{WT}{{-1,-1,-1,-1}}", "NCHW", ["{0,-1,-1,-1}", "{-1,-1,-1,-1}"], ["{0,-1,-1,-1}p{}"]),
    _ct("fwd", f"{XT}{{-1,-1,-1,-1}}", f"{WT}{{-1,0,-1,-1}}", "NCHW", ["{-1,-1,-1,-1}", "{-1,0,-1,-1}"], ["{-1,0,-1,-1}p{}"]),
    _ct("fwd", f"{XT}{{0,-1,-1,-1}}", f"{WT}{{-1,1,-1,-1}}", "NCHW", ["{0,-1,-1,-1}", "{-1,1,-1,-1}"], ["{0,1,-1,-1}p{}"]),
    _ct("fwd", f"{XT}{{-1,0,-1,-1}}", f"{WT}{{0,-1,-1,-1}}", "NCHW", ["{-1,0,-1,-1}", "{0,-1,-1,-1}"], ["{-1,-1,-1,-1}p{0}"]),
    _ct("fwd", f"{XT}{{0,2,-1,-1}}", f"{WT}{{2,1,-1,-1}}", "NCHW", ["{0,2,-1,-1}", "{2,1,-1,-1}"], ["{0,1,-1,-1}p{2}"]),
    # the NHWC test builds its input spec from the shape ([2, 8, 8, 4],) (a tuple holding the
    # list), which Paddle 3.3.1's constructor refuses; the cases give the shape itself
    _ct("fwd", f"{XTL}{{-1,-1,-1,0}}", f"{WT}{{0,-1,-1,-1}}", "NHWC", ["{-1,-1,-1,0}", "{0,-1,-1,-1}"], ["{-1,-1,-1,-1}p{0}"]),
    _ct("fwd", f"{XTL}{{0,-1,-1,2}}", f"{WT}{{2,1,-1,-1}}", "NHWC", ["{0,-1,-1,2}", "{2,1,-1,-1}"], ["{0,1,-1,-1}p{2}"],
        differs=CHANNEL_LAST, ours=(["{0,-1,-1,2}", "{2,1,-1,-1}"], ["{0,-1,-1,1}p{2}"])),
    _ct("bwd", f"{XT}{{-1,-1,-1,-1}}", f"{WT}{{-1,-1,-1,-1}}", "NCHW", ["{0,-1,-1,-1}p{}", "{-1,1,-1,-1}p{}", "{0,1,-1,-1}p{}"],
        ["{0,-1,-1,-1}p{1}", "{-1,1,-1,-1}p{0}"], out="[2,6,10,10]{0,1,-1,-1}"),
    _ct("bwd", f"{XT}{{0,2,-1,-1}}", f"{WT}{{2,1,-1,-1}}", "NCHW", ["{0,2,-1,-1}p{}", "{2,1,-1,-1}p{}", "{0,1,-1,-1}p{2}"],
        ["{0,2,-1,-1}p{1}", "{2,1,-1,-1}p{0}"], out="[2,6,10,10]{0,1,-1,-1}p{2}", note=SHIFTED, differs=PARTIAL_GRAD,
        ours=(["{0,2,-1,-1}p{}", "{2,1,-1,-1}p{}", "{0,1,-1,-1}p{}"], ["{0,2,-1,-1}p{1}", "{2,1,-1,-1}p{0}"])),
    # NHWC grads given an out_grad of NCHW shape [2, 6, 10, 10]
    _ct("bwd", f"{XTL}{{-1,-1,-1,-1}}", f"{WT}{{-1,-1,-1,-1}}", "NHWC", ["{0,-1,-1,-1}p{}", "{-1,1,-1,-1}p{}", "{0,1,-1,-1}p{}"],
        ["{0,-1,-1,-1}p{1}", "{-1,1,-1,-1}p{0}"], out="[2,6,10,10]{0,1,-1,-1}", **NCHW_GRAD),
    _ct("bwd", f"{XTL}{{0,-1,-1,2}}", f"{WT}{{2,1,-1,-1}}", "NHWC", ["{0,-1,-1,2}p{}", "{2,1,-1,-1}p{}", "{0,1,-1,-1}p{2}"],
        ["{0,-1,-1,2}p{1}", "{2,1,-1,-1}p{0}"], out="[2,6,10,10]{0,1,-1,-1}p{2}", note=SHIFTED, **NCHW_GRAD),
    # the consistent call: an NHWC out_grad [2, 10, 10, 6] (channels last); Paddle 3.3.1 reads its
    # dim 1 (H_out) as the channels
    _ct("bwd", f"{XTL}{{-1,-1,-1,-1}}", f"{WT}{{-1,-1,-1,-1}}", "NHWC", ["{0,-1,-1,-1}p{}", "{-1,1,-1,-1}p{}", "{0,1,-1,-1}p{}"],
        ["{0,-1,-1,-1}p{1}", "{-1,1,-1,-1}p{0}"], out="[2,10,10,6]{0,1,-1,-1}",
        note="the test's call with out_grad in NHWC layout [2, 10, 10, 6]",
        differs="NHWC: out_grad's channels are its last dim; Paddle pairs its H_out with the filter's output channels",
        ours=(["{0,-1,-1,-1}p{}", "{-1,-1,-1,-1}p{}", "{0,-1,-1,-1}p{}"], ["{0,-1,-1,-1}p{}", "{-1,-1,-1,-1}p{0}"])),
]
CASES += CONV2D + CONV2D_TRANSPOSE
