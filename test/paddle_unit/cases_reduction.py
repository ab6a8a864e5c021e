"""Paddle's reduction-like rule tests (argmin, argmax, ...) as cases (see notation.py)."""
from .notation import Case

AMIN = "test_argmin_rule"
AMAX = "test_argmax_rule"
X = "[64,32,48]"


def _arg(file, op, fn, x, axis, keepdims, flatten, ins, outs, out=None, **kw):
    args = [x, axis, keepdims, flatten] if fn == "fwd" else [x, out, axis, keepdims, flatten]
    return Case(file, op, fn, (2, 3), args, ins=ins, outs=outs, **kw)


ZERO_D = "flatten without keepdims gives a 0-D index: Paddle's rule gives it a rank-1 mapping"


ARG_CASES = [
    _arg(AMIN, "argmin", "fwd", f"{X}{{0,1,-1}}", 1, False, False, ["{0,-1,-1}"], ["{0,-1}"]),
    _arg(AMIN, "argmin", "fwd", f"{X}{{0,1,-1}}", -1, False, False, ["{0,1,-1}"], ["{0,1}"]),
    _arg(AMIN, "argmin", "fwd", f"{X}{{0,1,-1}}", -1, True, False, ["{0,1,-1}"], ["{0,1,-1}"]),
    _arg(AMIN, "argmin", "fwd", f"{X}{{0,1,-1}}", -1, False, True, ["{-1,-1,-1}"], ["{-1}"],
         differs=ZERO_D, ours=(["{-1,-1,-1}"], ["{}"])),
    _arg(AMIN, "argmin", "bwd", f"{X}{{-1,-1,-1}}", 1, False, False, ["{0,-1,-1}"], ["{0,-1}"], out="copy:[64,48]{0,-1}"),
    _arg(AMIN, "argmin", "bwd", f"{X}{{-1,-1,-1}}", -1, False, False, ["{0,1,-1}"], ["{0,1}"], out="copy:[64,32]{0,1}"),
    _arg(AMIN, "argmin", "bwd", f"{X}{{-1,-1,-1}}", -1, True, True, ["{-1,-1,-1}"], ["{-1,-1,-1}"], out="copy:[1,1,1]{0,1,-1}"),
]

# argmax's test is argmin's with the other op
CASES = ARG_CASES + [Case(AMAX, "argmax", c.fn, c.mesh, c.args, ins=c.ins, outs=c.outs, differs=c.differs, ours=c.ours)
                     for c in ARG_CASES]

ASORT, CSUM = "test_argsort_rule", "test_cumsum_rule"
# The test expects one output; Paddle 3.3.1, like spmdkit, gives out and indices (same layout).
ARGSORT_OUTS = "two outputs (out, indices) as in Paddle 3.3.1"
X6 = "[64,32,48]"
CASES += [
    # argsort(x, axis, descending, stable); grad(x, indices, out_grad, ...)
    Case(ASORT, "argsort", "fwd", (2, 3), [f"{X6}{{0,-1,1}}", -1, False, False], ins=["{0,-1,-1}"], outs=["{0,-1,-1}", "{0,-1,-1}"], note=ARGSORT_OUTS),
    Case(ASORT, "argsort", "fwd", (2, 3), [f"{X6}{{0,1,-1}}", -1, False, False], ins=["{0,1,-1}"], outs=["{0,1,-1}", "{0,1,-1}"], note=ARGSORT_OUTS),
    Case(ASORT, "argsort", "fwd", (2, 3), [f"{X6}{{0,1,-1}}", 1, False, False], ins=["{0,-1,-1}"], outs=["{0,-1,-1}", "{0,-1,-1}"], note=ARGSORT_OUTS),
    Case(ASORT, "argsort", "bwd", (2, 3), [f"{X6}{{0,-1,1}}", f"{X6}{{0,-1,1}}", f"{X6}{{0,-1,1}}", -1, False, False],
         ins=["{0,-1,-1}"] * 3, outs=["{0,-1,-1}"]),
    Case(ASORT, "argsort", "bwd", (2, 3), [f"{X6}{{0,1,-1}}", f"{X6}{{0,1,-1}}", f"{X6}{{0,1,-1}}", 1, False, False],
         ins=["{0,-1,-1}"] * 3, outs=["{0,-1,-1}"]),
    # cumsum(x, axis, flatten, exclusive, reverse)
    Case(CSUM, "cumsum", "fwd", (2, 4), [f"{X6}{{-1,0,1}}", 1, False, False, False], ins=["{-1,-1,1}"], outs=["{-1,-1,1}"]),
    Case(CSUM, "cumsum", "fwd", (2, 4), [f"{X6}{{-1,0,1}}", 0, False, False, False], ins=["{-1,0,1}"], outs=["{-1,0,1}"]),
    Case(CSUM, "cumsum", "fwd", (2, 4), [f"{X6}{{-1,0,1}}", -1, True, False, False], ins=["{-1,-1,-1}"], outs=["{-1}"]),
    Case(CSUM, "cumsum", "bwd", (2, 4), [f"{X6}{{-1,-1,1}}", f"copy:{X6}{{-1,-1,1}}", 1, False, False, False],
         ins=["{-1,-1,1}"], outs=["{-1,-1,1}"]),
    Case(CSUM, "cumsum", "bwd", (2, 4), [f"{X6}{{-1,0,1}}", "copy:[98304]{-1}", -1, True, False, False],
         ins=["{-1,-1,-1}"], outs=["{-1}"]),
]
