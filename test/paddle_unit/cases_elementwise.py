"""Paddle's elementwise-like rule tests (clip, ...) as cases (see notation.py)."""
from .notation import Case

CLIP = "test_clip_rule"

CASES = [
    Case(CLIP, "clip", "fwd", (4,), ["[64,36]{-1,0}"], ins=["{-1,0}"], outs=["{-1,0}"]),
    # the reverse test's x keeps setUp's mapping [1, 0] (mesh dim 1 of a 1-D mesh): a reverse rule
    # reads only x's shape, as Paddle's
    Case(CLIP, "clip", "bwd", (4,), ["[64,36]{1,0}", "copy:[64,36]{-1,0}"], ins=["{-1,0}"], outs=["{-1,0}"],
         note="the test's call as is: x's stale mapping is not read"),
]

EW = "test_elementwise_rule"
# The reverse tests leave x and y with setUp's mapping ([1, 0] on a 1-D mesh, or a rank-2
# mapping on a reshaped tensor): reverse rules read only their shapes (Paddle's and spmdkit's);
# the first case keeps it, the others give x and y replicated (test_stale_reverse_mappings.py
# calls them with stale mappings too).
STALE = "x and y given replicated: the test's are left with a stale mapping that does not fit them"


def _ew(op, mesh, x, y, ins, out, fn="fwd", **kw):
    args = [x] if y is None else [x, y]
    return Case(EW, op, fn, mesh, args, ins=ins, outs=[out], **kw)


def _ew_bwd(op, mesh, x, y, out, ins, out_want, **kw):
    args = [x, out] if y is None else [x, y, out]
    return Case(EW, op, "bwd", mesh, args, ins=ins, outs=[out_want], note=kw.pop("note", STALE), **kw)


A2, B3, B4 = "[64,36]", "[64,36,12]", "[96,24,48]"
CASES += [
    _ew("add", (4,), f"{A2}{{0,-1}}", f"{A2}{{-1,-1}}", ["{0,-1}", "{0,-1}"], "{0,-1}"),
    _ew("add", (4,), f"{A2}{{0,-1}}", f"{A2}{{-1,0}}", ["{0,-1}", "{0,-1}"], "{0,-1}"),
    _ew("add", (4,), f"{A2}{{-1,-1}}", f"{A2}{{-1,-1}}", ["{-1,-1}", "{-1,-1}"], "{-1,-1}"),
    _ew("relu", (4,), f"{A2}{{-1,0}}", None, ["{-1,0}"], "{-1,0}"),
    _ew("add", (4,), f"{B3}{{0,-1,-1}}", "[12]{-1}", ["{0,-1,-1}", "{-1}"], "{0,-1,-1}"),
    _ew("add", (4,), f"{B3}{{-1,0,-1}}", "[12]{-1}", ["{-1,0,-1}", "{-1}"], "{-1,0,-1}"),
    _ew("add", (4,), f"{B3}{{-1,-1,0}}", "[12]{-1}", ["{-1,-1,0}", "{0}"], "{-1,-1,0}"),
    _ew("add", (4,), f"{B3}{{-1,-1,-1}}", "[12]{0}", ["{-1,-1,0}", "{0}"], "{-1,-1,0}"),
    _ew("add", (4,), f"{B3}{{-1,0,-1}}", "[1,12]{-1,-1}", ["{-1,0,-1}", "{-1,-1}"], "{-1,0,-1}"),
    _ew("add", (4,), "[64,1,1,12]{0,-1,-1,-1}", "[64,32,12]{-1,-1,-1}", ["{0,-1,-1,-1}", "{-1,-1,-1}"], "{0,-1,-1,-1}"),
    _ew("add", (4,), "[64,1,1,12]{-1,-1,-1,-1}", "[64,32,12]{0,-1,-1}", ["{-1,-1,-1,-1}", "{0,-1,-1}"], "{-1,0,-1,-1}"),
    _ew("add", (2, 3), f"{B4}{{0,1,-1}}", f"{B4}{{-1,-1,-1}}", ["{0,1,-1}", "{0,1,-1}"], "{0,1,-1}"),
    _ew("add", (2, 3), f"{B4}{{0,-1,-1}}", f"{B4}{{-1,1,0}}", ["{0,1,-1}", "{0,1,-1}"], "{0,1,-1}"),
    _ew("add", (2, 3), f"{B4}{{0,-1,-1}}", "[48]{1}", ["{0,-1,1}", "{1}"], "{0,-1,1}"),
    _ew("add", (2, 3), f"{B4}{{0,1,-1}}", "[48]{0}", ["{0,1,-1}", "{-1}"], "{0,1,-1}"),
    _ew("add", (2, 3), "[96,1,1,48]{-1,-1,-1,1}", f"{B4}{{0,-1,1}}", ["{-1,-1,-1,1}", "{0,-1,1}"], "{-1,0,-1,1}"),
    _ew_bwd("add", (4,), f"{A2}{{1,0}}", f"{A2}{{0,-1}}", f"copy:{A2}{{0,-1}}", ["{0,-1}", "{0,-1}"], "{0,-1}",
            note="the test's call as is: x's stale mapping is not read"),
    _ew_bwd("add", (4,), f"{A2}{{-1,-1}}", f"{A2}{{-1,-1}}", f"copy:{A2}{{0,-1}}", ["{0,-1}", "{0,-1}"], "{0,-1}"),
    _ew_bwd("add", (4,), f"{A2}{{-1,-1}}", f"{A2}{{-1,-1}}", f"copy:{A2}{{-1,-1}}", ["{-1,-1}", "{-1,-1}"], "{-1,-1}"),
    _ew_bwd("relu", (4,), f"{A2}{{-1,-1}}", None, f"copy:{A2}{{-1,0}}", ["{-1,0}"], "{-1,0}"),
    _ew_bwd("add", (4,), f"{B3}{{-1,-1,-1}}", "[12]{-1}", f"{B3}{{0,-1,-1}}", ["{0,-1,-1}", "{-1}"], "{0,-1,-1}"),
    _ew_bwd("add", (4,), f"{B3}{{-1,-1,-1}}", "[12]{-1}", f"{B3}{{-1,0,-1}}", ["{-1,0,-1}", "{-1}"], "{-1,0,-1}"),
    _ew_bwd("add", (4,), f"{B3}{{-1,-1,-1}}", "[12]{-1}", f"{B3}{{-1,-1,0}}", ["{-1,-1,0}", "{0}"], "{-1,-1,0}"),
    _ew_bwd("add", (4,), f"{B3}{{-1,-1,-1}}", "[1,12]{-1,-1}", f"{B3}{{-1,0,-1}}", ["{-1,0,-1}", "{-1,-1}"], "{-1,0,-1}"),
    _ew_bwd("add", (4,), "[64,1,1,12]{-1,-1,-1,-1}", "[64,32,12]{-1,-1,-1}", "[64,64,32,12]{0,-1,-1,-1}",
            ["{0,-1,-1,-1}", "{-1,-1,-1}"], "{0,-1,-1,-1}"),
    _ew_bwd("add", (4,), "[64,1,1,12]{-1,-1,-1,-1}", "[64,32,12]{-1,-1,-1}", "[64,64,32,12]{-1,0,-1,-1}",
            ["{-1,-1,-1,-1}", "{0,-1,-1}"], "{-1,0,-1,-1}"),
    # (the test's out_grad stays on setUp's 1-D mesh; the cases put every tensor on the 2x3 mesh)
    _ew_bwd("add", (2, 3), f"{B4}{{-1,-1,-1}}", f"{B4}{{-1,-1,-1}}", f"{B4}{{0,1,-1}}", ["{0,1,-1}", "{0,1,-1}"], "{0,1,-1}"),
    _ew_bwd("add", (2, 3), f"{B4}{{-1,-1,-1}}", "[48]{-1}", f"{B4}{{0,-1,1}}", ["{0,-1,1}", "{1}"], "{0,-1,1}"),
    _ew_bwd("add", (2, 3), f"{B4}{{-1,-1,-1}}", "[48]{-1}", f"{B4}{{0,1,-1}}", ["{0,1,-1}", "{-1}"], "{0,1,-1}"),
    _ew_bwd("add", (2, 3), "[96,1,1,48]{-1,-1,-1,-1}", f"{B4}{{-1,-1,-1}}", "[96,96,24,48]{-1,0,-1,1}",
            ["{-1,-1,-1,1}", "{0,-1,1}"], "{-1,0,-1,1}"),
]
for cmp in ("greater_than", "less_than"):
    CASES += [
        _ew(cmp, (4,), f"{A2}{{0,-1}}", f"{A2}{{-1,-1}}", ["{0,-1}", "{0,-1}"], "{0,-1}"),
        _ew(cmp, (4,), f"{A2}{{0,-1}}", f"{A2}{{-1,0}}", ["{0,-1}", "{0,-1}"], "{0,-1}"),
        _ew(cmp, (4,), "[1,64]{-1,0}", "[64]{-1}", ["{-1,0}", "{0}"], "{-1,0}"),
    ]

FDA = "test_fused_dropout_add_rule"
CASES += [
    Case(FDA, "fused_dropout_add", "fwd", (2, 4), ["[2,4]{0,-1}", "[2,4]{0,-1}"],
         ins=["{0,-1}", "{0,-1}"], outs=["{0,-1}", "{-1}"]),
    Case(FDA, "fused_dropout_add", "bwd", (2, 4), ["[2,4]{0,-1}", "[2,4]{0,-1}", "[2,4]{0,-1}", "[2]{-1}"],
         ins=["{0,-1}", "{0,-1}"], outs=["{0,-1}", "{-1}"]),
]

GELU = "test_gelu_rule"
CASES += [
    Case(GELU, "gelu", "fwd", (2, 2), ["[64,36]{-1,0}", False], ins=["{-1,0}"], outs=["{-1,0}"]),
    # the grad rule (x, out_grad) -> x_grad: the test checks x and x_grad
    Case(GELU, "gelu", "bwd", (2, 2), ["[64,36]{1,0}", "copy:[64,36]{-1,0}", False], ins=["{-1,0}", None], outs=["{-1,0}"]),
]

SMAX, TRIU = "test_softmax_rule", "test_triu_rule"
XS = "[8,16,48]"
for fn in ("fwd", "bwd"):
    for mapping, axis, want in (("1,-1,-1", -1, "{1,-1,-1}"), ("-1,1,-1", -1, "{-1,1,-1}"), ("1,-1,0", -1, "{1,-1,-1}"),
                                ("-1,1,0", 1, "{-1,-1,0}"), ("-1,1,0", -2, "{-1,-1,0}")):
        # the reverse tests give x without a mapping (replicated) and the output a copy of it
        args = [f"{XS}{{{mapping}}}", axis] if fn == "fwd" else [XS, f"copy:{XS}{{{mapping}}}", axis]
        CASES.append(Case(SMAX, "softmax", fn, (2, 4), args, ins=[want], outs=[want]))
X16 = "[16,16,16]{0,-1,1}"
CASES += [
    Case(TRIU, "triu", "fwd", (2, 2), [X16, 0], ins=["{0,-1,-1}"], outs=["{0,-1,-1}"]),
    Case(TRIU, "triu", "bwd", (2, 2), [X16, X16, 0], ins=["{0,-1,-1}"], outs=["{0,-1,-1}"]),
    Case(TRIU, "tril_triu", "fwd", (2, 2), [X16, 0, False], ins=["{0,-1,-1}"], outs=["{0,-1,-1}"]),
    Case(TRIU, "tril_triu", "bwd", (2, 2), [X16, X16, 0, False], ins=["{0,-1,-1}"], outs=["{0,-1,-1}"]),
]

COSHARD = "test_op_co_shard_rule"
# Two splits of one dim by different mesh dims (or a split that must leave its dim): a newer
# Paddle co-shards the dim over both mesh dims; spmdkit, like Paddle 3.3.1, keeps the first.
COSHARD_POLICY = "co-sharding policy: the newer Paddle splits the dim over both mesh dims, spmdkit keeps one"
NO_COSHARD = "fails: the test drives Paddle's dygraph API with shard_order, which Paddle 3.3.1's rules do not have"
CASES += [
    # (the rule-level facts of the dygraph test; "[0,1]" is a dim split over mesh dims 0 then 1)
    Case(COSHARD, "add", "fwd", (2, 2), ["[64,64]{0,1}", "[64,64]{[0,1],-1}"], ins=["{0,1}", "{0,1}"], outs=["{0,1}"],
         paddle=NO_COSHARD),
    Case(COSHARD, "add", "fwd", (2, 2), ["[64,64]{0,-1}", "[64,64]{1,-1}"],
         ins=["{[0,1],-1}", "{[0,1],-1}"], outs=["{[0,1],-1}"], paddle=NO_COSHARD, differs=COSHARD_POLICY,
         ours=(["{0,-1}", "{0,-1}"], ["{0,-1}"]), both_right=True),
    Case(COSHARD, "layer_norm", "fwd", (2, 2), ["[64,32,128,128]{0,1,-1,-1}", "[524288]{-1}", "[524288]{-1}", 1e-5, 1],
         ins=["{[0,1],-1,-1,-1}", "{-1}", "{-1}"], outs=["{[0,1],-1,-1,-1}", "{[0,1]}", "{[0,1]}"], paddle=NO_COSHARD,
         differs=COSHARD_POLICY, ours=(["{0,-1,-1,-1}", "{-1}", "{-1}"], ["{0,-1,-1,-1}", "{0}", "{0}"]), both_right=True,
         proof_shapes={"[64,32,128,128]": "[4,2,2,2]", "[524288]": "[8]"}),
]
