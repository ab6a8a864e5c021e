"""Paddle's attention and normalization rule tests as cases (see notation.py)."""
from .notation import Case

FA = "test_flash_attention_rule"
ENGINE = "fixed on branch paddle-engine"
Q, K, V = "[2,512,64,1024]{0,-1,1,-1}", "[2,1024,64,1024]{0,-1,-1,-1}", "[2,1024,64,512]{0,-1,-1,-1}"
NONE = "[]{}"   # the tests' "empty tensor": shape [] and mapping [] (an absent optional input)
FA_ATTRS = [0.0, False, False, False]
QKV = ["{0,-1,1,-1}"] * 3

CASES = [
    # v's head dim (512) differs from q's and k's (1024)
    Case(FA, "flash_attention", "fwd", (2, 3), [Q, K, V, NONE, NONE] + FA_ATTRS,
         ins=QKV + [None, None], outs=["{0,-1,1,-1}", None, "{0,1,-1}", None], xfail=ENGINE),
    Case(FA, "flash_attention", "bwd", (2, 3),
         [Q, K, V, NONE, NONE, "[2,512,64,512]{0,-1,1,-1}", NONE, "[2,64,512]{0,1,-1}", NONE] + FA_ATTRS,
         ins=QKV + [None, None], outs=["{0,-1,1,-1}", None, "{0,1,-1}", None], xfail=ENGINE),
]
