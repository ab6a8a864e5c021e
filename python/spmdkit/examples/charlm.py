"""A real run: a small byte-level GPT trained on the Python standard library's own source files
(found on every machine, read at run time, nothing downloaded) through `parallelize`, beside the
same model jitted on one device, with progress, a loss plot, checkpoints and a generated sample.

    spmdkit train --example charlm --mesh 2x2x2 --steps 300 --plot loss.png

Determinism: the text is the stdlib's top-level `*.py` files in sorted order; the batch of step
i is drawn from a generator seeded with (seed, i), so a resumed run sees the batches an
uninterrupted one would. Both runs (ours and one device) start from the same params and see the
same batches; their losses differ only by float rounding of differently ordered sums.

Checkpoints are `save_checkpoint`/`load_checkpoint` below: one .npz per saved step holding the
gathered (global) values of both runs' state and their loss histories, written to a temporary
name and renamed, so a kill during a save leaves the previous file. To use
`spmdkit.distributed.save_state_dict`/`load_state_dict` (distributed/checkpoint.py) instead,
replace those two functions: the rest sees only (step, state dict, histories).

JAX must see enough devices: import only after XLA_FLAGS is set (spmdkit.examples.cli does it).
"""
from __future__ import annotations

import functools
import os
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from ..distributed import mixed_precision, parallelize
from ..distributed.mixed_precision import compute_dtype_of
from ..models import gpt
from .optim import OPTIMIZERS, state_placements
from .setups import batch_placements, gpt_placements, mesh_of


@dataclass(frozen=True)
class CharLMConfig:
    model: gpt.GPTConfig = gpt.GPTConfig(vocab=256, seq=64, d_model=64, n_heads=4, d_ff=256, n_layers=2)
    batch: int = 16                 # sequences per step (global; split over dp, and fsdp on 2x2x2)
    lr: float = 3e-3
    corpus_bytes: int = 2_000_000   # the first this many bytes of the sorted stdlib sources
    seed: int = 0

    @property
    def tokens_per_step(self) -> int:
        return self.batch * self.model.seq


WINDOW = 25   # steps per window when comparing the two curves


# -- data -------------------------------------------------------------------------------------
def corpus_files() -> list[Path]:
    """The standard library's top-level .py files, sorted by name (the same order everywhere)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.glob("*.py") if p.is_file())
    if not files:
        raise FileNotFoundError(f"charlm: no .py files in the standard library folder {root}")
    return files


@functools.lru_cache(maxsize=4)
def corpus(max_bytes: int) -> np.ndarray:
    """uint8 bytes of the sorted stdlib sources, concatenated, cut at `max_bytes`."""
    chunks, n = [], 0
    for path in corpus_files():
        data = path.read_bytes()
        chunks.append(data[:max_bytes - n])
        n += len(chunks[-1])
        if n >= max_bytes:
            break
    return np.frombuffer(b"".join(chunks), dtype=np.uint8)


def batch_at(data: np.ndarray, step: int, batch: int, seq: int, seed: int):
    """(inputs, targets) [batch, seq] int32 of step `step`: random windows, next-byte targets."""
    rng = np.random.default_rng([seed, step])
    starts = rng.integers(0, len(data) - seq - 1, size=batch)
    windows = np.stack([data[s:s + seq + 1] for s in starts]).astype(np.int32)
    return windows[:, :-1], windows[:, 1:]


# -- the step ---------------------------------------------------------------------------------
def make_train_step(cfg: CharLMConfig, precision: str):
    init, update = OPTIMIZERS["adamw"](cfg.lr)
    loss_fn = functools.partial(gpt.loss_fn, n_heads=cfg.model.n_heads)
    if precision != "f32":
        loss_fn = mixed_precision(loss_fn, compute_dtype_of(precision))

    def train_step(params, opt_state, inputs, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, inputs, targets)
        new_params, new_state = update(params, opt_state, grads)
        return new_params, new_state, loss
    return init, train_step


@functools.lru_cache(maxsize=8)
def _steps(cfg: CharLMConfig, mesh_key: str, precision: str):
    """(init, parallelized step, one-device jitted step), built once per process and config."""
    init, step = make_train_step(cfg, precision)
    params = gpt.init_params(jax.random.PRNGKey(cfg.seed), cfg.model)
    pp, bp = gpt_placements(params, mesh_key), batch_placements(mesh_key)
    sp = state_placements("adamw", pp)
    ours = parallelize(step, mesh_of(mesh_key), (pp, sp, bp, bp), out_placements=(pp, sp, None))
    return init, ours, jax.jit(step)


# -- checkpoints ------------------------------------------------------------------------------
def _flat(tree) -> dict[str, np.ndarray]:
    from .train import host
    return {jax.tree_util.keystr(path): host(x) for path, x in jax.tree_util.tree_flatten_with_path(tree)[0]}


def _unflat(flat: dict, like, prefix: str, where: str):
    paths, treedef = jax.tree_util.tree_flatten_with_path(like)
    leaves = []
    for path, x in paths:
        key = prefix + jax.tree_util.keystr(path)
        if key not in flat:
            raise ValueError(f"checkpoint {where}: no leaf {key!r}")
        value = flat[key]
        if value.shape != np.shape(x) or value.dtype != np.asarray(x).dtype:
            raise ValueError(f"checkpoint {where}: leaf {key!r} is {value.dtype}{list(value.shape)}, "
                             f"the run needs {np.asarray(x).dtype}{list(np.shape(x))}")
        leaves.append(jnp.asarray(value))
    return jax.tree_util.tree_unflatten(treedef, leaves)


def checkpoint_path(ckpt_dir, step: int) -> Path:
    return Path(ckpt_dir) / f"step_{step:07d}.npz"


def save_checkpoint(ckpt_dir, step: int, state: dict, history: dict) -> Path:
    """Write `state` (a dict of pytrees, gathered to the host) and `history` (lists of floats)
    after `step` steps; atomic: a temporary file renamed over the final name."""
    path = checkpoint_path(ckpt_dir, step)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {f"state/{name}{key}": v for name, tree in state.items() for key, v in _flat(tree).items()}
    arrays.update({f"history/{k}": np.asarray(v, np.float64) for k, v in history.items()})
    arrays["step"] = np.asarray(step)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, path)
    return path


def latest_checkpoint(ckpt_dir) -> Path | None:
    found = sorted(Path(ckpt_dir).glob("step_*.npz")) if Path(ckpt_dir).is_dir() else []
    return found[-1] if found else None


def load_checkpoint(path, like: dict) -> tuple[int, dict, dict]:
    """(step, state shaped like `like`, history) of a checkpoint file."""
    with np.load(path) as f:
        flat = {k: f[k] for k in f.files}
    state = {name: _unflat(flat, tree, f"state/{name}", str(path)) for name, tree in like.items()}
    history = {k[len("history/"):]: [float(x) for x in v] for k, v in flat.items() if k.startswith("history/")}
    return int(flat["step"]), state, history


# -- sampling ---------------------------------------------------------------------------------
def generate(params, cfg: CharLMConfig, prompt: bytes = b"def ", n: int = 160, temperature: float = 0.8,
             seed: int = 0) -> bytes:
    """`n` bytes sampled after `prompt` on one device: each step reads the last `seq` bytes
    (right-padded to a fixed shape; the attention is causal, so padding after the last byte
    does not change its logits)."""
    seq = cfg.model.seq
    params = jax.tree_util.tree_map(np.asarray, params)

    @jax.jit
    def next_logits(params, window, pos):
        return gpt.logits_fn(params, window[None], cfg.model.n_heads)[0, pos]
    out = list(prompt)
    key = jax.random.PRNGKey(seed)
    for _ in range(n):
        ctx = out[-seq:]
        window = np.zeros(seq, np.int32)
        window[:len(ctx)] = ctx
        key, sub = jax.random.split(key)
        logits = next_logits(params, window, len(ctx) - 1)
        out.append(int(jax.random.categorical(sub, logits / temperature)))
    return bytes(out)


# -- the run ----------------------------------------------------------------------------------
def _fmt_time(s: float) -> str:
    s = max(0, int(round(s)))
    return f"{s // 60}m{s % 60:02d}s"


def train(mesh_key: str = "2x2x2", steps: int = 300, precision: str = "f32", cfg: CharLMConfig = CharLMConfig(),
          save_every: int = 0, ckpt: str | None = None, resume: bool = False, reference: bool = True,
          log_every: int | None = None, sample_bytes: int = 160, log=print) -> dict:
    """Train `steps` steps (counting from 0, or from the latest checkpoint with `resume`);
    returns the histories, timings and the sample."""
    if save_every and not ckpt:
        raise ValueError("charlm: --save-every needs --ckpt DIR")
    if resume and not ckpt:
        raise ValueError("charlm: --resume needs --ckpt DIR")
    data = corpus(cfg.corpus_bytes)
    init, ours, one_device = _steps(cfg, mesh_key, precision)
    params = gpt.init_params(jax.random.PRNGKey(cfg.seed), cfg.model)
    state = {"params": params, "opt": init(params), "ref_params": params, "ref_opt": init(params)}
    history = {"loss": [], "ref_loss": []}
    start = 0
    if resume:
        path = latest_checkpoint(ckpt)
        if path is None:
            log(f"no checkpoint in {ckpt}: starting at step 0")
        else:
            start, state, history = load_checkpoint(path, state)
            log(f"resumed from {path} at step {start}")
    log(f"charlm: byte-level GPT ({sum(np.size(x) for x in jax.tree_util.tree_leaves(params)):,} params, "
        f"{cfg.model.n_layers} layers, d={cfg.model.d_model}, seq {cfg.model.seq}, batch {cfg.batch}) on "
        f"{len(data):,} bytes of {sysconfig.get_paths()['stdlib']}/*.py; mesh {mesh_key}, {precision}")
    log_every = log_every or max(1, steps // 15)
    ours_s, t_start, timed_steps, first_s = 0.0, time.perf_counter(), 0, 0.0
    plan = None
    for i in range(start, steps):
        x, y = batch_at(data, i, cfg.batch, cfg.model.seq, cfg.seed)
        t0 = time.perf_counter()
        p, o, loss = ours(state["params"], state["opt"], x, y)
        loss = float(loss)
        dt = time.perf_counter() - t0
        if i > start:  # the first call traces, partitions and compiles
            ours_s, timed_steps = ours_s + dt, timed_steps + 1
        state["params"], state["opt"] = p, o
        history["loss"].append(loss)
        if reference:
            rp, ro, ref_loss = one_device(state["ref_params"], state["ref_opt"], x, y)
            state["ref_params"], state["ref_opt"] = rp, ro
            history["ref_loss"].append(float(ref_loss))
        plan = plan or ours.plan
        if i == start:   # both first calls compiled: the ETA's rate starts after them
            first_s = time.perf_counter() - t_start
        done = i + 1
        if done % log_every == 0 or done == steps:
            elapsed = time.perf_counter() - t_start
            # the first step compiles: the rate comes from the steps after it
            per_step = (elapsed - first_s) / (done - start - 1) if done - start > 1 else elapsed
            eta = per_step * (steps - done)
            tps = cfg.tokens_per_step * timed_steps / ours_s if ours_s else float("nan")
            ref = f"  one device {history['ref_loss'][-1]:.4f}" if reference else ""
            log(f"step {done:4d}/{steps}  loss {loss:.4f}{ref}  {tps:,.0f} tok/s  "
                f"elapsed {_fmt_time(elapsed)}  ETA {_fmt_time(eta)}")
        if save_every and done % save_every == 0:
            path = save_checkpoint(ckpt, done, state, history)
            log(f"saved {path} ({path.stat().st_size:,} B)")
    wall = time.perf_counter() - t_start
    row = {"mesh": mesh_key, "precision": precision, "start": start, "steps": steps,
           "loss": history["loss"], "ref_loss": history["ref_loss"], "wall_s": wall,
           "tokens_per_s": cfg.tokens_per_step * timed_steps / ours_s if ours_s else None,
           "ms_per_step": 1e3 * ours_s / timed_steps if timed_steps else None,
           "plan_bytes": plan.bytes_per_device if plan else None}
    if sample_bytes:
        row["sample"] = generate(state["params"], cfg, n=sample_bytes, seed=cfg.seed).decode("utf-8", "replace")
    return row


def plot(row: dict, path: str, every: int = 1) -> str:
    """The loss curves (ours and, when run, one device) as a PNG at `path`."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    steps = np.arange(len(row["loss"]))   # step i: the loss of batch i, before its update
    ax.plot(steps, row["loss"], label=f"spmdkit, mesh {row['mesh']} ({row['precision']})", lw=1.5)
    if row["ref_loss"]:
        ax.plot(steps[::every], row["ref_loss"][::every], "--", label="one device (jax.jit)", lw=1.2)
    ax.set_xlabel("step")
    ax.set_ylabel("cross entropy (nats/byte)")
    ax.set_title("charlm: byte-level GPT on the Python stdlib")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)
    return path


def summary(row: dict) -> dict:
    """Figures of the curve: the loss of step i (before its update) every 50 steps and at the last
    step, [ours, one device]; the largest gap between the two; the mean of the last 10 losses."""
    loss, ref = row["loss"], row["ref_loss"]
    marks = sorted({*range(0, len(loss), 50), len(loss) - 1}) if loss else []
    out = {"at_step": {i: [round(loss[i], 4)] + ([round(ref[i], 4)] if ref else []) for i in marks},
           "final_mean10": float(np.mean(loss[-10:])) if loss else None}
    if ref:
        a, b = np.asarray(loss), np.asarray(ref)
        gaps = np.abs(a - b)
        out["max_gap"] = float(gaps.max())
        out["max_rel_gap"] = float((gaps / np.abs(b)).max())
        out["max_rel_gap_first50"] = float((gaps / np.abs(b))[:50].max())
        # rounding differences grow through training (each step's update feeds the next), so the
        # curves are compared over windows: the relative gap of each 25-step window's mean
        windows = [(a[i:i + WINDOW].mean(), b[i:i + WINDOW].mean()) for i in range(0, len(a), WINDOW)]
        out["max_rel_gap_window25"] = float(max(abs(x - y) / abs(y) for x, y in windows))
    return out
