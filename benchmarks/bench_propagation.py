"""Propagation speed on a GPT-style training step: forward, backward and an Adam update per
weight, L layers, as a graph of factor tables. Prints the op count and the propagation time
(the C++ engine: validation, all priority rounds, basic and aggressive fixed points) for
programs of about 1k, 10k and 100k ops.

    PYTHONPATH=python python benchmarks/bench_propagation.py [--layers 96] [--repeat 5]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from spmdkit.propagation import Graph  # noqa: E402

B, S, H, N, D, F, V = 16, 512, 1024, 16, 64, 4096, 32000  # batch, seq, hidden, heads, head dim, ffn, vocab


class GPT:
    def __init__(self, g: Graph):
        self.g = g

    def op(self, name, rule, ins, out_shapes, **kw):
        return self.g.op(name, rule, ins, out_shapes, **kw)

    def weight(self, shape, sharding):
        return self.g.value(shape, sharding)

    def adam(self, w, grad):
        """m, v moments and the update: 5 elementwise ops per weight."""
        g, shape = self.g, self.g.shape(w)
        ew = "abc"[: len(shape)]
        m, v = g.value(shape), g.value(shape)
        m2 = self.op("adam.m", f"{ew},{ew}->{ew}", [m, grad], [shape])
        sq = self.op("adam.square", f"{ew}->{ew}", [grad], [shape])
        v2 = self.op("adam.v", f"{ew},{ew}->{ew}", [v, sq], [shape])
        step = self.op("adam.step", f"{ew},{ew}->{ew}", [m2, v2], [shape])
        return self.op("adam.update", f"{ew},{ew}->{ew}", [w, step], [shape])

    def linear(self, x, w, tape):
        """x [b, s, k] @ w [k, n]."""
        n = self.g.shape(w)[1]
        y = self.op("matmul", "bsk,kn->bsn", [x, w], [[B, S, n]], reduction="k")
        tape.append(("linear", x, w))
        return y

    def linear_grad(self, dy, x, w):
        k = self.g.shape(w)[0]
        dx = self.op("matmul_grad.x", "bsn,kn->bsk", [dy, w], [[B, S, k]], reduction="n")
        dw = self.op("matmul_grad.w", "bsk,bsn->kn", [x, dy], [self.g.shape(w)], reduction="bs")
        self.adam(w, dw)
        return dx

    def layer(self, x, first):
        g, tape = self.g, []
        # p0: batch parallel on "data"; p1: Megatron splits of the weights on "model"
        wq, wk, wv = (self.weight([H, H], '[{?}, {"model"}p1]') for _ in range(3))
        wo = self.weight([H, H], '[{"model"}p1, {?}]')
        w1, w2 = self.weight([H, F], '[{?}, {"model"}p1]'), self.weight([F, H], '[{"model"}p1, {?}]')
        ln_w = [self.weight([H], None) for _ in range(4)]
        ln1 = self.op("layer_norm", "bsh,h,h->bsh", [x, ln_w[0], ln_w[1]], [[B, S, H]], need_replication="h")
        heads = []
        for w in (wq, wk, wv):
            t = self.linear(ln1, w, tape)
            t = self.op("reshape", "bs(nd)->bsnd", [t], [[B, S, N, D]], sizes={"n": N, "d": D})
            heads.append(self.op("transpose", "bsnd->bnsd", [t], [[B, N, S, D]]))
        q, k, v = heads
        scores = self.op("batch_matmul", "bnsd,bntd->bnst", [q, k], [[B, N, S, S]], reduction="d")
        probs = self.op("softmax", "bnst->bnst", [scores], [[B, N, S, S]], need_replication="t")
        ctx = self.op("batch_matmul", "bnst,bntd->bnsd", [probs, v], [[B, N, S, D]], reduction="t")
        ctx_t = self.op("transpose", "bnsd->bsnd", [ctx], [[B, S, N, D]])
        ctx_m = self.op("reshape", "bsnd->bs(nd)", [ctx_t], [[B, S, H]], sizes={"n": N, "d": D})
        attn = self.linear(ctx_m, wo, tape)
        h1 = self.op("add", "bsh,bsh->bsh", [x, attn], [[B, S, H]])
        ln2 = self.op("layer_norm", "bsh,h,h->bsh", [h1, ln_w[2], ln_w[3]], [[B, S, H]], need_replication="h")
        f1 = self.linear(ln2, w1, tape)
        act = self.op("gelu", "bsf->bsf", [f1], [[B, S, F]])
        f2 = self.linear(act, w2, tape)
        out = self.op("add", "bsh,bsh->bsh", [h1, f2], [[B, S, H]])
        saved = dict(x=x, ln1=ln1, q=q, k=k, v=v, probs=probs, ctx_m=ctx_m, h1=h1, ln2=ln2, f1=f1, act=act,
                     wq=wq, wk=wk, wv=wv, wo=wo, w1=w1, w2=w2, ln_w=ln_w, scores=scores)
        return out, saved

    def layer_grad(self, dout, s):
        op, g = self.op, self.g
        d_act = self.linear_grad(dout, s["act"], s["w2"])
        d_f1 = op("gelu_grad", "bsf,bsf->bsf", [s["f1"], d_act], [[B, S, F]])
        d_ln2 = self.linear_grad(d_f1, s["ln2"], s["w1"])
        d_h1a, d_g2, d_b2 = op("layer_norm_grad", "bsh,h,bsh->bsh,h,h", [s["h1"], s["ln_w"][2], d_ln2],
                               [[B, S, H], [H], [H]], need_replication="h", reduction="bs")
        self.adam(s["ln_w"][2], d_g2)
        self.adam(s["ln_w"][3], d_b2)
        d_h1 = op("add", "bsh,bsh->bsh", [dout, d_h1a], [[B, S, H]])
        d_ctx_m = self.linear_grad(d_h1, s["ctx_m"], s["wo"])
        d_ctx_t = op("reshape", "bs(nd)->bsnd", [d_ctx_m], [[B, S, N, D]], sizes={"n": N, "d": D})
        d_ctx = op("transpose", "bsnd->bnsd", [d_ctx_t], [[B, N, S, D]])
        d_probs = op("batch_matmul", "bnsd,bntd->bnst", [d_ctx, s["v"]], [[B, N, S, S]], reduction="d")
        d_v = op("batch_matmul", "bnst,bnsd->bntd", [s["probs"], d_ctx], [[B, N, S, D]], reduction="s")
        d_scores = op("softmax_grad", "bnst,bnst->bnst", [s["probs"], d_probs], [[B, N, S, S]], need_replication="t")
        d_q = op("batch_matmul", "bnst,bntd->bnsd", [d_scores, s["k"]], [[B, N, S, D]], reduction="t")
        d_k = op("batch_matmul", "bnst,bnsd->bntd", [d_scores, s["q"]], [[B, N, S, D]], reduction="s")
        d_ln1 = None
        for d_head, w in ((d_q, s["wq"]), (d_k, s["wk"]), (d_v, s["wv"])):
            t = op("transpose", "bnsd->bsnd", [d_head], [[B, S, N, D]])
            t = op("reshape", "bsnd->bs(nd)", [t], [[B, S, H]], sizes={"n": N, "d": D})
            dx = self.linear_grad(t, s["ln1"], w)
            d_ln1 = dx if d_ln1 is None else op("add", "bsh,bsh->bsh", [d_ln1, dx], [[B, S, H]])
        d_xa, d_g1, d_b1 = op("layer_norm_grad", "bsh,h,bsh->bsh,h,h", [s["x"], s["ln_w"][0], d_ln1],
                              [[B, S, H], [H], [H]], need_replication="h", reduction="bs")
        self.adam(s["ln_w"][0], d_g1)
        self.adam(s["ln_w"][1], d_b1)
        return op("add", "bsh,bsh->bsh", [d_h1, d_xa], [[B, S, H]])


def build(layers: int) -> Graph:
    g = Graph()
    g.mesh("mesh", data=8, model=4)
    m = GPT(g)
    tokens = g.value([B, S], '[{"data"}p0, {}]', name="tokens")
    table = g.value([V, H], '[{"model"}p1, {?}]', name="embedding")
    x = m.op("embedding", "vh,bs->bsh", [table, tokens], [[B, S, H]], need_replication="v")
    saved = []
    for i in range(layers):
        x, s = m.layer(x, i == 0)
        saved.append(s)
    labels = g.value([B, S], name="labels")
    w_out = g.value([H, V], '[{?}, {"model"}p1]', name="lm_head")
    logits = m.op("matmul", "bsh,hv->bsv", [x, w_out], [[B, S, V]], reduction="h")
    loss = m.op("cross_entropy", "bsv,bs->bs", [logits, labels], [[B, S]], need_replication="v")
    d_logits = m.op("cross_entropy_grad", "bsv,bs,bs->bsv", [logits, labels, loss], [[B, S, V]], need_replication="v")
    d_x = m.op("matmul_grad.x", "bsv,hv->bsh", [d_logits, w_out], [[B, S, H]], reduction="v")
    for s in reversed(saved):
        d_x = m.layer_grad(d_x, s)
    m.op("embedding_grad", "bs,bsh->vh", [tokens, d_x], [[V, H]], reduction="bs", need_replication="v")
    return g


def time_propagation(layers: int, repeat: int):
    t0 = time.perf_counter()
    g = build(layers)
    built = time.perf_counter() - t0
    best = float("inf")
    for _ in range(repeat):
        g = build(layers) if best != float("inf") else g
        t = time.perf_counter()
        stats = g.propagate()
        best = min(best, time.perf_counter() - t)
    return len(g.ops), g.num_values, best, built, stats, g


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="1000,10000,100000", help="target op counts")
    args = ap.parse_args()
    per_layer = len(build(2).ops) - len(build(1).ops)
    base = len(build(1).ops) - per_layer
    print(f"GPT-style step: {per_layer} ops per layer (forward + backward + Adam), {base} outside the layers")
    for target in (int(s) for s in args.sizes.split(",")):
        layers = max(1, round((target - base) / per_layer))
        ops, values, best, built, stats, g = time_propagation(layers, args.repeat)
        sharded = sum(1 for v in range(values) if any(g.dim_axes(v)[d] for d in range(len(g.shape(v)))) if g.mesh_of(v))
        print(f"{layers:5d} layers  {ops:7d} ops  {values:7d} values  propagate {best * 1e3:8.1f} ms "
              f"({best * 1e6 / ops:.2f} us/op; {stats['op_visits']} rule applications, {stats['updates']} updates; "
              f"{sharded} values sharded; graph built in {built:.1f} s)")


if __name__ == "__main__":
    main()
