"""Paddle's attention and normalization rule tests as cases (see notation.py)."""
from .notation import Case

FA = "test_flash_attention_rule"
Q, K, V = "[2,512,64,1024]{0,-1,1,-1}", "[2,1024,64,1024]{0,-1,-1,-1}", "[2,1024,64,512]{0,-1,-1,-1}"
NONE = "[]{}"   # the tests' "empty tensor": shape [] and mapping [] (an absent optional input)
FA_ATTRS = [0.0, False, False, False]
QKV = ["{0,-1,1,-1}"] * 3

CASES = [
    # v's head dim (512) differs from q's and k's (1024)
    Case(FA, "flash_attention", "fwd", (2, 3), [Q, K, V, NONE, NONE] + FA_ATTRS,
         ins=QKV + [None, None], outs=["{0,-1,1,-1}", None, "{0,1,-1}", None]),
    Case(FA, "flash_attention", "bwd", (2, 3),
         [Q, K, V, NONE, NONE, "[2,512,64,512]{0,-1,1,-1}", NONE, "[2,64,512]{0,1,-1}", NONE] + FA_ATTRS,
         ins=QKV + [None, None], outs=["{0,-1,1,-1}", None, "{0,1,-1}", None]),
]

LN = "test_layer_norm_rule"
XL, S = "[64,32,1024]", "[1024]"


def _ln_fwd(x, s, b, bna, ins, outs, **kw):
    return Case(LN, "layer_norm", "fwd", (2, 3), [f"{XL}{{{x}}}", s, b, 1e-3, bna], ins=ins, outs=outs, **kw)


def _ln_bwd(out, mean, var, ins, outs, **kw):
    return Case(LN, "layer_norm", "bwd", (2, 3),
                [f"{XL}{{-1,-1,-1}}", f"{S}{{-1}}", f"{S}{{-1}}", f"copy:{XL}{{{out}}}", f"copy:[64,32]{{{mean}}}",
                 f"copy:[64,32]{{{var}}}", 1e-3, 2], ins=ins, outs=outs, **kw)


R1 = ["{-1}", "{-1}"]
CASES += [
    _ln_fwd("1,-1,-1", f"{S}{{-1}}", f"{S}{{-1}}", 2, ["{1,-1,-1}"] + R1, ["{1,-1,-1}", "{1,-1}", "{1,-1}"]),
    _ln_fwd("1,0,-1", f"{S}{{0}}", f"{S}{{0}}", 2, ["{1,0,-1}"] + R1, ["{1,0,-1}", "{1,0}", "{1,0}"]),
    _ln_fwd("0,-1,-1", "[32768]{-1}", "[32768]{1}", 1, ["{0,-1,-1}"] + R1, ["{0,-1,-1}", "{0}", "{0}"]),
    # "without bias" / "without scale": the tests pass DistTensorSpec([0], TensorDistAttr())
    _ln_fwd("1,-1,-1", f"{S}{{-1}}", "bare:[0]", 2, ["{1,-1,-1}"] + R1, ["{1,-1,-1}", "{1,-1}", "{1,-1}"]),
    _ln_fwd("1,0,-1", "bare:[0]", f"{S}{{0}}", 2, ["{1,0,-1}"] + R1, ["{1,0,-1}", "{1,0}", "{1,0}"]),
    _ln_bwd("1,-1,-1", "1,-1", "1,-1", ["{1,-1,-1}"] + R1, ["{1,-1,-1}", "{1,-1}", "{1,-1}"]),
    _ln_bwd("0,-1,-1", "0,-1", "0,-1", ["{0,-1,-1}"] + R1, ["{0,-1,-1}", "{0,-1}", "{0,-1}"]),
    _ln_bwd("-1,-1,-1", "0,-1", "-1,1", ["{0,1,-1}"] + R1, ["{0,1,-1}", "{0,1}", "{0,1}"]),
    _ln_bwd("-1,1,-1", "-1,-1", "-1,-1", ["{-1,1,-1}"] + R1, ["{-1,1,-1}", "{-1,1}", "{-1,1}"]),
    # out and mean split dim 0 by different mesh dims: Paddle refuses, spmdkit keeps out's split
    _ln_bwd("1,-1,-1", "0,-1", "-1,-1", None, None, raises=True,
            differs="dim 0 split by mesh dim 1 (out) and 0 (mean): spmdkit keeps the first, as its merges do",
            ours=(["{1,-1,-1}"] + R1, ["{1,-1,-1}", "{1,-1}", "{1,-1}"]), proof_shapes={"[64,32,1024]": "[4,6,4]", "[1024]": "[4]", "[64,32]": "[4,6]"}),
    _ln_bwd("-1,1,-1", "0,-1", "-1,-1", ["{0,1,-1}"] + R1, ["{0,1,-1}", "{0,1}", "{0,1}"]),
    _ln_bwd("0,1,-1", "-1,-1", "-1,-1", ["{0,1,-1}"] + R1, ["{0,1,-1}", "{0,1}", "{0,1}"]),
    _ln_bwd("0,-1,-1", "-1,1", "-1,-1", ["{0,1,-1}"] + R1, ["{0,1,-1}", "{0,1}", "{0,1}"]),
]
