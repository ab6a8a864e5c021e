"""The program path against what a JAX user already has, in one run on this machine.

1. Propagation: transformer training steps of 4, 24, 200 and 280 (~100k ops) layers (embedding, layer norm,
   attention, MLP, cross-entropy loss, grad, SGD), lowered by JAX with the batch on "dp" and
   Megatron weight splits on "mp", calls inlined. On the same MLIR text: spmdkit
   (`spmdkit.ir.parse` + `spmdkit.propagate`, and each part) against the live Shardy in jaxlib
   (MLIR parse + `sdy-add-data-flow-edges, sdy-user-priority-propagate, sdy-sink-data-flow-edges`).
   Prints best-of-N times, the ratio, and how many values the two engines shard differently.
2. First call: `parallelize`'s stages on a small step on 8 virtual devices (import, propagate,
   partition, lower, compile), against `jax.jit(step, in_shardings=...).lower(...).compile()`,
   each side in a fresh process (a first call), alternately, best of N.
3. Stages: import, propagate, partition and lower (no compile; its trace by JAX in brackets) of
   that step at 4 and 24 layers in this process, with partition/propagate and lower/propagate,
   and jax.jit's own lower of the same step and shardings beside ours.

    PYTHONPATH=python python benchmarks/bench_program_path.py [--layers 4 24 200 280] [--repeat 3]
        [--no-first-call] [--stages 4 24] [--cpu] [--profile N] [--memory N]
    --cpu: CPU time (all threads) instead of wall time, fairer on a shared machine
    --profile N: cProfile of parse + propagate on the N-layer step
    --memory N: parse + propagate of the N-layer step alone: seconds and peak RSS (280: ~100k ops)
"""
from __future__ import annotations

import argparse
import functools
import gc
import os
import re
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "python"))

CACHE = os.environ.get("SPMDKIT_BENCH_CACHE", "/tmp/spmdkit_bench_program_path")
clock = time.perf_counter  # --cpu: time.process_time (CPU seconds of every thread: fairer on a loaded machine)
PROPAGATION = "builtin.module(sdy-add-data-flow-edges,sdy-user-priority-propagate,func.func(sdy-sink-data-flow-edges))"


# ---- the model ---------------------------------------------------------------------------------
def make_step(layers: int, d: int, heads: int, ffn: int, vocab: int):
    """(step, params, tokens, param_specs): a decoder-only transformer's SGD step."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    def layer_norm(x, scale):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale

    def attention(x, p):
        b, s, _ = x.shape
        split = lambda t: t.reshape(b, s, heads, d // heads).transpose(0, 2, 1, 3)
        q, k, v = split(x @ p["wq"]), split(x @ p["wk"]), split(x @ p["wv"])
        scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(d // heads).astype(x.dtype)
        weights = jax.nn.softmax(scores, axis=-1)
        out = jnp.einsum("bhqk,bhkd->bhqd", weights, v).transpose(0, 2, 1, 3).reshape(b, s, d)
        return out @ p["wo"]

    def forward(params, tokens):
        x = params["embed"][tokens]
        for p in params["layers"]:
            x = x + attention(layer_norm(x, p["ln1"]), p)
            x = x + jax.nn.gelu(layer_norm(x, p["ln2"]) @ p["w1"]) @ p["w2"]
        return layer_norm(x, params["ln_f"]) @ params["head"]

    def loss(params, tokens, targets):
        logits = forward(params, tokens)
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(targets, vocab), axis=-1))

    def step(params, tokens, targets):
        value, grads = jax.value_and_grad(loss)(params, tokens, targets)
        return jax.tree_util.tree_map(lambda w, g: w - 0.01 * g, params, grads), value

    f32 = jnp.float32
    layer = lambda: {"ln1": jnp.ones(d, f32), "wq": jnp.zeros((d, d), f32), "wk": jnp.zeros((d, d), f32),
                     "wv": jnp.zeros((d, d), f32), "wo": jnp.zeros((d, d), f32), "ln2": jnp.ones(d, f32),
                     "w1": jnp.zeros((d, ffn), f32), "w2": jnp.zeros((ffn, d), f32)}
    layer_specs = {"ln1": P(), "wq": P(None, "mp"), "wk": P(None, "mp"), "wv": P(None, "mp"), "wo": P("mp", None),
                   "ln2": P(), "w1": P(None, "mp"), "w2": P("mp", None)}
    params = {"embed": jnp.zeros((vocab, d), f32), "layers": [layer() for _ in range(layers)],
              "ln_f": jnp.ones(d, f32), "head": jnp.zeros((d, vocab), f32)}
    specs = {"embed": P(), "layers": [layer_specs] * layers, "ln_f": P(), "head": P(None, "mp")}
    return step, params, specs


def lowered_text(layers: int) -> str:
    """The step's MLIR (Shardy shardings on the arguments), calls inlined; cached on disk."""
    path = os.path.join(CACHE, f"step_{layers}.mlir")
    if os.path.exists(path):
        with open(path) as f:
            return f.read()
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from spmdkit import ir
    batch, seq = 8, 16
    step, params, specs = make_step(layers, d=32, heads=4, ffn=64, vocab=64)
    mesh = jax.make_mesh((2, 4), ("dp", "mp"))
    named = jax.tree_util.tree_map(lambda s: NamedSharding(mesh, s), specs, is_leaf=lambda s: isinstance(s, P))
    data = NamedSharding(mesh, P("dp", None))
    tokens = jnp.zeros((batch, seq), jnp.int32)
    text = jax.jit(step, in_shardings=(named, data, data)).lower(params, tokens, tokens).as_text()
    text = ir.print_program(ir.inline_calls(ir.parse(text, strict_ops=False)))  # as Shardy's import would
    os.makedirs(CACHE, exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return text


# ---- timing --------------------------------------------------------------------------------------
def best(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def shardy(text: str):
    """(parse seconds, passes seconds, printed module) for the live Shardy in jaxlib."""
    from jaxlib.mlir import ir as mlir, passmanager

    from spmdkit.ir.mlir_context import make_context
    ctx = make_context()
    with ctx:
        t0 = clock()
        module = mlir.Module.parse(text)
        t1 = clock()
        passmanager.PassManager.parse(PROPAGATION).run(module.operation)
        t2 = clock()
    return t1 - t0, t2 - t1, module


def values_of(program):
    out = list(program.main.args)
    for op in program.main.body.ops:
        out += op.results
    return out


def dims_text(sharding) -> str:
    """A sharding's axes per dim ('?' and the mesh dropped); '' when it shards nothing."""
    if sharding is None:
        return ""
    text = str(sharding)
    text = re.sub(r",? ?\?", "", text[text.index("["):text.rindex("]") + 1] if "[" in text else "[]")
    return "" if re.sub(r"[\[\]{}, ]", "", text) == "" else text


def differing(ours, theirs_text: str) -> tuple[int, int]:
    """(values compared, values that differ) between our propagated program and Shardy's text."""
    from spmdkit import ir
    theirs = ir.parse(theirs_text, strict_ops=False)
    a, b = values_of(ours), values_of(theirs)
    assert [x.type.shape for x in a] == [y.type.shape for y in b], "the two programs do not line up"
    compared = differ = 0
    for x, y in zip(a, b):
        if x.type.rank == 0:
            continue
        compared += 1
        differ += dims_text(x.sharding) != dims_text(y.sharding)
    return compared, differ


def propagation_table(layer_counts, repeat: int) -> None:
    import spmdkit
    from spmdkit import ir
    print("propagation, same MLIR text (best of %d; %s ms)" % (repeat, "CPU" if clock is time.process_time else "wall"))
    print(f"{'layers':>6} {'ops':>8} | {'ours':>8} {'parse':>8} {'propagate':>9} | {'Shardy':>8} {'parse':>7} "
          f"{'passes':>7} | {'ratio':>5} | differ")
    for layers in layer_counts:
        text = lowered_text(layers)
        n_ops = sum(1 for _ in ir.parse(text, strict_ops=False).walk())
        runs, theirs_runs = [], []
        for _ in range(repeat):  # interleaved, so that both see the same load on a shared machine
            # each side from a collected heap: the last round's programs are garbage that only a
            # full collection frees, and it would land in whichever side ran next
            gc.collect()
            t0 = clock()
            program = ir.parse(text, strict_ops=False)
            t1 = clock()
            spmdkit.propagate(program)
            t2 = clock()
            runs.append((t2 - t0, t1 - t0, t2 - t1))
            gc.collect()
            theirs = shardy(text)
            theirs_runs.append(theirs[:2])
            del theirs
        ours, parse_s, prop_s = min(runs)
        theirs = min(theirs_runs, key=sum) + (shardy(text)[2],)
        compared, differ = differing(program, str(theirs[2]))
        total = theirs[0] + theirs[1]
        print(f"{layers:>6} {n_ops:>8} | {ours * 1e3:>8.1f} {parse_s * 1e3:>8.1f} {prop_s * 1e3:>9.1f} | "
              f"{total * 1e3:>8.1f} {theirs[0] * 1e3:>7.1f} {theirs[1] * 1e3:>7.1f} | {ours / total:>5.2f} | "
              f"{differ} of {compared}", flush=True)


def memory(layers: int) -> None:
    """Parse + propagate the N-layer step once in this process: time and peak RSS (run it in a
    fresh process: the peak counts everything the process ever held)."""
    import resource

    import spmdkit
    from spmdkit import ir
    text = lowered_text(layers)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ir.parse(lowered_text(4), strict_ops=False)  # MLIR's context and the rule registry, made once
    full_gc = _full_collections()
    t0, c0 = time.perf_counter(), time.process_time()
    program = ir.parse(text, strict_ops=False)
    t1, c1 = time.perf_counter(), time.process_time()
    spmdkit.propagate(program)
    t2, c2 = time.perf_counter(), time.process_time()
    gc.callbacks.remove(full_gc)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    n_ops = sum(1 for _ in program.walk())
    print(f"{layers}-layer step, {n_ops} ops: parse {t1 - t0:.2f} s, propagate {t2 - t1:.2f} s, end to end "
          f"{t2 - t0:.2f} s wall ({c2 - c0:.2f} s CPU: parse {c1 - c0:.2f}, propagate {c2 - c1:.2f}); "
          f"peak RSS {peak:.0f} MB ({before:.0f} MB before parsing: Python, jax, the text); "
          f"CPython's full collections in it: {full_gc.count} taking {full_gc.seconds:.2f} s")


def _full_collections():
    """A gc callback that counts the full (oldest-generation) collections and their seconds."""
    started = []

    def callback(phase, info):
        if info["generation"] != 2:
            return
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            callback.seconds += time.perf_counter() - started.pop()
            callback.count += 1
    callback.seconds, callback.count = 0.0, 0
    gc.callbacks.append(callback)
    return callback


def profile(layers: int) -> None:
    import cProfile
    import pstats

    import spmdkit
    from spmdkit import ir
    text = lowered_text(layers)
    prof = cProfile.Profile()
    prof.enable()
    spmdkit.propagate(ir.parse(text, strict_ops=False))
    prof.disable()
    pstats.Stats(prof).sort_stats(os.environ.get("SORT", "tottime")).print_stats(int(os.environ.get("ROWS", "25")))


# ---- first call of parallelize against jax.jit -----------------------------------------------
# A first call is one in a fresh process: JAX's own first tracing, lowering and compiling warm
# caches that a second program in the same process would find warm. So each side runs in a
# process of its own (this script with --first-call-child), alternately, best of N per side.
def first_call_child(side: str, layers: int) -> dict:
    """Stage seconds of one first call in this (fresh) process: side "ours" (parallelize's
    stages: import, propagate, partition, lower, compile) or "jax" (jax.jit lower, compile)."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    batch, seq, d = 16, 64, 128
    step, params, specs = make_step(layers, d=d, heads=4, ffn=4 * d, vocab=256)
    tokens = jnp.zeros((batch, seq), jnp.int32)
    stages = {}
    if side == "jax":
        jmesh = jax.make_mesh((2, 4), ("dp", "mp"))
        named = jax.tree_util.tree_map(lambda s: NamedSharding(jmesh, s), specs, is_leaf=lambda s: isinstance(s, P))
        data_named = NamedSharding(jmesh, P("dp", None))
        t = clock()
        lowered = jax.jit(step, in_shardings=(named, data_named, data_named)).lower(params, tokens, tokens)
        stages["lower"] = clock() - t
        t = clock()
        lowered.compile()
        stages["compile"] = clock() - t
        return stages

    inputs = _our_inputs(step, params, specs, tokens)
    stages.update(_our_stages(step, params, tokens, inputs, compile_too=True))
    return stages


def _our_inputs(step, params, specs, tokens):
    """The 2x4 mesh, the params' shardings from their PartitionSpecs and the batch over dp, as
    parallelize builds them, and the abstract sharded arguments jax's lower takes."""
    import jax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from spmdkit.distributed import ProcessMesh, Replicate, Shard
    from spmdkit.distributed.parallelize import Parallelized
    mesh = ProcessMesh([[0, 1, 2, 3], [4, 5, 6, 7]], dim_names=["dp", "mp"])

    def place(spec):
        out = [Replicate(), Replicate()]
        for dim, axis in enumerate(spec):
            if axis is not None:
                out[["dp", "mp"].index(axis)] = Shard(dim)
        return out

    leaf_specs = jax.tree_util.tree_leaves(specs, is_leaf=lambda s: isinstance(s, P))
    arg_leaves = jax.tree_util.tree_leaves(params)
    par = Parallelized(step, mesh, (None, [Shard(0), Replicate()], [Shard(0), Replicate()]))
    shardings = [par._sharding(place(s), x.shape, f"leaf{i}") for i, (s, x) in enumerate(zip(leaf_specs, arg_leaves))]
    data = par._sharding([Shard(0), Replicate()], tokens.shape, "tokens")
    named = [NamedSharding(mesh.jax_mesh(), s) for s in leaf_specs] + [NamedSharding(mesh.jax_mesh(), P("dp"))] * 2
    # abstract arguments, as jax.jit gets: no transfers in the timing
    flat = [jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=s) for x, s in zip(arg_leaves + [tokens, tokens], named)]
    return mesh, shardings + [data, data], flat


def _our_stages(step, params, tokens, inputs, compile_too: bool = False, trace: bool = False) -> dict:
    """Seconds of parallelize's stages on one step: import_jax, propagate, partition, lower
    (to_jax + jax's trace and lower; with `trace`, the trace's part too) and, with `compile_too`,
    compile; "ops": the program's op count."""
    from spmdkit.ir import import_jax
    from spmdkit.partition import partition, to_jax
    from spmdkit.propagation.from_ir import propagate_program
    mesh, arg_shardings, flat = inputs
    times = {}
    t = clock()
    program = import_jax(step, params, tokens, tokens, inline_calls=True, meshes={"mesh": mesh.sharding_mesh},
                         arg_shardings=arg_shardings)
    times["import"] = clock() - t
    t = clock()
    signatures = propagate_program(program).signatures
    times["propagate"] = clock() - t
    t = clock()
    parted = partition(program, signatures=signatures)  # as parallelize hands them on
    times["partition"] = clock() - t
    t = clock()
    traced = to_jax(parted, mesh.jax_mesh()).trace(*flat)  # our local program traced by JAX into a jaxpr
    times["trace"] = clock() - t
    lowered = traced.lower()  # JAX's lowering of that jaxpr to StableHLO
    times["lower"] = clock() - t
    if compile_too:
        t = clock()
        lowered.compile()
        times["compile"] = clock() - t
    times["ops"] = sum(1 for _ in program.walk())
    if not trace:
        times.pop("trace")
    return times


def _jax_lower(step, params, tokens, flat) -> float:
    """Seconds of jax.jit's own lower of the step with the same shardings (what a JAX user pays
    before compiling: its tracing and its lowering of the step's jaxpr)."""
    import jax
    tree = jax.tree_util.tree_structure((params, tokens, tokens))
    args = jax.tree_util.tree_unflatten(tree, flat)
    fresh = functools.partial(step)  # a new callable: jax.jit's caches (keyed by the function) miss, as on a first call
    t = clock()
    jax.jit(fresh).lower(*args)
    return clock() - t


def stage_table(layer_counts, repeat: int) -> None:
    """import_jax, propagate, partition and lower (to_jax + jax's lower, no compile) of the
    first-call step at these layer counts, in this process, best of `repeat` per stage."""
    import jax.numpy as jnp

    unit = "CPU" if clock is time.process_time else "wall"
    print(f"program path stages of the first-call step (d=128, 2x4 mesh), best of {repeat}, {unit} ms")
    print(f"{'layers':>6} {'ops':>6} | {'import':>7} {'propagate':>9} {'partition':>9} {'lower':>7} "
          f"(trace) | {'jax.jit lower':>13} | partition/propagate  lower/propagate  lower/jax.jit lower")
    for layers in layer_counts:
        step, params, specs = make_step(layers, d=128, heads=4, ffn=512, vocab=256)
        tokens = jnp.zeros((16, 64), jnp.int32)
        inputs = _our_inputs(step, params, specs, tokens)
        best = {}
        for _ in range(repeat):
            gc.collect()  # each round from a collected heap, as a first call's fresh process has
            times = _our_stages(step, params, tokens, inputs, trace=True)
            n_ops = times.pop("ops")
            gc.collect()
            times["jax"] = _jax_lower(step, params, tokens, inputs[2])
            best = {k: min(best.get(k, v), v) for k, v in times.items()}
        ms = {k: v * 1e3 for k, v in best.items()}
        print(f"{layers:>6} {n_ops:>6} | {ms['import']:>7.1f} {ms['propagate']:>9.1f} {ms['partition']:>9.1f} "
              f"{ms['lower']:>7.1f} ({ms['trace']:>5.1f}) | {ms['jax']:>13.1f} | "
              f"{ms['partition'] / ms['propagate']:>19.2f} {ms['lower'] / ms['propagate']:>16.2f} "
              f"{ms['lower'] / ms['jax']:>20.2f}", flush=True)
    print()


def first_call(layers: int = 4, repeat: int = 3) -> None:
    import json
    import subprocess
    runs = {"ours": [], "jax": []}
    for _ in range(repeat):
        for side in ("ours", "jax"):  # alternately: both see the same load on a shared machine
            cmd = [sys.executable, os.path.abspath(__file__), "--first-call-child", side,
                   "--first-call-layers", str(layers)] + (["--cpu"] if clock is time.process_time else [])
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"the {side} first-call process failed:\n{done.stderr[-3000:]}")
            runs[side].append(json.loads(done.stdout.strip().splitlines()[-1]))
    total = lambda st: sum(v for k, v in st.items() if k != "ops")
    ours, xla = min(runs["ours"], key=total), min(runs["jax"], key=total)
    unit = "CPU seconds" if clock is time.process_time else "seconds"
    print(f"first call, {layers}-layer d=128 step on a 2x4 mesh ({ours.pop('ops')} ops), {unit}, each side in a "
          f"fresh process, best of {repeat}")
    print("  spmdkit: " + ", ".join(f"{k} {v:.3f}" for k, v in ours.items()) + f"; total {total(ours):.2f}")
    print(f"  jax.jit: lower {xla['lower']:.3f}, compile {xla['compile']:.3f}; total {total(xla):.2f}")
    print(f"  ratio {total(ours) / total(xla):.2f}; before compile: ours {total(ours) - ours['compile']:.3f} "
          f"against {xla['lower']:.3f}; partition + lower {ours['partition'] + ours['lower']:.3f} against "
          f"propagate {ours['propagate']:.3f}\n", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, nargs="*", default=[4, 24, 200, 280], help="layer counts of the propagation table (280: about 100k ops)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-first-call", action="store_true")
    ap.add_argument("--first-call-layers", type=int, default=4)
    ap.add_argument("--first-call-child", choices=("ours", "jax"), help=argparse.SUPPRESS)
    ap.add_argument("--stages", type=int, nargs="*", default=[4, 24],
                    help="layer counts of the per-stage table (import, propagate, partition, lower); none: skip it")
    ap.add_argument("--profile", type=int, default=0)
    ap.add_argument("--memory", type=int, default=0, help="N: time and peak RSS of parse + propagate of the "
                    "N-layer step alone (280 layers: about 100k ops)")
    ap.add_argument("--cpu", action="store_true", help="time CPU seconds (all threads) instead of wall time")
    args = ap.parse_args()
    if args.cpu:
        global clock
        clock = time.process_time
    if args.profile:
        profile(args.profile)
        return
    if args.memory:
        memory(args.memory)
        return
    if args.first_call_child:
        import json
        print(json.dumps(first_call_child(args.first_call_child, args.first_call_layers)))
        return
    if not args.no_first_call:
        first_call(args.first_call_layers, args.repeat)
    if args.stages:
        stage_table(args.stages, args.repeat)
    propagation_table(args.layers, args.repeat)


if __name__ == "__main__":
    main()
