"""Paddle's reshape-like rule tests (flatten, reshape, squeeze, unsqueeze, ...) as cases."""
from .notation import Case

FL = "test_flatten_rule"
X = "[8,16,8,24]"
ENGINE = "fixed on branch paddle-engine"


def _fl(mapping, start, stop, x_want, out_want):
    return Case(FL, "flatten", "fwd", (2, 4), [f"{X}{{{mapping}}}", start, stop], ins=[x_want], outs=[out_want])


def _fl_bwd(out_shape, mapping, start, stop, x_want, out_want):
    return Case(FL, "flatten", "bwd", (2, 4), [f"{X}{{-1,-1,-1,-1}}", f"{out_shape}{{{mapping}}}", start, stop],
                ins=[x_want], outs=[out_want])


O3, O1, O2 = "[8,128,24]", "[24576]", "[8,3072]"
CASES = [
    _fl("0,-1,-1,1", 1, 2, "{0,-1,-1,1}", "{0,-1,1}"),
    _fl("-1,0,-1,1", 1, 2, "{-1,0,-1,1}", "{-1,0,1}"),
    _fl("-1,-1,1,0", 1, 2, "{-1,-1,-1,0}", "{-1,-1,0}"),
    _fl("-1,0,1,-1", 0, -1, "{-1,-1,-1,-1}", "{-1}"),
    _fl("0,-1,-1,1", 0, -1, "{0,-1,-1,-1}", "{0}"),
    _fl("1,0,-1,-1", 0, -1, "{1,-1,-1,-1}", "{1}"),
    _fl("-1,-1,0,1", 1, -1, "{-1,-1,-1,-1}", "{-1,-1}"),
    _fl("-1,0,-1,1", 1, -1, "{-1,0,-1,-1}", "{-1,0}"),
    _fl("0,1,-1,-1", 1, -1, "{0,1,-1,-1}", "{0,1}"),
    _fl_bwd(O3, "0,-1,1", 1, 2, "{0,-1,-1,1}", "{0,-1,1}"),
    _fl_bwd(O3, "0,1,-1", 1, 2, "{0,1,-1,-1}", "{0,1,-1}"),
    _fl_bwd(O3, "-1,0,1", 1, 2, "{-1,0,-1,1}", "{-1,0,1}"),
    _fl_bwd(O1, "-1", 0, -1, "{-1,-1,-1,-1}", "{-1}"),
    _fl_bwd(O1, "0", 0, -1, "{0,-1,-1,-1}", "{0}"),
    _fl_bwd(O1, "1", 0, -1, "{1,-1,-1,-1}", "{1}"),
    _fl_bwd(O2, "-1,-1", 1, -1, "{-1,-1,-1,-1}", "{-1,-1}"),
    _fl_bwd(O2, "0,-1", 1, -1, "{0,-1,-1,-1}", "{0,-1}"),
    _fl_bwd(O2, "0,1", 1, -1, "{0,1,-1,-1}", "{0,1}"),
]

TR = "test_transpose_rule"
X4 = "[64,48,36,24]"
STALE = "x given replicated: the test leaves it with setUp's mapping [1, 0], which does not fit it"
CASES += [
    Case(TR, "transpose", "fwd", (4,), ["[64,36]{0,-1}", [1, 0]], ins=["{0,-1}"], outs=["{-1,0}"]),
    Case(TR, "transpose", "fwd", (4,), ["[64,36]{0,-1}", [0, 1]], ins=["{0,-1}"], outs=["{0,-1}"]),
    Case(TR, "transpose", "fwd", (4,), [f"{X4}{{-1,-1,0,-1}}", [0, 2, 3, 1]], ins=["{-1,-1,0,-1}"], outs=["{-1,0,-1,-1}"]),
    Case(TR, "transpose", "fwd", (2, 3), [f"{X4}{{-1,0,1,-1}}", [0, 2, 3, 1]], ins=["{-1,0,1,-1}"], outs=["{-1,1,-1,0}"]),
    Case(TR, "transpose", "fwd", (2, 3), [f"{X4}{{-1,-1,-1,-1}}", [0, 2, 3, 1]], ins=["{-1,-1,-1,-1}"], outs=["{-1,-1,-1,-1}"]),
    Case(TR, "transpose", "fwd", (2, 3), [f"{X4}{{-1,-1,0,1}}", [-1, 0, -2, 1]], ins=["{-1,-1,0,1}"], outs=["{1,-1,0,-1}"]),
    Case(TR, "transpose", "bwd", (4,), ["[64,36]{-1,-1}", "copy:[36,64]{-1,0}", [1, 0]], ins=["{0,-1}"], outs=["{-1,0}"], note=STALE),
    Case(TR, "transpose", "bwd", (4,), ["[64,36]{-1,-1}", "copy:[64,36]{0,-1}", [0, 1]], ins=["{0,-1}"], outs=["{0,-1}"], note=STALE),
    Case(TR, "transpose", "bwd", (4,), [f"{X4}{{-1,-1,-1,-1}}", "copy:[64,36,24,48]{-1,0,-1,-1}", [0, 2, 3, 1]],
         ins=["{-1,-1,0,-1}"], outs=["{-1,0,-1,-1}"], note=STALE),
    Case(TR, "transpose", "bwd", (2, 3), [f"{X4}{{-1,-1,-1,-1}}", "copy:[64,36,24,48]{-1,1,-1,0}", [0, 2, 3, 1]],
         ins=["{-1,0,1,-1}"], outs=["{-1,1,-1,0}"], note=STALE),
    Case(TR, "transpose", "bwd", (2, 3), [f"{X4}{{-1,-1,-1,-1}}", "copy:[64,36,24,48]{-1,-1,-1,-1}", [0, 2, 3, 1]],
         ins=["{-1,-1,-1,-1}"], outs=["{-1,-1,-1,-1}"], note=STALE),
    Case(TR, "transpose", "bwd", (2, 3), [f"{X4}{{-1,-1,-1,-1}}", "copy:[24,64,36,48]{1,-1,0,-1}", [-1, 0, -2, 1]],
         ins=["{-1,-1,0,1}"], outs=["{1,-1,0,-1}"], note=STALE),
]
