"""Paddle's embedding and loss rule tests as cases (see notation.py)."""
from .notation import Case

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
