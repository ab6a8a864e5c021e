"""Paddle's expand, add_n and cumulative-op rule tests as cases (see notation.py)."""
from .notation import EMPTY, Case, DType

EXP = "test_expand_rule"
ADDN = "test_add_n_rule"
CMAX, CMIN = "test_cummax_rule", "test_cummin_rule"
UNREGISTERED = "fails: expand is not registered in Paddle 3.3.1"


def _expand_fwd(x, shape, out):
    return Case(EXP, "expand", "fwd", (2, 4), [x, shape], ins=[x[x.index("{"):]], outs=[out], paddle=UNREGISTERED)


def _expand_bwd(x, out, shape, x_want, out_want):
    return Case(EXP, "expand", "bwd", (2, 4), [x, out, shape], ins=[x_want], outs=[out_want], paddle=UNREGISTERED)


X = "[8,12,1,24]"
X1 = "[1,12,8,4]"
EXPAND = [
    _expand_fwd(f"{X}{{0,-1,-1,1}}", [-1, -1, 8, 24], "{0,-1,-1,1}"),
    _expand_fwd(f"{X}{{0,-1,-1,1}}", [-1, -1, 10, -1], "{0,-1,-1,1}"),
    _expand_fwd(f"{X}{{1,0,-1,-1}}", [1, -1, -1, 1, -1], "{-1,1,0,-1,-1}"),
    _expand_fwd(f"{X}{{1,-1,-1,0}}", [4, -1, 12, 8, -1], "{-1,1,-1,-1,0}"),
    _expand_fwd(f"{X}{{1,-1,-1,0}}", [4, 1, -1, -1, 1, -1], "{-1,-1,1,-1,-1,0}"),
    _expand_fwd(f"{X1}{{-1,0,-1,-1}}", [8, -1, -1, -1], "{-1,0,-1,-1}"),
    _expand_fwd(f"{X1}{{-1,0,1,-1}}", [8, 8, -1, -1, -1], "{-1,-1,0,1,-1}"),
    _expand_bwd(f"{X}{{0,-1,-1,1}}", "[8,12,8,24]{-1,-1,0,1}", [-1, -1, 8, -1], "{-1,-1,-1,1}", "{-1,-1,-1,1}"),
    _expand_bwd(f"{X}{{-1,-1,-1,1}}", "[8,12,10,24]{0,-1,-1,1}", [-1, -1, 10, -1], "{0,-1,-1,1}", "{0,-1,-1,1}"),
    _expand_bwd(f"{X}{{-1,1,-1,0}}", "[1,8,12,1,24]{-1,1,0,-1,-1}", [1, -1, -1, -1, -1], "{1,0,-1,-1}", "{-1,1,0,-1,-1}"),
    _expand_bwd(f"{X}{{-1,1,-1,0}}", "[1,8,12,1,24]{-1,1,0,-1,-1}", [1, -1, -1, -1, -1], "{1,0,-1,-1}", "{-1,1,0,-1,-1}"),
    _expand_bwd(f"{X}{{1,-1,-1,0}}", "[4,8,12,8,24]{0,-1,-1,1,-1}", [4, -1, -1, 8, -1], "{-1,-1,-1,-1}", "{-1,-1,-1,-1,-1}"),
    _expand_bwd(f"{X}{{1,-1,-1,0}}", "[4,8,12,8,24]{-1,1,-1,-1,0}", [4, -1, -1, 8, -1], "{1,-1,-1,0}", "{-1,1,-1,-1,0}"),
    _expand_bwd(f"{X}{{1,-1,-1,0}}", "[4,1,8,12,1,24]{-1,-1,1,-1,-1,0}", [4, 1, -1, -1, -1, -1], "{1,-1,-1,0}",
                "{-1,-1,1,-1,-1,0}"),
    _expand_bwd(f"{X1}{{-1,0,-1,-1}}", "[8,12,8,4]{1,0,-1,-1}", [8, -1, -1, -1], "{-1,0,-1,-1}", "{-1,0,-1,-1}"),
    _expand_bwd(f"{X1}{{-1,0,1,-1}}", "[8,8,12,8,4]{-1,-1,0,1,-1}", [8, 8, -1, -1, -1], "{-1,0,1,-1}", "{-1,-1,0,1,-1}"),
]

XS = "[16,16,16]"
ADD_N = [
    Case(ADDN, "add_n", "fwd", (2, 2), [[f"{XS}{{0,-1,-1}}", f"{XS}{{0,-1,-1}}"]],
         ins=[["{0,-1,-1}", "{0,-1,-1}"]], outs=["{0,-1,-1}"]),
    Case(ADDN, "add_n", "fwd", (2, 2), [[f"{XS}{{0,-1,-1}}p{{1}}", f"{XS}{{-1,-1,-1}}p{{1}}"]],
         ins=[["{0,-1,-1}p{1}", "{0,-1,-1}p{1}"]], outs=["{0,-1,-1}p{1}"]),
    # x split by mesh dim 0 and partial over it too
    Case(ADDN, "add_n", "fwd", (2, 2), [[f"{XS}{{0,-1,-1}}p{{0}}", f"{XS}{{-1,-1,-1}}p{{1}}"]],
         ins=[["{0,-1,-1}p{}", "{0,-1,-1}p{}"]], outs=["{0,-1,-1}p{}"],
         differs="x[0] is split over mesh dim 0 and partial over it too: no rank can hold that",
         ours="raises", bad_input=f"{XS}{{0,-1,-1}}p{{0}}"),
]


def _cum(file, op):
    # Paddle's tests pass the dtype through convert_nptype_to_datatype_or_vartype, which Paddle
    # 3.3.1 lacks (both files fail there at import); the cases pass paddle.int64.
    return [
        Case(file, op, "fwd", (2, 2), [f"{XS}{{0,1,-1}}", 1, DType("int64")],
             ins=["{0,-1,-1}"], outs=["{0,-1,-1}", "{0,-1,-1}"]),
        # grad(x, indices, out_grad): the test passes x as the indices and an out_grad of [16, 2, 16]
        Case(file, op, "bwd", (2, 2), [f"{XS}{{0,-1,1}}", f"{XS}{{0,-1,1}}", "[16,2,16]{-1,1,-1}", 1, DType("int64")],
             ins=["{0,-1,1}", "{0,-1,1}", "{0,-1,1}"], outs=["{0,-1,1}"],
             differs="out_grad [16, 2, 16] for x [16, 16, 16]: the grad has x's shape, the kernel refuses the call",
             ours="raises", int_inputs={1: 16}),
        # the consistent call: out_grad of x's shape
        Case(file, op, "bwd", (2, 2), [f"{XS}{{0,-1,1}}", f"{XS}{{0,-1,1}}", f"{XS}{{-1,1,-1}}", 1, DType("int64")],
             ins=["{0,-1,1}", "{0,-1,1}", "{0,-1,1}"], outs=["{0,-1,1}"],
             note="the test's call with out_grad given x's shape [16, 16, 16]"),
    ]


CASES = EXPAND + ADD_N + _cum(CMAX, "cummax") + _cum(CMIN, "cummin")

EXA = "test_expand_as_rule"
T = [2, 32, 48]
CASES += [
    Case(EXA, "expand_as", "fwd", (2, 2), ["[1,48]{-1,-1}", "[2,32,48]{0,1,-1}", T],
         ins=["{-1,-1}", "{0,1,-1}"], outs=["{0,1,-1}"]),
    Case(EXA, "expand_as", "fwd", (2, 2), ["[1,48]{-1,-1}", "[2,32,48]{0,-1,1}", T],
         ins=["{-1,1}", "{0,-1,1}"], outs=["{0,-1,1}"]),
    Case(EXA, "expand_as", "fwd", (2, 2), ["[2,1,48]{0,-1,-1}", "[2,32,48]{0,1,-1}", T],
         ins=["{0,-1,-1}", "{0,1,-1}"], outs=["{0,1,-1}"]),
    Case(EXA, "expand_as", "fwd", (2, 2), ["[2,1,48]{-1,-1,0}", "[2,32,48]{0,1,-1}", T],
         ins=["{0,-1,-1}", "{0,1,-1}"], outs=["{0,1,-1}"]),
    # without y: Paddle's tests pass an empty DistTensorSpec() and get an empty TensorDistAttr() back
    Case(EXA, "expand_as", "fwd", (2, 2), ["[1,48]{-1,-1}", EMPTY, T], ins=["{-1,-1}", EMPTY], outs=["{-1,-1,-1}"]),
    Case(EXA, "expand_as", "fwd", (2, 2), ["[1,48]{-1,0}", EMPTY, T], ins=["{-1,0}", EMPTY], outs=["{-1,-1,0}"]),
    Case(EXA, "expand_as", "fwd", (2, 2), ["[2,1,48]{0,-1,-1}", EMPTY, T], ins=["{0,-1,-1}", EMPTY], outs=["{0,-1,-1}"]),
    Case(EXA, "expand_as", "fwd", (2, 2), ["[2,32,48]{0,1,-1}", EMPTY, T], ins=["{0,1,-1}", EMPTY], outs=["{0,1,-1}"]),
    # grad(x, out_grad, target_shape): inputs x and out_grad, output x_grad
    Case(EXA, "expand_as", "bwd", (2, 2), ["[1,48]{-1,-1}", "[2,32,48]{0,1,-1}", T],
         ins=["{-1,-1}", "{0,1,-1}"], outs=["{-1,-1}p{0,1}"]),
    Case(EXA, "expand_as", "bwd", (2, 2), ["[1,48]{-1,1}", "[2,32,48]{0,-1,1}", T],
         ins=["{-1,1}", "{0,-1,1}"], outs=["{-1,1}p{0}"]),
    Case(EXA, "expand_as", "bwd", (2, 2), ["[1,48]{-1,-1}", "[2,32,48]{0,-1,1}", T],
         ins=["{-1,1}", "{0,-1,1}"], outs=["{-1,1}p{0}"]),
]
