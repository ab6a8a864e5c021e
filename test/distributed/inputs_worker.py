"""Runs parallelize on arguments of every placement, on steps with layout constraints, on a padded
1-D convolution, and prints programs back through MLIR's parser, on 8 virtual CPU devices; one
JSON line per case. Started by test_dist_inputs.py in a fresh process."""
import json
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

from spmdkit.distributed import ProcessMesh, Replicate, Shard, parallelize, shard_tensor  # noqa: E402

MESH = ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
R = Replicate()


def _diff(a, b) -> float:
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    return max(float(np.max(np.abs(np.asarray(x, np.float64) - np.asarray(y, np.float64)), initial=0.0))
               for x, y in zip(la, lb))


def _loss(w, x):
    return jnp.mean(jnp.tanh(x @ w["a"]) @ w["b"] ** 2)


def sgd_step(w, x):
    value, grads = jax.value_and_grad(_loss)(w, x)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, w, grads), value


def _params():
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
    return ({"a": np.asarray(jax.random.normal(k1, (8, 16))), "b": np.asarray(jax.random.normal(k2, (16, 4)))},
            np.asarray(jax.random.normal(k3, (8, 8))))


def first_call_case(kind: str) -> dict:
    """The first call of a step whose placements are all None gets arrays laid out by
    shard_tensor / jax.device_put / an explicit-axes mesh / the host: the arrays' own placements
    are the step's (host arrays: replicated), and the result equals one device."""
    w, x = _params()
    jm = MESH.jax_mesh()
    if kind == "shard_tensor":
        args = ({"a": shard_tensor(w["a"], MESH, [R, Shard(1)]), "b": shard_tensor(w["b"], MESH, [R, Shard(0)])},
                shard_tensor(x, MESH, [Shard(0), R]))
    elif kind == "device_put":
        args = jax.device_put((w, x), ({"a": NamedSharding(jm, P(None, "mp")), "b": NamedSharding(jm, P("mp"))},
                                       NamedSharding(jm, P("dp"))))
    elif kind == "explicit_mesh":  # JAX's sharding-in-types: shardings appear in every traced op
        em = jax.make_mesh((2, 2), ("dp", "mp"), axis_types=(AxisType.Explicit,) * 2, devices=jax.devices()[:4])
        args = jax.device_put((w, x), ({"a": NamedSharding(em, P(None, "mp")), "b": NamedSharding(em, P("mp"))},
                                       NamedSharding(em, P("dp"))))
    else:
        args = (w, x)
    step = parallelize(sgd_step, MESH, (None, None))
    if kind == "abstract":  # traced on ShapeDtypeStructs that carry shardings, then called with host arrays
        jm = MESH.jax_mesh()
        specs = ({"a": jax.ShapeDtypeStruct((8, 16), np.float32, sharding=NamedSharding(jm, P(None, "mp"))),
                  "b": jax.ShapeDtypeStruct((16, 4), np.float32, sharding=NamedSharding(jm, P("mp")))},
                 jax.ShapeDtypeStruct((8, 8), np.float32, sharding=NamedSharding(jm, P("dp"))))
        step.trace(*specs)
    moved = step.moved_args(*args) if kind == "abstract" else None
    out = step(*args)
    return {"case": f"first_{kind}", "diff": _diff(out, jax.jit(sgd_step)(w, x)),
            "shardings": {k: repr(v) for k, v in step.in_shardings.items()},
            "moved": moved if moved is not None else step.moved_args(*args)}


def previous_outputs_case() -> dict:
    """Steps fed their own outputs (a step's results as the next one's arguments) for 4 steps;
    then a call with arrays laid out otherwise (other placements, other devices) is moved once."""
    w, x = _params()
    pl = {"a": [R, Shard(1)], "b": [R, Shard(0)]}
    step = parallelize(sgd_step, MESH, (pl, [Shard(0), R]), out_placements=(pl, None))
    ref = jax.jit(sgd_step)
    ours, want, diffs, moved = (w, x), (w, x), [], []
    for _ in range(4):
        out, expect = step(*ours), ref(*want)
        diffs.append(_diff(out, expect))
        ours, want = (out[0], ours[1]), (expect[0], x)
        moved.append(step.moved_args(*ours))
        ours = (ours[0], shard_tensor(x, MESH, [Shard(0), R]))
    other = jax.sharding.Mesh(np.array(jax.devices()[4:8]).reshape(2, 2), ("dp", "mp"))
    elsewhere = (jax.device_put(ours[0], NamedSharding(other, P())), shard_tensor(x, MESH, [R, Shard(1)]))
    moved_elsewhere = step.moved_args(*elsewhere)
    out = step(*elsewhere)
    return {"case": "previous_outputs", "diffs": diffs, "moved": moved, "moved_elsewhere": moved_elsewhere,
            "elsewhere_diff": _diff(out, ref(*jax.device_get(elsewhere)))}


def unmovable_case() -> dict:
    """An argument that cannot be laid out as traced (a deleted buffer, as after donation): a
    DistError naming the leaf, not JAX's error from inside the call."""
    from spmdkit.distributed import DistError
    w, x = _params()
    step = parallelize(sgd_step, MESH, (None, [Shard(0), R]), example_args=(w, x))
    gone = jax.device_put(w["b"])
    gone.delete()
    out = {"case": "unmovable", "error_type": None}
    try:
        step({"a": w["a"], "b": gone}, x)
    except DistError as e:
        out.update(error_type="DistError", value=e.value, message=str(e)[:300])
    # the same with donation (a moved donated argument is copied first: the copy cannot be made)
    donating = parallelize(sgd_step, MESH, (None, [Shard(0), R]), example_args=(w, x), donate_argnums=0)
    try:
        donating({"a": w["a"], "b": gone}, x)
        out["donated_error"] = None
    except Exception as e:  # noqa: BLE001
        out["donated_error"] = f"{type(e).__name__}: value {getattr(e, 'value', None)}"
    return out


def constraint_case(kind: str, strategy: str = "propagate") -> dict:
    """A layout constraint inside the step (with_sharding_constraint on the mesh; jax.sharding.reshard,
    which JAX takes only on an explicit-axes mesh of the same devices): the constrained value is
    laid out as asked, and the result equals one device."""
    em = jax.make_mesh((2, 2), ("dp", "mp"), axis_types=(AxisType.Explicit,) * 2, devices=jax.devices()[:4])
    constrain = {"wsc": lambda v: jax.lax.with_sharding_constraint(v, NamedSharding(MESH.jax_mesh(), P(None, "mp"))),
                 "reshard": lambda v: jax.sharding.reshard(v, NamedSharding(em, P(None, "mp"))),
                 "none": lambda v: v}[kind]

    def f(x, w, constrain=constrain):
        h = constrain(jnp.tanh(x @ w))
        return (h * h).sum(0)
    x, w = np.asarray(jax.random.normal(jax.random.PRNGKey(1), (8, 8))), np.ones((8, 8), np.float32) / 8
    step = parallelize(f, MESH, ([Shard(0), R], None), strategy=strategy)
    out = step(x, w)
    layouts = [str(s.result_layouts[0].dims) for s in step.partitioned.steps
               if getattr(s, "op", None) is not None and s.op.name == "sdy.sharding_constraint"]
    want = jax.jit(lambda x, w: f(x, w, lambda v: v))(x, w)  # a constraint changes no value
    name = f"constraint_{kind}" + ("" if strategy == "propagate" else f"_{strategy}")
    return {"case": name, "diff": _diff(out, want), "constraint_layouts": layouts,
            "collectives": step.plan.collectives, "out": repr(step.out_shardings)}


def conv_case() -> dict:
    """A 1-D convolution with real padding ((1, 2) on the spatial dim), batch split over dp, the
    kernel replicated; loss and gradients equal one device over 3 SGD steps."""
    kx, kk, ky = jax.random.split(jax.random.PRNGKey(3), 3)
    x = jax.random.normal(kx, (4, 3, 10))
    k = 0.3 * jax.random.normal(kk, (5, 3, 3))
    y = jax.random.normal(ky, (4, 5, 11))

    def loss(k, x, y):
        out = jax.lax.conv_general_dilated(x, k, (1,), [(1, 2)], dimension_numbers=("NCH", "OIH", "NCH"))
        return jnp.mean((jnp.tanh(out) - y) ** 2)

    def step(k, x, y):
        value, g = jax.value_and_grad(loss)(k, x, y)
        return k - 0.1 * g, value, g
    ours = parallelize(step, MESH, (None, [Shard(0), R], [Shard(0), R]))
    ref = jax.jit(step)
    a, b, diffs, losses = k, k, [], []
    for _ in range(3):
        out, want = ours(a, x, y), ref(b, x, y)
        diffs.append(_diff(out, want))
        losses.append(float(want[1]))
        a, b = out[0], want[0]
    return {"case": "conv", "diffs": diffs, "losses": losses}


def _value_shardings(program) -> list:
    """The sharding of every argument, op result and function result, in program order."""
    out = []
    for fn in program.functions.values():
        out += [a.sharding for a in fn.body.args] + list(fn.result_shardings)
        out += [r.sharding for op in fn.body.ops for r in op.results]
    return out


def print_round_trip_case() -> dict:
    """Every program of the example models (and a vocab-split cross entropy completed with
    unreduced_max values) printed and parsed by MLIR: the parsed program prints the same text and
    carries the same sharding on every value (reduce types included)."""
    from spmdkit.examples.optim import OPTIMIZERS, state_placements
    from spmdkit.examples.setups import SETUPS, mesh_of
    from spmdkit.examples.train import make_step
    from spmdkit.ir import parse, print_program
    programs = {}
    # both models, both strategies, both meshes (not every combination: each GPT trace costs seconds)
    for model, mesh_key, strategy in (("mlp", "2x2", "propagate"), ("mlp", "2x2x2", "complete"),
                                      ("gpt", "2x2", "complete")):
        setup = SETUPS[model](mesh_key)
        init, update = OPTIMIZERS["adamw"](0.01)
        pp, bp = setup.param_placements, setup.batch_placements
        args = (setup.params, init(setup.params), *setup.batch)
        placements = (pp, state_placements("adamw", pp), bp, bp)
        step = parallelize(make_step(setup.loss_fn, update), mesh_of(mesh_key), placements,
                           strategy=strategy, example_args=args)
        programs[f"{model}-{mesh_key}-{strategy}"] = step.program

    def vocab_loss(w, x, y):
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(x @ w), y[:, None], 1))
    w, x, y = np.ones((8, 16), np.float32), np.ones((4, 8), np.float32), np.arange(4) % 16
    step = parallelize(jax.value_and_grad(vocab_loss), MESH, ([R, Shard(1)], [Shard(0), R], [Shard(0), R]),
                       strategy="complete", example_args=(w, x, y))
    programs["vocab_ce-2x2-complete"] = step.program
    result = {}
    for name, program in programs.items():
        text = print_program(program)
        back = parse(text)
        same_text = print_program(back) == text
        same_shardings = _value_shardings(back) == _value_shardings(program)
        result[name] = "equal" if same_text and same_shardings else f"text {same_text}, shardings {same_shardings}"
    max_kinds = any(s is not None and dict(s.reduce_types).get(a) == "max" for s in _value_shardings(
        programs["vocab_ce-2x2-complete"]) for a in (s.unreduced if s is not None else ()))
    return {"case": "print_round_trip", "programs": result, "has_unreduced_max": max_kinds}


def donation_case() -> dict:
    """donate_argnums=(0,): the params passed in are deleted by the call (their buffers become the
    new params: XLA aliases them), the data argument is not, and four steps fed their own outputs
    equal one device. Without it nothing is aliased."""
    w, x = _params()
    pl = {"a": [R, Shard(1)], "b": [R, Shard(0)]}
    xs = shard_tensor(x, MESH, [Shard(0), R])
    donating = parallelize(sgd_step, MESH, (pl, [Shard(0), R]), out_placements=(pl, None), donate_argnums=0)
    keeping = parallelize(sgd_step, MESH, (pl, [Shard(0), R]), out_placements=(pl, None))
    ref = jax.jit(sgd_step)
    params = {"a": shard_tensor(w["a"], MESH, pl["a"]), "b": shard_tensor(w["b"], MESH, pl["b"])}
    first = params
    want, diffs = w, []
    for _ in range(4):
        params, loss = donating(params, xs)
        want, expect_loss = ref(want, x)
        diffs.append(max(_diff(params, want), _diff(loss, expect_loss)))
    # an argument that must first be moved (here: on one device) is copied, and the copy donated:
    # the caller's array stays valid even where the move would keep its buffer
    # (b replicated: device 0's block is the whole array, which jax.device_put would share)
    whole_b = dict(pl, b=[R, R])
    replicated = parallelize(sgd_step, MESH, (whole_b, [Shard(0), R]), out_placements=(whole_b, None), donate_argnums=0)
    single = {"a": jax.device_put(w["a"], jax.devices()[0]), "b": jax.device_put(w["b"], jax.devices()[0])}
    moved_out, _ = replicated(single, xs)
    moved_kept = not any(single[k].is_deleted() for k in single) and _diff(single, w) == 0.0
    moved_diff = _diff(moved_out, ref(w, x)[0])
    alias = lambda p: p.lower(params, xs).compile().memory_analysis().alias_size_in_bytes
    errors = {}
    for bad in ("x", -1, 5, [0, 1.5]):
        try:
            parallelize(sgd_step, MESH, (pl, None), donate_argnums=bad)(params, xs)
            errors[repr(bad)] = None
        except Exception as e:  # noqa: BLE001
            errors[repr(bad)] = f"{type(e).__name__}: {e}"[:200]
    return {"case": "donation", "diffs": diffs, "first_deleted": [first[k].is_deleted() for k in ("a", "b")],
            "moved_kept": moved_kept, "moved_diff": moved_diff,
            "data_deleted": xs.is_deleted(), "alias_bytes": alias(donating), "alias_bytes_keeping": alias(keeping),
            "errors": errors}


def _flagged_step(w, x, train, reduce):
    h = x @ w
    if train:  # Python control flow on a static argument
        h = jnp.tanh(h)
    return (h.sum() if reduce == "sum" else h.mean()), w * 2


def static_case() -> dict:
    """static_argnums=(2, 3): a Python flag and a string reach the step as they are; each new
    value traces again (equal to jax.jit with the same static_argnums), a value seen before
    reuses nothing stale; in_placements per traced argument or with None at the static ones;
    donated and static positions mix. Bad uses raise naming the argument."""
    w = np.arange(64.0, dtype=np.float32).reshape(8, 8) / 64
    x = np.ones((4, 8), np.float32)
    ref = jax.jit(_flagged_step, static_argnums=(2, 3))
    short = parallelize(_flagged_step, MESH, ([R, Shard(1)], [Shard(0), R]), static_argnums=(2, 3))
    full = parallelize(_flagged_step, MESH, ([R, Shard(1)], [Shard(0), R], None, None), static_argnums=[3, 2])
    diffs, programs, seen = [], [], []
    for flags in [(True, "sum"), (False, "sum"), (True, "mean"), (True, "sum"), (False, "sum")]:
        for step in (short, full):
            diffs.append(_diff(step(w, x, *flags), ref(w, x, *flags)))
        programs.append(sum(1 for op in short.program.main.body.ops if op.name == "jax.tanh"))
        seen.append(id(short.program))
    # a smaller last batch: its own trace; the full batch after it takes its kept program again
    small = short(w, x[:2], True, "sum")
    again = id(short.program)
    short(w, x, True, "sum")
    donated = parallelize(_flagged_step, MESH, ([R, Shard(1)], [Shard(0), R]), static_argnums=(3, 2), donate_argnums=0)
    wd = shard_tensor(w, MESH, [R, Shard(1)])
    out = donated(wd, x, False, "sum")
    errors = {}
    bad = {"placement_at_static": lambda: parallelize(_flagged_step, MESH, ([R, Shard(1)], None, [R, R], None),
                                                      static_argnums=(2, 3))(w, x, True, "sum"),
           "unhashable": lambda: short(w, x, True, ["sum"]),
           "flag_traced": lambda: parallelize(_flagged_step, MESH, (None, None, None, None))(w, x, True, "sum"),
           "unhashable_leaf": lambda: parallelize(_flagged_step, MESH, (None, None, None, None),
                                                  static_argnums=2)(w, x, True, {"how": bytearray(b"sum")}),
           "past_the_end": lambda: parallelize(_flagged_step, MESH, (None, None), static_argnums=5)(w, x, True, "sum"),
           "static_and_donated": lambda: parallelize(_flagged_step, MESH, (None, None), static_argnums=0,
                                                     donate_argnums=(0,))}
    for name, call in bad.items():
        try:
            call()
            errors[name] = None
        except Exception as e:  # noqa: BLE001
            errors[name] = f"{type(e).__name__}: {e}"[:300]
    # a string anywhere in the arguments is passed as it is without static_argnums (as
    # eqx.filter_jit passes non-array leaves); only the flag is named static here
    only_flag = parallelize(_flagged_step, MESH, ([R, Shard(1)], [Shard(0), R], None, None), static_argnums=2)
    string_diffs = [_diff(only_flag(w, x, False, how), ref(w, x, False, how)) for how in ("sum", "mean", "sum")]
    return {"case": "static", "diffs": diffs, "string_diffs": string_diffs, "tanh_ops": programs,
            "kept": [seen.index(i) for i in seen] + [seen.index(id(short.program))],
            "small_diff": _diff(small, ref(w, x[:2], True, "sum")), "small_new": again not in seen, "donated_deleted": wd.is_deleted(),
            "donated_diff": _diff(out, ref(w, x, False, "sum")), "labels": sorted(short.in_shardings),
            "errors": errors}


def explicit_context_case() -> dict:
    """A step written for JAX's explicit sharding (`jax.set_mesh` of an Explicit-axes mesh, an
    einsum with out_sharding, jax.sharding.reshard), called inside that context: it runs (our
    shard_map runs outside the context mesh, which JAX would hold against it), its results come
    back on the context's mesh (the same blocks), so explicit-mode code uses them on, and a
    second step takes them in place."""
    from jax.sharding import reshard
    em = jax.make_mesh((2, 2), ("dp", "mp"), axis_types=(AxisType.Explicit,) * 2, devices=jax.devices()[:4])
    w, x = _params()

    def step(w, x):
        def loss(w):
            h = jnp.tanh(jnp.matmul(x, w["a"]))
            out = reshard(jnp.einsum("bh,hd->bd", h, w["b"], out_sharding=P("dp", None)), P("dp", None))
            return jnp.mean(out ** 2)
        value, grads = jax.value_and_grad(loss)(w)
        return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, w, grads), value
    with jax.set_mesh(em):
        args = jax.device_put((w, x), ({"a": P(None, "mp"), "b": P("mp")}, P("dp")))
        want = jax.jit(step)(*args)
        ours = parallelize(step, MESH, (None, None))
        got = ours(*args)
        same_mesh = all(leaf.sharding.mesh == em for leaf in jax.tree_util.tree_leaves(got))
        used_on = float((got[0]["a"] * 2 + args[0]["a"]).sum())  # explicit-mode code reads them
        moved = ours.moved_args(got[0], args[1])
        again, want_again = ours(got[0], args[1]), jax.jit(step)(want[0], args[1])
    return {"case": "explicit_context", "diff": max(_diff(got, want), _diff(again, want_again)),
            "same_mesh": same_mesh, "used_on": used_on, "moved": moved}


CASES = {"first_shard_tensor": lambda: first_call_case("shard_tensor"),
         "first_device_put": lambda: first_call_case("device_put"),
         "first_explicit_mesh": lambda: first_call_case("explicit_mesh"),
         "first_host": lambda: first_call_case("host"), "first_abstract": lambda: first_call_case("abstract"),
         "previous_outputs": previous_outputs_case,
         "constraint_wsc": lambda: constraint_case("wsc"), "constraint_reshard": lambda: constraint_case("reshard"),
         "constraint_none": lambda: constraint_case("none"),
         "constraint_wsc_complete": lambda: constraint_case("wsc", "complete"),
         "unmovable": unmovable_case, "conv": conv_case, "print_round_trip": print_round_trip_case,
         "donation": donation_case, "static": static_case, "explicit_context": explicit_context_case}

if __name__ == "__main__":
    for name in sys.argv[1:]:
        try:
            print(json.dumps(CASES[name]()), flush=True)
        except Exception as e:  # report the case's failure as its row, keep going
            print(json.dumps({"case": name, "error": f"{type(e).__name__}: {e}"[:3000]}), flush=True)
