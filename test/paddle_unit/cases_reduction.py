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

LSE, MEAN_ALL, NZ, OH = "test_logsumexp_rule", "test_mean_all_rule", "test_nonzero_rule", "test_one_hot_rule"
# The reverse tests leave x with setUp's mapping [1, 0] (mesh dim 1 of the 1-D mesh, or a rank-2
# mapping on a reshaped x); Paddle's reverse does not read it. The cases give x replicated.
STALE = "x given replicated: the test leaves it with a stale mapping that does not fit it"


# A split reduced axis: Paddle sums the ranks' logsumexps (partial SUM), which is not the
# logsumexp of the whole; spmdkit makes the reduced axes whole.
LSE_SUM = "the ranks' logsumexps over a split axis do not add up to the logsumexp"


def _lse(mesh, x, axis, keep, rall, x_want, out_want, ours=None):
    kw = dict(differs=LSE_SUM, ours=([ours[0]], [ours[1]])) if ours else {}
    return Case(LSE, "logsumexp", "fwd", mesh, [x, axis, keep, rall], ins=[x_want], outs=[out_want], **kw)


def _lse_bwd(mesh, x, out, axis, keep, rall, x_want, out_want):
    return Case(LSE, "logsumexp", "bwd", mesh, [x, out, axis, keep, rall], ins=[x_want], outs=[out_want], note=STALE)


X2, X3 = "[64,32]", "[96,24,48]"
CASES += [
    _lse((4,), f"{X2}{{0,-1}}", [0], False, False, "{0,-1}", "{-1}p{0}", ("{-1,-1}", "{-1}p{}")),
    _lse((4,), f"{X2}{{0,-1}}", [0], True, False, "{0,-1}", "{-1,-1}p{0}", ("{-1,-1}", "{-1,-1}p{}")),
    _lse((4,), f"{X2}{{0,-1}}", [1], False, False, "{0,-1}", "{0}p{}"),
    _lse((4,), f"{X2}{{0,-1}}", [1], True, False, "{0,-1}", "{0,-1}p{}"),
    _lse((4,), f"{X2}{{0,-1}}", [0, 1], False, True, "{0,-1}", "{}p{0}", ("{-1,-1}", "{}p{}")),
    _lse((4,), f"{X2}{{0,-1}}", [0, 1], True, True, "{0,-1}", "{-1,-1}p{0}", ("{-1,-1}", "{-1,-1}p{}")),
    _lse((2, 3), f"{X3}{{0,-1,-1}}", [1, 2], False, False, "{0,-1,-1}", "{0}p{}"),
    _lse((2, 3), f"{X3}{{-1,0,1}}", [1, 2], False, False, "{-1,0,1}", "{-1}p{0,1}", ("{-1,-1,-1}", "{-1}p{}")),
    _lse((2, 3), f"{X3}{{1,-1,-1}}", [1, 2], False, False, "{1,-1,-1}", "{1}p{}"),
    _lse((2, 3), f"{X3}{{0,1,-1}}", [1, 2], False, False, "{0,1,-1}", "{0}p{1}", ("{0,-1,-1}", "{0}p{}")),
    _lse((2, 3), f"{X3}{{0,1,-1}}", [1, 2], True, False, "{0,1,-1}", "{0,-1,-1}p{1}", ("{0,-1,-1}", "{0,-1,-1}p{}")),
    _lse((2, 3), f"{X3}{{0,1,-1}}", [0, 1, 2], False, True, "{0,1,-1}", "{}p{0,1}", ("{-1,-1,-1}", "{}p{}")),
    _lse((2, 3), f"{X3}{{0,1,-1}}", [0, 1, 2], True, True, "{0,1,-1}", "{-1,-1,-1}p{0,1}", ("{-1,-1,-1}", "{-1,-1,-1}p{}")),
    _lse_bwd((4,), f"{X2}{{-1,-1}}", "copy:[32]{-1}", [0], False, False, "{-1,-1}", "{-1}"),
    _lse_bwd((4,), f"{X2}{{-1,-1}}", "copy:[1,32]{-1,-1}", [0], True, False, "{-1,-1}", "{-1,-1}"),
    _lse_bwd((4,), f"{X2}{{-1,-1}}", "copy:[64]{0}", [1], False, False, "{0,-1}", "{0}"),
    _lse_bwd((4,), f"{X2}{{-1,-1}}", "copy:[64,1]{0,-1}", [1], True, False, "{0,-1}", "{0,-1}"),
    _lse_bwd((4,), f"{X2}{{-1,-1}}", "copy:[]{}", [0, 1], False, True, "{-1,-1}", "{}"),
    _lse_bwd((4,), f"{X2}{{-1,-1}}", "copy:[1,1]{-1,-1}", [0, 1], True, True, "{-1,-1}", "{-1,-1}"),
    _lse_bwd((2, 3), f"{X3}{{-1,-1,-1}}", "[96]{0}", [1, 2], False, False, "{0,-1,-1}", "{0}"),
    _lse_bwd((2, 3), f"{X3}{{-1,-1,-1}}", "[96]{-1}", [1, 2], False, False, "{-1,-1,-1}", "{-1}"),
    _lse_bwd((2, 3), f"{X3}{{-1,-1,-1}}", "[96]{1}", [1, 2], False, False, "{1,-1,-1}", "{1}"),
    _lse_bwd((2, 3), f"{X3}{{-1,-1,-1}}", "[96,1,1]{0,-1,-1}", [1, 2], True, False, "{0,-1,-1}", "{0,-1,-1}"),
    # a partial out_grad: x comes back not partial
    _lse_bwd((2, 3), f"{X3}{{-1,-1,-1}}", "[96,1,1]{0,-1,-1}p{1}", [1, 2], True, False, "{0,-1,-1}p{}", "{0,-1,-1}"),
    _lse_bwd((2, 3), f"{X3}{{-1,-1,-1}}", "[96,1,1]{-1,-1,-1}p{1}", [0, 1, 2], True, True, "{-1,-1,-1}p{}", "{-1,-1,-1}"),
    # mean_all(x); reverse (x, out)
    Case(MEAN_ALL, "mean_all", "fwd", (2, 2), ["[4,8]{0,-1}"], ins=["{0,-1}"], outs=["{}p{0}"]),
    Case(MEAN_ALL, "mean_all", "bwd", (2, 2), ["[4,8]{1,0}", "[]{}"], ins=["{-1,-1}", "{}"], outs=["{-1,-1}"]),
    # nonzero: the tests' x mapping [1, 1, 1] uses mesh dim 1 three times
    Case(NZ, "nonzero", "fwd", (2, 2), ["[16,16,16]{1,1,1}"], ins=["{-1,-1,-1}"], outs=["{-1,-1}"],
         differs="x's mapping uses mesh dim 1 three times", ours="raises", bad_input="[16,16,16]{1,1,1}"),
    Case(NZ, "nonzero", "fwd", (2, 2), ["[16,16,16]{-1,-1,-1}"], ins=["{-1,-1,-1}"], outs=["{-1,-1}"]),
    Case(NZ, "nonzero", "bwd", (2, 2), ["[16,16,16]{1,1,1}", "[8,8]{1,1}"], ins=["{-1,-1,-1}"], outs=["{-1,-1}"],
         differs="x's mapping uses mesh dim 1 three times", ours="raises", bad_input="[16,16,16]{1,1,1}"),
    Case(NZ, "nonzero", "bwd", (2, 2), ["[16,16,16]{-1,-1,-1}", "[8,8]{-1,-1}"], ins=["{-1,-1,-1}"], outs=["{-1,-1}"],
         note="the second reverse call with a valid x (the test passes [1, 1, 1] again)"),
    # one_hot(x, num_classes)
    Case(OH, "one_hot", "fwd", (2, 4), ["[4,1024]{0,1}", 30000], ins=["{0,1}"], outs=["{0,1,-1}"]),
    Case(OH, "one_hot", "bwd", (2, 4), ["[4,1024]{0,1}", "[4,1024,30000]{0,1,-1}", 30000], ins=["{0,1}"], outs=["{0,1,-1}"]),
    Case(OH, "one_hot", "bwd", (2, 4), ["[4,1024]{-1,-1}", "[4,1024,30000]{0,-1,1}", 30000], ins=["{0,-1}"], outs=["{0,-1,-1}"]),
]

PN = "test_p_norm_rule"
# porder 2 over a split axis: Paddle sums the ranks' 2-norms (partial SUM), which is not the
# 2-norm of the whole; spmdkit makes the reduced axes whole.
PN_SUM = dict(differs="the ranks' 2-norms over a split axis do not add up to the 2-norm")


def _pn(x, axis, keep, asvec, x_want, out_want, fn="fwd", out=None, **kw):
    args = [x] + ([out] if fn == "bwd" else []) + [2.0, axis, 1.0e-12, keep, asvec]
    return Case(PN, "p_norm", fn, (4,), args, ins=[x_want], outs=[out_want], **kw)


XP = "[64,32]"
CASES += [
    _pn(f"{XP}{{0,-1}}", 0, False, False, "{0,-1}", "{-1}p{0}", ours=(["{-1,-1}"], ["{-1}p{}"]), **PN_SUM),
    _pn(f"{XP}{{0,-1}}", 0, True, False, "{0,-1}", "{-1,-1}p{0}", ours=(["{-1,-1}"], ["{-1,-1}p{}"]), **PN_SUM),
    _pn(f"{XP}{{0,-1}}", 1, False, False, "{0,-1}", "{0}p{}"),
    _pn(f"{XP}{{0,-1}}", 1, True, False, "{0,-1}", "{0,-1}p{}"),
    _pn(f"{XP}{{0,-1}}", 0, False, True, "{0,-1}", "{}p{0}", ours=(["{-1,-1}"], ["{}p{}"]), **PN_SUM),
    _pn(f"{XP}{{0,-1}}", 0, True, True, "{0,-1}", "{-1,-1}p{0}", ours=(["{-1,-1}"], ["{-1,-1}p{}"]), **PN_SUM),
    _pn(f"{XP}{{-1,-1}}", 0, False, False, "{-1,-1}", "{-1}", fn="bwd", out="copy:[32]{-1}", note=STALE),
    _pn(f"{XP}{{-1,-1}}", 0, True, False, "{-1,-1}", "{-1,-1}", fn="bwd", out="copy:[1,32]{-1,-1}", note=STALE),
    _pn(f"{XP}{{-1,-1}}", 1, False, False, "{0,-1}", "{0}", fn="bwd", out="copy:[64]{0}", note=STALE),
    _pn(f"{XP}{{-1,-1}}", 1, True, False, "{0,-1}", "{0,-1}", fn="bwd", out="copy:[64,1]{0,-1}", note=STALE),
    _pn(f"{XP}{{-1,-1}}", 0, False, True, "{-1,-1}", "{}", fn="bwd", out="copy:[]{}", note=STALE),
    _pn(f"{XP}{{-1,-1}}", 0, True, True, "{-1,-1}", "{-1,-1}", fn="bwd", out="copy:[1,1]{-1,-1}", note=STALE),
]

RED = "test_reduction_rule"


def _max(mesh, x, axis, keep, x_want, out_want, fn="fwd", out=None):
    args = [x, axis, keep] if fn == "fwd" else [x, out, axis, keep]
    return Case(RED, "max", fn, mesh, args, ins=[x_want], outs=[out_want], note=STALE if fn == "bwd" else "")


CASES += [
    _max((4,), f"{X2}{{0,-1}}", [0], False, "{0,-1}", "{-1}p{0}"),
    _max((4,), f"{X2}{{0,-1}}", [0], True, "{0,-1}", "{-1,-1}p{0}"),
    _max((4,), f"{X2}{{0,-1}}", [1], False, "{0,-1}", "{0}p{}"),
    _max((4,), f"{X2}{{0,-1}}", [1], True, "{0,-1}", "{0,-1}p{}"),
    _max((4,), f"{X2}{{0,-1}}", [0, 1], False, "{0,-1}", "{}p{0}"),
    _max((4,), f"{X2}{{0,-1}}", [0, 1], True, "{0,-1}", "{-1,-1}p{0}"),
    _max((2, 3), f"{X3}{{0,-1,-1}}", [1, 2], False, "{0,-1,-1}", "{0}p{}"),
    _max((2, 3), f"{X3}{{-1,0,1}}", [1, 2], False, "{-1,0,1}", "{-1}p{0,1}"),
    _max((2, 3), f"{X3}{{1,-1,-1}}", [1, 2], False, "{1,-1,-1}", "{1}p{}"),
    _max((2, 3), f"{X3}{{0,1,-1}}", [1, 2], False, "{0,1,-1}", "{0}p{1}"),
    _max((2, 3), f"{X3}{{0,1,-1}}", [1, 2], True, "{0,1,-1}", "{0,-1,-1}p{1}"),
    _max((4,), f"{X2}{{-1,-1}}", [0], False, "{-1,-1}", "{-1}", "bwd", "copy:[32]{-1}"),
    _max((4,), f"{X2}{{-1,-1}}", [0], True, "{-1,-1}", "{-1,-1}", "bwd", "copy:[1,32]{-1,-1}"),
    _max((4,), f"{X2}{{-1,-1}}", [1], False, "{0,-1}", "{0}", "bwd", "copy:[64]{0}"),
    _max((4,), f"{X2}{{-1,-1}}", [1], True, "{0,-1}", "{0,-1}", "bwd", "copy:[64,1]{0,-1}"),
    _max((4,), f"{X2}{{-1,-1}}", [0, 1], False, "{-1,-1}", "{}", "bwd", "copy:[]{}"),
    _max((4,), f"{X2}{{-1,-1}}", [0, 1], True, "{-1,-1}", "{-1,-1}", "bwd", "copy:[1,1]{-1,-1}"),
    # (the file's multi-mesh reverse cases and its other reduce kernels are not re-expressed here)
]
CASES += [
    _max((2, 3), f"{X3}{{-1,-1,-1}}", [1, 2], False, "{0,-1,-1}", "{0}", "bwd", "copy:[96]{0}"),
    _max((2, 3), f"{X3}{{-1,-1,-1}}", [1, 2], False, "{-1,-1,-1}", "{-1}", "bwd", "copy:[96]{-1}"),
    _max((2, 3), f"{X3}{{-1,-1,-1}}", [1, 2], False, "{1,-1,-1}", "{1}", "bwd", "copy:[96]{1}"),
    _max((2, 3), f"{X3}{{-1,-1,-1}}", [1, 2], True, "{0,-1,-1}", "{0,-1,-1}", "bwd", "copy:[96,1,1]{0,-1,-1}"),
    # a partial output: x comes back not partial
    _max((2, 3), f"{X3}{{-1,-1,-1}}", [1, 2], True, "{0,-1,-1}p{}", "{0,-1,-1}", "bwd", "[96,1,1]{0,-1,-1}p{1}"),
]

# TestSquaredL2NormSPMDRule runs every test method of the file on squared_l2_norm (a sum of squares)
CASES += [Case(RED, "squared_l2_norm", c.fn, c.mesh, c.args, ins=c.ins, outs=c.outs, note=c.note)
          for c in list(CASES) if c.file == RED and c.op == "max"]
