"""Paddle's matmul-family rule tests (fused_gemm_epilogue, ...) as cases (see notation.py)."""
from .notation import Case

FGE = "test_fused_gemm_epilogue_rule"


def _fge(x, y, bias, tx, ty, ins, out, **kw):
    return Case(FGE, "fused_gemm_epilogue", "fwd", (2, 3), [x, y, bias, tx, ty], ins=ins, outs=[out, None], **kw)


# The test's x of shape [512, 48, 64, 32] with a transpose does not fit y [32, 48]
K_MISMATCH = dict(differs="a transposed operand's k does not match the other's (the kernel refuses)", ours="raises")
OLD_RULE = "fails: Paddle 3.3.1 leaves the product partial (its rule predates this test)"


X2, X4, Y, B = "[64,32]", "[512,48,64,32]", "[32,48]", "[48]"
FGE_BIAS_ANY = []
for bias in ("-1", "0", "1"):  # the three test methods: bias replicated, split by 0, split by 1
    b = f"{B}{{{bias}}}"
    FGE_BIAS_ANY += [
        _fge(f"{X2}{{1,-1}}", f"{Y}{{-1,-1}}", b, False, False, ["{1,-1}", "{-1,-1}", "{-1}"], "{1,-1}p{}"),
        _fge(f"{X2}{{-1,-1}}", f"{Y}{{-1,0}}", b, False, False, ["{-1,-1}", "{-1,0}", "{0}"], "{-1,0}p{}"),
        _fge(f"{X4}{{1,0,-1,-1}}", f"{Y}{{-1,-1}}", b, False, False, ["{1,0,-1,-1}", "{-1,-1}", "{-1}"], "{1,0,-1,-1}p{}"),
        _fge(f"{X4}{{1,-1,-1,0}}", f"{Y}{{-1,-1}}", b, True, False, ["{1,-1,-1,0}", "{-1,-1}", "{-1}"], "{1,-1,0,-1}p{}",
             **K_MISMATCH),
    ]

CASES = FGE_BIAS_ANY + [
    # a split k would leave the product partial before the bias is added: Paddle replicates
    _fge(f"{X2}{{1,0}}", f"{Y}{{0,-1}}", f"{B}{{-1}}", False, False, ["{-1,-1}", "{-1,-1}", "{-1}"], "{-1,-1}p{}", paddle=OLD_RULE),
    _fge(f"{X2}{{1,0}}", f"{Y}{{-1,-1}}", f"{B}{{-1}}", False, False, ["{-1,-1}", "{-1,-1}", "{-1}"], "{-1,-1}p{}", paddle=OLD_RULE),
    _fge(f"{X2}{{-1,-1}}", f"{Y}{{1,0}}", f"{B}{{-1}}", False, False, ["{-1,-1}", "{-1,-1}", "{-1}"], "{-1,-1}p{}", paddle=OLD_RULE),
    _fge(f"{X4}{{1,-1,-1,0}}", f"{Y}{{-1,-1}}", f"{B}{{-1}}", False, False, ["{1,-1,-1,-1}", "{-1,-1}", "{-1}"], "{1,-1,-1,-1}p{}",
         paddle=OLD_RULE),
    _fge(f"{X4}{{-1,-1,-1,-1}}", f"{Y}{{1,0}}", f"{B}{{-1}}", False, True, ["{-1,-1,-1,-1}", "{-1,-1}", "{-1}"], "{-1,-1,-1,-1}p{}",
         paddle=OLD_RULE, **K_MISMATCH),
    _fge(f"{X4}{{-1,-1,0,1}}", f"{Y}{{1,0}}", f"{B}{{-1}}", True, True, ["{-1,-1,-1,-1}", "{-1,-1}", "{-1}"], "{-1,-1,-1,-1}p{}",
         paddle=OLD_RULE, **K_MISMATCH),
]
