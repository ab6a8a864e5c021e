"""Paddle's embedding and loss rule tests as cases (see notation.py)."""
from .notation import EMPTY, Case

EMB = "test_c_embedding_rule"
CSX = "test_c_softmax_with_cross_entropy_rule"

CASES = [
    # c_embedding(table [V,H], x [B,S], start_index, vocab_size)
    Case(EMB, "c_embedding", "fwd", (2, 4), ["[512,768]{-1,-1}", "[4,1024]{1,-1}", 0, -1],
         ins=["{-1,-1}", "{1,-1}"], outs=["{1,-1,-1}"]),
    Case(EMB, "c_embedding", "fwd", (2, 4), ["[512,768]{1,-1}", "[4,1024]{-1,-1}", 0, -1],
         ins=["{1,-1}", "{-1,-1}"], outs=["{-1,-1,-1}p{1}"]),
    # reverse with Paddle's 5 arguments (table, x, out, start_index, vocab_size)
    Case(EMB, "c_embedding", "bwd", (2, 4), ["[512,768]{1,-1}", "[4,1024]{-1,-1}", "[4,1024,768]{-1,-1,-1}", 0, -1],
         ins=["{1,-1}", "{-1,-1}", "{-1,-1,-1}"], outs=["{1,-1}"]),
    Case(EMB, "c_embedding", "bwd", (2, 4), ["[512,768]{1,-1}", "[4,1024]{0,-1}", "[4,1024,768]{0,-1,-1}", 0, -1],
         ins=["{1,-1}", "{0,-1}", "{0,-1,-1}"], outs=["{1,-1}"]),
    # c_softmax_with_cross_entropy(logit, label, ignore_index, ring_id, rank, nranks)
    Case(CSX, "c_softmax_with_cross_entropy", "fwd", (2, 2), ["[16,128,128]{-1,-1,1}", "[16,128,1]{-1,-1,-1}", -1, 0, 0, 2],
         ins=["{-1,-1,1}", "{-1,-1,-1}"], outs=["{-1,-1,1}", "{-1,-1,-1}"]),
    Case(CSX, "c_softmax_with_cross_entropy", "fwd", (2, 2), ["[16,128,128]{0,-1,1}", "[16,128,1]{0,-1,-1}", -1, 0, 0, 2],
         ins=["{0,-1,1}", "{0,-1,-1}"], outs=["{0,-1,1}", "{0,-1,-1}"]),
]

CSML = "test_c_softmax_with_multi_label_cross_entropy_rule"
LOGIT, LABEL = "[16,128,128]", "[16,128,4]"
CASES += [
    # (logit, label, smooth_weight, ignore_index, ring_id, rank, nranks): Paddle reads the 5th
    # argument as sum_multi_label_loss, an int where a bool is due
    Case(CSML, "c_softmax_with_multi_label_cross_entropy", "fwd", (2, 2),
         [f"{LOGIT}{{-1,-1,1}}", f"{LABEL}{{-1,-1,-1}}", f"{LABEL}{{-1,-1,-1}}", -1, 0, 0, 2],
         ins=["{-1,-1,1}", "{-1,-1,-1}", "{-1,-1,-1}"], outs=["{-1,-1,1}", "{-1,-1,-1}"]),
    Case(CSML, "c_softmax_with_multi_label_cross_entropy", "fwd", (2, 2),
         [f"{LOGIT}{{0,-1,1}}", f"{LABEL}{{0,-1,-1}}", f"{LABEL}{{0,-1,-1}}", -1, 0, 0, 2],
         ins=["{0,-1,1}", "{0,-1,-1}", "{0,-1,-1}"], outs=["{0,-1,1}", "{0,-1,-1}"]),
]

CE = "test_cross_entropy_with_softmax_rule"
XCE, LCE = "[8,1024,50304]", "[8,1024,1]"


def _ce_fwd(x, label, soft, use_softmax, axis, ins=None, outs=None, **kw):
    return Case(CE, "cross_entropy_with_softmax", "fwd", (2, 4),
                [f"{XCE}{{{x}}}", f"{LCE}{{{label}}}", soft, use_softmax, True, -1, axis], ins=ins, outs=outs, **kw)


def _ce_bwd(softmax, loss, soft, axis, ins, outs, **kw):
    # x and label come from setUp without a mapping; softmax and loss are copies of them
    return Case(CE, "cross_entropy_with_softmax", "bwd", (2, 4),
                [XCE, LCE, f"copy:{XCE}{{{softmax}}}", f"copy:{LCE}{{{loss}}}", soft, True, True, -1, axis],
                ins=ins, outs=outs, **kw)


# The class axis split (Paddle's "MP" cases): each rank's softmax would normalize over its own
# block of the vocabulary. Proven on stand-ins of the same layout ([8, 4, 6], [8, 4, 1]).
CLASS_SPLIT = "a split softmax axis: each rank normalizes over its block of classes only"
# axis=1 with a label whose dim 1 is not 1, or a soft label of another shape than x: the kernel
# refuses the call (Paddle answers it, or raises where it finds the normalized axis split).
LABEL_SHAPE = "the label's shape does not fit axis / soft_label: the kernel refuses the call"
SMALL = {"[8,1024,50304]": "[8,4,6]", "[8,1024,1]": "[8,4,1]"}
R4 = ["{1,-1,-1}", "{1,-1,-1}"]

CASES += [
    _ce_fwd("1,-1,-1", "-1,0,-1", False, True, -1, ["{1,0,-1}", "{1,0,-1}"], ["{1,0,-1}", "{1,0,-1}"]),
    _ce_fwd("-1,-1,0", "-1,-1,-1", False, True, -1, ["{-1,-1,0}", "{-1,-1,-1}"], ["{-1,-1,0}", "{-1,-1,-1}"],
            differs=CLASS_SPLIT, ours=(["{-1,-1,-1}"] * 2, ["{-1,-1,-1}"] * 2), proof_shapes=SMALL),
    _ce_fwd("-1,-1,0", "1,-1,-1", False, True, -1, ["{1,-1,0}", "{1,-1,-1}"], ["{1,-1,0}", "{1,-1,-1}"],
            differs=CLASS_SPLIT, ours=(R4, R4), proof_shapes=SMALL),
    _ce_fwd("-1,-1,0", "1,-1,-1", True, True, -1, raises=True,           # soft label, split class axis
            differs=LABEL_SHAPE, ours=(R4, R4), kernel_refuses=True, proof_shapes=SMALL),
    _ce_fwd("1,-1,0", "-1,-1,-1", False, True, 1, ["{1,-1,0}", "{1,-1,0}"], ["{1,-1,0}", "{1,-1,0}"],
            differs=LABEL_SHAPE, ours=(["{1,-1,0}", "{1,-1,-1}"], ["{1,-1,0}", "{1,-1,0}"]), kernel_refuses=True,
            proof_shapes=SMALL),
    _ce_fwd("-1,0,-1", "1,-1,-1", False, True, 1, raises=True,           # split normalized axis
            differs=LABEL_SHAPE, ours=(R4, R4), kernel_refuses=True, proof_shapes=SMALL),
    _ce_fwd("1,-1,0", "-1,-1,-1", False, False, 1, ["{1,-1,0}", "{1,-1,0}"], ["{}", "{1,-1,0}"],
            differs=LABEL_SHAPE, ours=(["{1,-1,0}", "{1,-1,-1}"], ["{1,-1,0}", "{1,-1,0}"]), kernel_refuses=True,
            proof_shapes=SMALL),
    _ce_bwd("1,0,-1", "1,0,-1", False, -1, ["{1,0,-1}", "{1,0,-1}"], ["{1,0,-1}", "{1,0,-1}"]),
    _ce_bwd("-1,-1,0", "-1,-1,-1", False, -1, ["{-1,-1,0}", "{-1,-1,-1}"], ["{-1,-1,0}", "{-1,-1,-1}"],
            differs=CLASS_SPLIT, ours=(["{-1,-1,-1}"] * 2, ["{-1,-1,-1}"] * 2), proof_shapes=SMALL),
    _ce_bwd("-1,-1,0", "1,-1,-1", False, -1, ["{1,-1,0}", "{1,-1,-1}"], ["{1,-1,0}", "{1,-1,-1}"],
            differs=CLASS_SPLIT, ours=(R4, R4), proof_shapes=SMALL),
    _ce_bwd("1,-1,0", "1,-1,-1", True, 1, ["{1,-1,0}", "{1,-1,0}"], ["{1,-1,0}", "{1,-1,0}"],
            differs=LABEL_SHAPE, ours=(["{1,-1,0}", "{1,-1,-1}"], ["{1,-1,0}", "{1,-1,-1}"]), kernel_refuses=True,
            proof_shapes=SMALL),
    _ce_bwd("1,0,-1", "1,-1,-1", True, 1, ["{1,-1,-1}", "{1,-1,-1}"], ["{1,-1,-1}", "{1,-1,-1}"]),
    _ce_bwd("1,-1,-1", "1,-1,0", True, -1, ["{1,-1,-1}", "{1,-1,-1}"], ["{1,-1,-1}", "{1,-1,-1}"]),
]

EMB2 = "test_embedding_rule"
XE, TE, OE = "[4,1024]", "[512,768]", "[4,1024,768]"
PAD = "a row-split table with a padding id: a rank whose rows miss the id looks up zeros, the partial sum is right"
SPARSE = "sparse only changes the grad's format; the lookup of a row-split table is a partial sum as without it"
CASES += [
    Case(EMB2, "lookup_table_v2", "fwd", (2, 4), [f"{XE}{{1,-1}}", f"{TE}{{-1,-1}}", -1, False],
         ins=["{1,-1}", "{-1,-1}"], outs=["{1,-1,-1}"]),
    Case(EMB2, "lookup_table_v2", "fwd", (2, 4), [f"{XE}{{1,-1}}", f"{TE}{{-1,0}}", -1, False],
         ins=["{1,-1}", "{-1,0}"], outs=["{1,-1,0}"]),
    Case(EMB2, "lookup_table_v2", "fwd", (2, 4), [f"{XE}{{1,-1}}", f"{TE}{{0,-1}}", -1, False],
         ins=["{1,-1}", "{0,-1}"], outs=["{1,-1,-1}p{0}"]),
    # the padding_idx case passes the pre-3.0 ([x, table], attrs) call, refused by both
    Case(EMB2, "lookup_table_v2", "fwd", (2, 4), [[f"{XE}{{1,-1}}", f"{TE}{{0,-1}}"], {"padding_idx": 128, "sparse": False}],
         raises=True),
    Case(EMB2, "lookup_table_v2", "fwd", (2, 4), [f"{XE}{{1,-1}}", f"{TE}{{0,-1}}", 128, False], raises=True,
         note="the padding_idx case in 3.3.1's call form", differs=PAD,
         ours=(["{1,-1}", "{0,-1}"], ["{1,-1,-1}p{0}"])),
    Case(EMB2, "lookup_table_v2", "fwd", (2, 4), [f"{XE}{{1,-1}}", f"{TE}{{0,-1}}", -1, True], raises=True,
         differs=SPARSE, ours=(["{1,-1}", "{0,-1}"], ["{1,-1,-1}p{0}"])),
    # reverse: x and table built without a mapping ("not set the dims mapping is ok")
    Case(EMB2, "lookup_table_v2", "bwd", (2, 4), [XE, TE, f"{OE}{{1,-1,-1}}", -1, False],
         ins=["{1,-1}", "{-1,-1}"], outs=["{1,-1,-1}"]),
    Case(EMB2, "lookup_table_v2", "bwd", (2, 4), [XE, TE, f"{OE}{{-1,0,1}}", -1, False],
         ins=["{-1,0}", "{-1,1}"], outs=["{-1,0,1}"]),
    Case(EMB2, "lookup_table_v2", "bwd", (2, 4), [XE, TE, f"{OE}{{1,0,-1}}", -1, False],
         ins=["{1,0}", "{-1,-1}"], outs=["{1,0,-1}"]),
]

LSM = "test_label_smooth_rule"
LB = "[16,16,16]"
CASES += [
    Case(LSM, "label_smooth", "fwd", (2, 2), [f"{LB}{{0,1,-1}}", EMPTY, 0.1], ins=["{0,1,-1}", EMPTY], outs=["{0,1,-1}"]),
    Case(LSM, "label_smooth", "fwd", (2, 2), [f"{LB}{{0,1,-1}}", "[1,16]{-1,-1}", 0.1], ins=["{0,1,-1}", "{-1,-1}"], outs=["{0,1,-1}"]),
    Case(LSM, "label_smooth", "fwd", (2, 2), [f"{LB}{{0,1,-1}}", "[1,16]{-1,1}", 0.1], ins=["{0,1,-1}", "{-1,-1}"], outs=["{0,1,-1}"]),
    Case(LSM, "label_smooth", "fwd", (2, 2), [f"{LB}{{0,1,-1}}", "[1,16]{-1,0}", 0.1], ins=["{0,1,-1}", "{-1,-1}"], outs=["{0,1,-1}"]),
    Case(LSM, "label_smooth", "fwd", (2, 2), [f"{LB}{{0,-1,1}}", "[1,16]{-1,1}", 0.1], ins=["{0,-1,1}", "{-1,1}"], outs=["{0,-1,1}"]),
    Case(LSM, "label_smooth", "fwd", (2, 2), [f"{LB}{{0,-1,1}}", "[1,16]{-1,0}", 0.1], ins=["{0,-1,1}", "{-1,1}"], outs=["{0,-1,1}"]),
    Case(LSM, "label_smooth", "fwd", (2, 2), [f"{LB}{{0,-1,1}}", "[1,16]{-1,-1}", 0.1], ins=["{0,-1,1}", "{-1,1}"], outs=["{0,-1,1}"]),
    Case(LSM, "label_smooth", "fwd", (2, 2), [f"{LB}{{0,1,-1}}", f"{LB}{{0,-1,1}}", 0.1], ins=["{0,1,-1}", "{0,1,-1}"], outs=["{0,1,-1}"]),
    # the grad rule takes out_grad and epsilon only
    Case(LSM, "label_smooth", "bwd", (2, 2), [f"{LB}{{0,-1,1}}", 0.1], ins=["{0,-1,1}"], outs=["{0,-1,1}"]),
]
