"""Issue 18's small models, as a new user writes them, with their placements on a 2x2x2 mesh
(dp, fsdp, mp): a residual MLP, causal attention with q/k/v split (fsdp, mp) and the batch on
(dp, fsdp), an embedding classifier with the vocab on mp, and a language model's input/target
shift (`tokens[:, :-1]`, `tokens[:, 1:]`) with the batch on dp.

Each MODELS entry gives (params, inputs, targets, loss_fn, param placements, batch placements);
`train_step` is one SGD step: (new params, loss, grads). Imported by slices_worker.py and
benchmarks/bytes_vs_xla.py (JAX must already see 8 devices there)."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from spmdkit.distributed import ProcessMesh, Replicate, Shard

MESH_SHAPE, MESH_AXES = (2, 2, 2), ("dp", "fsdp", "mp")
R = Replicate()
LR = 0.1


def mesh(model: str | None = None) -> ProcessMesh:
    shape, axes = OWN_MESHES.get(model, (MESH_SHAPE, MESH_AXES))
    return ProcessMesh(shape=shape, dim_names=axes)


def place(**dims) -> list:
    """Placements (one per mesh axis) from axis=tensor dim, e.g. place(dp=0, mp=1)."""
    return [Shard(dims[a]) if a in dims else R for a in MESH_AXES]


def _normal(key, shape, scale=0.1):
    return scale * jax.random.normal(key, shape, jnp.float32)


def residual_mlp():
    k = jax.random.split(jax.random.PRNGKey(0), 4)
    d, h, b = 16, 32, 8
    params = {"w1": _normal(k[0], (d, h)), "w2": _normal(k[1], (h, d))}

    def loss_fn(p, x, y):
        z = x + jax.nn.relu(x @ p["w1"]) @ p["w2"]
        return jnp.mean((z - y) ** 2)
    pp = {"w1": place(fsdp=0, mp=1), "w2": place(mp=0, fsdp=1)}
    return params, _normal(k[2], (b, d), 1.0), _normal(k[3], (b, d), 1.0), loss_fn, pp, place(dp=0, fsdp=0)


def causal_attention(b: int = 8, t: int = 16, d: int = 32, heads: int = 4):
    k = jax.random.split(jax.random.PRNGKey(1), 6)
    params = {n: _normal(kk, (d, d)) for n, kk in zip(("wq", "wk", "wv", "wo"), k)}

    def loss_fn(p, x, y):
        def split_heads(a):
            return a.reshape(b, t, heads, d // heads).transpose(0, 2, 1, 3)
        q, kk, v = (split_heads(x @ p[n]) for n in ("wq", "wk", "wv"))
        s = q @ kk.transpose(0, 1, 3, 2) / jnp.sqrt(d // heads)
        s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -1e9)
        o = (jax.nn.softmax(s, axis=-1) @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
        return jnp.mean((o @ p["wo"] - y) ** 2)
    pp = {"wq": place(fsdp=0, mp=1), "wk": place(fsdp=0, mp=1), "wv": place(fsdp=0, mp=1),
          "wo": place(mp=0, fsdp=1)}
    return params, _normal(k[4], (b, t, d), 1.0), _normal(k[5], (b, t, d), 1.0), loss_fn, pp, place(dp=0, fsdp=0)


def embedding_classifier(vocab: int = 1024, d: int = 32):
    k = jax.random.split(jax.random.PRNGKey(2), 4)
    classes, b, t = 8, 8, 4
    params = {"emb": _normal(k[0], (vocab, d)), "w": _normal(k[1], (d, classes))}

    def loss_fn(p, tokens, labels):
        h = jnp.mean(p["emb"][tokens], axis=1)
        logits = h @ p["w"]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1))
    tokens = jax.random.randint(k[2], (b, t), 0, vocab)
    labels = jax.random.randint(k[3], (b,), 0, classes)
    pp = {"emb": place(mp=0), "w": [R, R, R]}
    return params, tokens, labels, loss_fn, pp, place(dp=0)


def lm_shift():
    k = jax.random.split(jax.random.PRNGKey(3), 4)
    vocab, d, b, t = 32, 16, 8, 9
    params = {"emb": _normal(k[0], (vocab, d)), "w": _normal(k[1], (d, vocab))}

    def loss_fn(p, tokens, mask):
        inputs, targets = tokens[:, :-1], tokens[:, 1:]
        logits = p["emb"][inputs] @ p["w"]
        nll = -jnp.take_along_axis(jax.nn.log_softmax(logits), targets[..., None], axis=-1)[..., 0]
        return jnp.sum(nll * mask[:, 1:]) / jnp.sum(mask[:, 1:])
    tokens = jax.random.randint(k[2], (b, t), 0, vocab)
    mask = jnp.ones((b, t), jnp.float32)
    pp = {"emb": [R, R, R], "w": place(fsdp=0)}
    return params, tokens, mask, loss_fn, pp, place(dp=0)


def gqa_attention(b: int = 8, t: int = 16, d: int = 32, heads: int = 4, kv_heads: int = 2):
    """Grouped-query attention (LLaMA's: 2 kv heads shared by 4 query heads, jnp.repeat) with the
    projections column-split over a 4-way mp: the k/v projection's 16 columns split 4 ways are 2
    heads of 8, so propagation splits the heads over the sub-axis "mp":(1)2 and the head dim over
    "mp":(2)2, as Shardy does (on a 2x4 mesh of its own, OWN_MESHES)."""
    k = jax.random.split(jax.random.PRNGKey(4), 6)
    hd = d // heads
    params = {"wq": _normal(k[0], (d, d)), "wk": _normal(k[1], (d, kv_heads * hd)),
              "wv": _normal(k[2], (d, kv_heads * hd)), "wo": _normal(k[3], (d, d))}

    def loss_fn(p, x, y):
        q = (x @ p["wq"]).reshape(b, t, heads, hd)
        kk = jnp.repeat((x @ p["wk"]).reshape(b, t, kv_heads, hd), heads // kv_heads, axis=2)
        v = jnp.repeat((x @ p["wv"]).reshape(b, t, kv_heads, hd), heads // kv_heads, axis=2)
        s = jnp.einsum("bqhd,bkhd->bhqk", q, kk) / jnp.sqrt(hd)
        s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -1e9)
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v).reshape(b, t, d)
        return jnp.mean((o @ p["wo"] - y) ** 2)
    col, row = [R, Shard(1)], [R, Shard(0)]
    pp = {"wq": col, "wk": col, "wv": col, "wo": row}
    return params, _normal(k[4], (b, t, d), 1.0), _normal(k[5], (b, t, d), 1.0), loss_fn, pp, [Shard(0), R]


OWN_MESHES = {"gqa_attention": ((2, 4), ("dp", "mp"))}  # models placed on another mesh than 2x2x2

MODELS = {"residual_mlp": residual_mlp, "attention_fsdp": causal_attention,
          "embedding_classifier": embedding_classifier, "lm_shift": lm_shift, "gqa_attention": gqa_attention,
          # a table of 4 KiB: the default cost model prices one all-gather of the table (one hop)
          # below one all-reduce of the rows (two hops), so it moves more bytes than XLA there
          "embedding_classifier_small": lambda: embedding_classifier(64, 16)}


def train_step_of(loss_fn):
    def train_step(params, inputs, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, inputs, targets)
        return jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads), loss, grads
    return train_step
