"""A Paddle-style training step (embedding, layer_norm, matmul, reshape, softmax attention,
gelu MLP, cross entropy, and their grads) propagates with the same engine: data parallel on
"dp" plus Megatron column/row splits on "mp" from a handful of annotations, and the result
executes correctly on simulated ranks."""
import numpy as np
import pytest

from spmdkit.propagation import Graph
from spmdkit.propagation.simulate import execute

B, S, H, N, D, F, V = 4, 8, 16, 4, 4, 32, 24


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _layer_norm(x, w, b):
    mu = x.mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5) * w + b


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


def _gelu_grad(x, dy):
    t = np.tanh(0.7978845608 * (x + 0.044715 * x ** 3))
    return dy * (0.5 * (1 + t) + 0.5 * x * (1 - t ** 2) * 0.7978845608 * (1 + 3 * 0.044715 * x ** 2))


def _embedding_grad(ids, d, shape):
    out = np.zeros(shape)
    np.add.at(out, ids.astype(int), d)
    return out


def _ce(logits, labels):
    p = _softmax(logits)
    return -np.log(np.take_along_axis(p, labels.astype(int)[..., None], axis=-1)[..., 0])


def _ce_grad(logits, labels):
    p = _softmax(logits)
    return p - np.eye(logits.shape[-1])[labels.astype(int)]


KERNELS = {
    "embedding": lambda a, s: [a[0][a[1].astype(int)]],
    "layer_norm": lambda a, s: [_layer_norm(*a)],
    "matmul": lambda a, s: [np.einsum("bsk,kn->bsn", *a)],
    "matmul_grad.x": lambda a, s: [np.einsum("bsn,kn->bsk", *a)],
    "matmul_grad.w": lambda a, s: [np.einsum("bsk,bsn->kn", *a)],
    "reshape": lambda a, s: [a[0].reshape(s[0])],
    "attention.scores": lambda a, s: [np.einsum("bsnd,btnd->bnst", *a)],
    "softmax": lambda a, s: [_softmax(a[0])],
    "softmax_grad": lambda a, s: [a[0] * (a[1] - (a[0] * a[1]).sum(-1, keepdims=True))],
    "attention.context": lambda a, s: [np.einsum("bnst,btnd->bsnd", *a)],
    "add": lambda a, s: [a[0] + a[1]],
    "gelu": lambda a, s: [_gelu(a[0])],
    "gelu_grad": lambda a, s: [_gelu_grad(*a)],
    "cross_entropy": lambda a, s: [_ce(*a)],
    "cross_entropy_grad": lambda a, s: [_ce_grad(*a)],
    "embedding_grad": lambda a, s: [_embedding_grad(a[0], a[1], s[0])],
}


def build():
    g = Graph()
    g.mesh("mesh", dp=2, mp=2)
    rng = np.random.default_rng(0)
    inputs = {}

    def inp(shape, sharding=None, name="", ints=None):
        v = g.value(shape, sharding, name=name)
        inputs[v] = rng.integers(0, ints, shape).astype(float) if ints else rng.standard_normal(shape) * 0.5
        return v

    def op(name, rule, ins, shapes, **kw):
        return g.op(name, rule, ins, shapes, **kw)

    tokens = inp([B, S], '[{"dp"}, {}]', "tokens", ints=V)
    labels = inp([B, S], None, "labels", ints=V)
    table = inp([V, H], None, "embedding.weight")
    ln_w, ln_b = inp([H], None, "ln.weight"), inp([H], None, "ln.bias")
    wq = inp([H, H], '[{?}, {"mp"}]', "wq")          # column parallel
    wo = inp([H, H], '[{"mp"}, {?}]', "wo")          # row parallel
    w1 = inp([H, F], '[{?}, {"mp"}]', "w1")
    w2 = inp([F, H], '[{"mp"}, {?}]', "w2")
    w_lm = inp([H, V], None, "lm_head")
    v = {}
    v["x"] = op("embedding", "vh,bs->bsh", [table, tokens], [[B, S, H]], need_replication="v")
    v["ln"] = op("layer_norm", "bsh,h,h->bsh", [v["x"], ln_w, ln_b], [[B, S, H]], need_replication="h")
    v["q"] = op("matmul", "bsk,kn->bsn", [v["ln"], wq], [[B, S, H]], reduction="k")
    v["q4"] = op("reshape", "bs(nd)->bsnd", [v["q"]], [[B, S, N, D]], sizes={"n": N, "d": D})
    v["scores"] = op("attention.scores", "bsnd,btnd->bnst", [v["q4"], v["q4"]], [[B, N, S, S]], reduction="d")
    v["probs"] = op("softmax", "bnst->bnst", [v["scores"]], [[B, N, S, S]], need_replication="t")
    v["ctx"] = op("attention.context", "bnst,btnd->bsnd", [v["probs"], v["q4"]], [[B, S, N, D]], reduction="t")
    v["ctx3"] = op("reshape", "bsnd->bs(nd)", [v["ctx"]], [[B, S, H]], sizes={"n": N, "d": D})
    v["attn"] = op("matmul", "bsk,kn->bsn", [v["ctx3"], wo], [[B, S, H]], reduction="k")
    v["h"] = op("add", "bsh,bsh->bsh", [v["x"], v["attn"]], [[B, S, H]])
    v["f"] = op("matmul", "bsk,kn->bsn", [v["h"], w1], [[B, S, F]], reduction="k")
    v["act"] = op("gelu", "bsf->bsf", [v["f"]], [[B, S, F]])
    v["out"] = op("matmul", "bsk,kn->bsn", [v["act"], w2], [[B, S, H]], reduction="k")
    v["logits"] = op("matmul", "bsk,kn->bsn", [v["out"], w_lm], [[B, S, V]], reduction="k")
    v["loss"] = op("cross_entropy", "bsv,bs->bs", [v["logits"], labels], [[B, S]], need_replication="v")
    # backward
    v["d_logits"] = op("cross_entropy_grad", "bsv,bs->bsv", [v["logits"], labels], [[B, S, V]], need_replication="v")
    v["d_out"] = op("matmul_grad.x", "bsn,kn->bsk", [v["d_logits"], w_lm], [[B, S, H]], reduction="n")
    v["d_wlm"] = op("matmul_grad.w", "bsk,bsn->kn", [v["out"], v["d_logits"]], [[H, V]], reduction="bs")
    v["d_act"] = op("matmul_grad.x", "bsn,kn->bsk", [v["d_out"], w2], [[B, S, F]], reduction="n")
    v["d_w2"] = op("matmul_grad.w", "bsk,bsn->kn", [v["act"], v["d_out"]], [[F, H]], reduction="bs")
    v["d_f"] = op("gelu_grad", "bsf,bsf->bsf", [v["f"], v["d_act"]], [[B, S, F]])
    v["d_h"] = op("matmul_grad.x", "bsn,kn->bsk", [v["d_f"], w1], [[B, S, H]], reduction="n")
    v["d_w1"] = op("matmul_grad.w", "bsk,bsn->kn", [v["h"], v["d_f"]], [[H, F]], reduction="bs")
    v["d_ctx3"] = op("matmul_grad.x", "bsn,kn->bsk", [v["d_h"], wo], [[B, S, H]], reduction="n")
    v["d_wo"] = op("matmul_grad.w", "bsk,bsn->kn", [v["ctx3"], v["d_h"]], [[H, H]], reduction="bs")
    v["d_ctx"] = op("reshape", "bs(nd)->bsnd", [v["d_ctx3"]], [[B, S, N, D]], sizes={"n": N, "d": D})
    v["d_probs"] = op("attention.scores", "bsnd,btnd->bnst", [v["d_ctx"], v["q4"]], [[B, N, S, S]], reduction="d")
    v["d_scores"] = op("softmax_grad", "bnst,bnst->bnst", [v["probs"], v["d_probs"]], [[B, N, S, S]], need_replication="t")
    v["d_q4"] = op("attention.context", "bnst,btnd->bsnd", [v["d_scores"], v["q4"]], [[B, S, N, D]], reduction="t")
    v["d_q"] = op("reshape", "bsnd->bs(nd)", [v["d_q4"]], [[B, S, H]], sizes={"n": N, "d": D})
    v["d_wq"] = op("matmul_grad.w", "bsk,bsn->kn", [v["ln"], v["d_q"]], [[H, H]], reduction="bs")
    v["d_x"] = op("add", "bsh,bsh->bsh", [v["d_h"], v["d_ctx3"]], [[B, S, H]])
    v["d_table"] = op("embedding_grad", "bs,bsh->vh", [tokens, v["d_x"]], [[V, H]], reduction="bs", need_replication="v")
    return g, inputs, v


@pytest.fixture(scope="module")
def program():
    g, inputs, v = build()
    g.propagate()
    return g, inputs, v


def test_megatron_and_data_parallel_layout_is_completed(program):
    g, _, v = program
    want = {
        "x": '[{"dp", ?}, {?}, {?}]', "q": '[{"dp", ?}, {?}, {"mp", ?}]', "q4": '[{"dp", ?}, {?}, {"mp", ?}, {?}]',
        "probs": '[{"dp", ?}, {"mp", ?}, {?}, {?}]', "ctx3": '[{"dp", ?}, {?}, {"mp", ?}]',
        "attn": '[{"dp", ?}, {?}, {?}]', "f": '[{"dp", ?}, {?}, {"mp", ?}]', "act": '[{"dp", ?}, {?}, {"mp", ?}]',
        "loss": '[{"dp", ?}, {?}]', "d_f": '[{"dp", ?}, {?}, {"mp", ?}]',
        "d_w1": '[{?}, {"mp", ?}]', "d_w2": '[{"mp", ?}, {?}]', "d_wq": '[{?}, {"mp", ?}]', "d_wo": '[{"mp", ?}, {?}]',
    }
    got = {k: g.sharding(v[k]) for k in want}
    assert got == want


def test_paddle_program_executes_on_simulated_ranks(program):
    g, inputs, _ = program
    _, checks = execute(g, inputs, KERNELS)
    assert len(checks) == len(g.ops)
    wrong = [c for c in checks if c.max_error > 1e-6]
    assert not wrong, wrong
    # the attention/MLP core runs without any reshard: its propagated shardings agree per factor
    core = [c for c in checks if c.name in ("gelu", "softmax", "attention.scores", "attention.context")]
    assert core and not any(c.resharded for c in core[:3])


def test_provenance_names_the_annotations(program):
    g, _, v = program
    p = g.provenance(v["f"])
    assert p["op_name"] and p["level"] in ("basic", "aggressive")
    assert p["origins"][0] == "tokens" and p["origins"][2] == "w1"
    text = g.explain(v["f"])
    assert "tokens" in text and "w1" in text and "last set by op" in text
