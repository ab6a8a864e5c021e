"""import_jax: a GPT block (forward and training step) and control flow come in whole.

Proofs: the program mirrors the jaxpr equation by equation (name, result types); evaluating
the imported program (also after print -> parse) gives exactly what JAX computes; params survive
the attribute encoding; argument shardings land on the arguments; bad input raises typed errors.
"""
from __future__ import annotations


import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.extend.core import Literal
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from child_process import child_env
from spmdkit.ir import (IRError, JaxImportError, evaluate, import_jax, parse, print_program,
                        verify_program)
from spmdkit.ir.jax_import import CALL_PRIMITIVES
from spmdkit.ir.types import TensorType, element_type
from spmdkit.models import gpt, mlp
from spmdkit.sharding import DimSharding, Mesh, TensorSharding


CFG = gpt.GPTConfig()


@pytest.fixture(scope="module")
def gpt_inputs():
    params = gpt.init_params(jax.random.PRNGKey(0), CFG)
    tokens, targets = gpt.example_batch(jax.random.PRNGKey(1), CFG)
    return params, tokens, targets


@pytest.fixture(scope="module")
def train_program(gpt_inputs):
    return import_jax(gpt.train_step, *gpt_inputs)


def _flat(*args):
    return jax.tree_util.tree_leaves(args)


def _tt(aval) -> TensorType:
    return TensorType(aval.shape, element_type(np.dtype(aval.dtype).name))


def _mirror(program, fn, jaxpr, seen):
    """Every equation of `jaxpr` is the next non-constant op of `fn`, with the same result types."""
    ops = [op for op in fn.body.ops if op.name not in ("stablehlo.constant", "func.return")]
    assert len(ops) == len(jaxpr.eqns), fn.name
    for op, eqn in zip(ops, jaxpr.eqns):
        prim = eqn.primitive.name
        seen.add(prim)
        assert [r.type for r in op.results] == [_tt(v.aval) for v in eqn.outvars], (fn.name, prim)
        if prim in CALL_PRIMITIVES:
            assert op.name == "func.call"
            sub = eqn.params.get("jaxpr", eqn.params.get("call_jaxpr"))
            _mirror(program, program.functions[op.attrs["callee"]], getattr(sub, "jaxpr", sub), seen)
        else:
            assert op.name == f"jax.{prim}"
    # constants: one per literal use and per constvar
    n_literals = sum(isinstance(a, Literal) for e in jaxpr.eqns for a in e.invars)
    n_literals += sum(isinstance(a, Literal) for a in jaxpr.outvars)
    n_consts = sum(op.name == "stablehlo.constant" for op in fn.body.ops)
    assert n_consts == n_literals + len(jaxpr.constvars)


def test_gpt_forward_mirrors_jaxpr(gpt_inputs):
    closed = jax.make_jaxpr(gpt.loss_fn)(*gpt_inputs)
    program = import_jax(gpt.loss_fn, *gpt_inputs)
    seen: set = set()
    _mirror(program, program.main, closed.jaxpr, seen)
    main = program.main
    assert [a.type for a in main.args] == [_tt(v.aval) for v in closed.jaxpr.invars]
    assert main.result_types == [TensorType((), "f32")]
    # the primitives engines.md lists for a GPT block forward pass, all handled
    assert {"dot_general", "gather", "reduce_max", "exp", "log", "rsqrt", "tanh", "integer_pow",
            "select_n", "iota", "split", "transpose", "reshape", "jit"} <= seen
    verify_program(program)


def test_gpt_train_step_mirrors_jaxpr_and_names_args(gpt_inputs, train_program):
    closed = jax.make_jaxpr(gpt.train_step)(*gpt_inputs)
    seen: set = set()
    _mirror(train_program, train_program.main, closed.jaxpr, seen)
    assert {"scatter-add", "add_any", "concatenate", "transpose"} <= seen
    names = [a.name for a in train_program.main.args]
    assert names[-2:] == ["tokens", "targets"] and "params.wte" in names
    assert all(fn.visibility == "private" for name, fn in train_program.functions.items() if name != "main")
    verify_program(train_program)


def test_gpt_train_step_evaluates_exactly(gpt_inputs, train_program):
    got = jax.jit(lambda *a: evaluate(train_program, *a))(*_flat(*gpt_inputs))
    want = jax.tree_util.tree_leaves(jax.jit(gpt.train_step)(*gpt_inputs))
    assert len(got) == len(want) == len(gpt_inputs[0]) + 1
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_gpt_forward_survives_print_and_parse(gpt_inputs):
    program = import_jax(gpt.loss_fn, *gpt_inputs)
    text = print_program(program)
    again = parse(text, strict_ops=False)
    assert print_program(again) == text
    assert '"jax.dot_general"' in text and "func.func private @tril" in text and "call @" in text
    got = jax.jit(lambda *a: evaluate(again, *a))(*_flat(*gpt_inputs))
    np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(jax.jit(gpt.loss_fn)(*gpt_inputs)))


def test_inline_calls_gives_one_function_with_the_same_values(gpt_inputs):
    program = import_jax(gpt.loss_fn, *gpt_inputs, inline_calls=True)
    assert list(program.functions) == ["main"]
    assert not any(op.name == "func.call" for op in program.walk())
    got = jax.jit(lambda *a: evaluate(program, *a))(*_flat(*gpt_inputs))
    np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(jax.jit(gpt.loss_fn)(*gpt_inputs)))


def test_mlp_custom_jvp_becomes_a_call_and_evaluates():
    params = mlp.init_params(jax.random.PRNGKey(2))
    x, y = mlp.example_batch(jax.random.PRNGKey(3))
    program = import_jax(mlp.train_step, params, x, y)
    closed = jax.make_jaxpr(mlp.train_step)(params, x, y)
    _mirror(program, program.main, closed.jaxpr, set())
    got = jax.jit(lambda *a: evaluate(program, *a))(*_flat(params, x, y))
    for g, w in zip(got, jax.tree_util.tree_leaves(jax.jit(mlp.train_step)(params, x, y))):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_shared_jaxpr_becomes_one_function():
    inner = jax.jit(lambda a: jnp.sin(a) * 2.0)
    program = import_jax(lambda a: inner(a) + inner(a + 1.0), jnp.ones((3,)))
    calls = [op for op in program.walk() if op.name == "func.call"]
    assert len(calls) == 2 and calls[0].attrs["callee"] == calls[1].attrs["callee"]
    assert len(program.functions) == 2


# -- control flow, constraints, shard_map (traced on an abstract mesh: no devices needed) -----
MESH = AbstractMesh((2, 2), ("a", "b"), axis_types=(AxisType.Auto,) * 2)


def _control_flow(x, constrain=True):
    if constrain:  # a constraint on an abstract mesh traces but cannot run eagerly; values are the same
        x = jax.lax.with_sharding_constraint(x, NamedSharding(MESH, P("a", P.UNCONSTRAINED)))
    n, y = jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0 + x), (0, x))
    return jax.lax.cond(n > 1, lambda v: v + 1.0, lambda v: v - 1.0, y)


def test_while_cond_and_constraint_import_and_evaluate():
    x = jnp.arange(16.0).reshape(4, 4)
    program = import_jax(_control_flow, x)
    names = [op.name for op in program.main.body.ops]
    assert "sdy.sharding_constraint" in names and "stablehlo.while" in names and "stablehlo.case" in names
    constraint = next(op for op in program.walk() if op.name == "sdy.sharding_constraint")
    assert str(constraint.attrs["sharding"]) == '#sdy.sharding<@mesh, [{"a"}, {?}]>'
    assert program.meshes["mesh"] == Mesh({"a": 2, "b": 2})
    loop = next(op for op in program.walk() if op.name == "stablehlo.while")
    assert [r.type for r in loop.results] == [v.type for v in loop.operands]
    assert [len(r.block.args) for r in loop.regions] == [2, 2]
    verify_program(program)
    np.testing.assert_array_equal(np.asarray(evaluate(program, x)[0]), np.asarray(_control_flow(x, False)))
    again = parse(print_program(program), strict_ops=False)
    np.testing.assert_array_equal(np.asarray(evaluate(again, x)[0]), np.asarray(_control_flow(x, False)))


def test_shard_map_becomes_manual_computation():
    body = lambda t: jax.lax.psum(t * 2.0, "b")  # noqa: E731
    f = jax.shard_map(body, mesh=MESH, in_specs=P("a", "b"), out_specs=P("a"))
    program = import_jax(f, jnp.ones((8, 8)))
    (mc,) = [op for op in program.walk() if op.name == "sdy.manual_computation"]
    assert mc.attrs["manual_axes"] == ["a", "b"]
    assert [str(s) for s in mc.attrs["in_shardings"]] == ['#sdy.sharding<@mesh, [{"a"}, {"b"}]>']
    # the manual axis "b" that the out spec leaves out is explicitly replicated (invariant 2)
    assert [str(s) for s in mc.attrs["out_shardings"]] == ['#sdy.sharding<@mesh, [{"a"}, {}], replicated={"b"}>']
    assert mc.regions[0].block.args[0].type == TensorType((4, 4), "f32")
    assert mc.results[0].type == TensorType((8, 4), "f32")
    assert mc.regions[0].block.ops[-1].name == "sdy.return"
    verify_program(program)
    assert "sdy.manual_computation" in print_program(program)


def test_shard_map_evaluates_on_four_devices(tmp_path):
    """Evaluation runs the body under jax.shard_map: needs 4 devices, so in a fresh process."""
    import subprocess
    import sys
    import textwrap
    script = textwrap.dedent("""
        import jax, numpy as np
        jax.config.update("jax_num_cpu_devices", 4)
        import jax.numpy as jnp
        from jax.sharding import PartitionSpec as P
        from spmdkit.ir import import_jax, evaluate, parse, print_program
        mesh = jax.make_mesh((2, 2), ("a", "b"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
        f = jax.shard_map(lambda t: jax.lax.psum(t * 2.0, "b") + jax.lax.axis_index("a"), mesh=mesh,
                          in_specs=P("a", "b"), out_specs=P("a"))
        x = jnp.arange(64.0).reshape(8, 8)
        program = parse(print_program(import_jax(f, x)), strict_ops=False)
        np.testing.assert_array_equal(np.asarray(evaluate(program, x)[0]), np.asarray(f(x)))
        # partly manual: "b" stays a free axis
        g = jax.shard_map(lambda t: jax.lax.psum(t, "a") * 2, mesh=mesh, in_specs=P("a"), out_specs=P(),
                          axis_names={"a"})
        program = parse(print_program(import_jax(g, x)), strict_ops=False)
        (mc,) = [op for op in program.walk() if op.name == "sdy.manual_computation"]
        assert mc.attrs["manual_axes"] == ["a"] and mc.regions[0].block.args[0].type.shape == (4, 8)
        np.testing.assert_array_equal(np.asarray(evaluate(program, x)[0]), np.asarray(g(x)))
        print("OK")
    """)
    env = child_env()
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0 and "OK" in out.stdout, out.stderr[-2000:]


# -- argument shardings ----------------------------------------------------------------------
def test_arg_shardings_land_on_args(gpt_inputs):
    params, tokens, targets = gpt_inputs
    batch = TensorSharding("m", [DimSharding(["x"]), DimSharding([])])
    wte = TensorSharding("m", [DimSharding([]), DimSharding(["y"], is_closed=False)])
    shardings = ({k: (wte if k == "wte" else None) for k in params}, batch, '#sdy.sharding<@m, [{"x"}, {}]>')
    program = import_jax(gpt.loss_fn, params, tokens, targets, arg_shardings=shardings,
                         meshes={"m": Mesh({"x": 2, "y": 2})})
    by_name = {a.name: a.sharding for a in program.main.args}
    assert by_name["params.wte"] is wte and by_name["tokens"] is batch
    assert str(by_name["targets"]) == '#sdy.sharding<@m, [{"x"}, {}]>'
    assert sum(s is not None for s in by_name.values()) == 3
    assert '{sdy.sharding = #sdy.sharding<@m, [{}, {"y", ?}]>}' in print_program(program)


def test_named_sharding_args_register_their_mesh():
    x = jnp.ones((4, 6))
    program = import_jax(lambda a: a * 2, x, arg_shardings=[NamedSharding(MESH, P(None, ("a", "b")))])
    assert str(program.main.args[0].sharding) == '#sdy.sharding<@mesh, [{}, {"a", "b"}]>'
    assert program.meshes == {"mesh": Mesh({"a": 2, "b": 2})}


def test_a_key_arrays_sharding_of_its_own_rank_gets_its_key_data_dims_replicated():
    """A PRNG key array is held as its uint32 data (one more dim); a sharding written for the key
    array (its rank, as jax.jit's in_shardings is) covers the key data whole, for args and results."""
    keys = jax.random.split(jax.random.key(0), 8)
    meshes = {"m": Mesh({"x": 2})}
    program = import_jax(lambda k: jax.vmap(lambda k: jax.random.fold_in(k, 1))(k), keys, meshes=meshes,
                         arg_shardings=['#sdy.sharding<@m, [{"x"}]>'], result_shardings=['#sdy.sharding<@m, [{"x"}]>'])
    assert program.main.args[0].type == TensorType((8, 2), element_type("uint32"))
    assert str(program.main.args[0].sharding) == '#sdy.sharding<@m, [{"x"}, {}]>'
    assert str(program.main.result_shardings[0]) == '#sdy.sharding<@m, [{"x"}, {}]>'
    with pytest.raises(JaxImportError, match="rank"):  # neither the key's rank nor its data's
        import_jax(lambda k: k, keys, meshes=meshes, arg_shardings=['#sdy.sharding<@m, [{"x"}, {}, {}]>'])


@pytest.mark.parametrize("sharding, meshes, match", [
    ('#sdy.sharding<@nope, [{"x"}, {}]>', {"m": Mesh({"x": 2})}, "@nope"),
    ('#sdy.sharding<@m, [{"z"}, {}]>', {"m": Mesh({"x": 2})}, "z"),
    ('#sdy.sharding<@m, [{"x"}]>', {"m": Mesh({"x": 2})}, "rank"),
    ('#sdy.sharding<@m, [{"x"}, {"x"}]>', {"m": Mesh({"x": 2})}, "x"),
])
def test_bad_arg_sharding_is_a_typed_error_naming_the_argument(sharding, meshes, match):
    with pytest.raises(JaxImportError, match=match) as info:
        import_jax(lambda a: a + 1, jnp.ones((4, 4)), arg_shardings=[sharding], meshes=meshes)
    assert "argument 0" in str(info.value)


def test_arg_shardings_count_must_match():
    with pytest.raises(JaxImportError, match="2 leaves.*1 array arguments"):
        import_jax(lambda a: a + 1, jnp.ones((4,)), arg_shardings=[[None], [None]])
    with pytest.raises(TypeError, match="TensorSharding"):
        import_jax(lambda a: a + 1, jnp.ones((4,)), arg_shardings=[3])


# -- bad input ---------------------------------------------------------------------------------
def test_unsupported_primitives_are_named():
    def custom_reduce(x):  # a reduction whose body is no named one: its jaxpr param is not opened
        return jax.lax.reduce(x, 0.0, lambda a, b: a + b * b, (0,))
    with pytest.raises(JaxImportError, match="'reduce' carries a sub-program") as info:
        import_jax(custom_reduce, jnp.ones(3))
    assert isinstance(info.value, (IRError, ValueError)) and info.value.op == "jax.reduce"

    def callback(x):
        return jax.pure_callback(lambda a: np.asarray(a) * 2, jax.ShapeDtypeStruct((3,), jnp.float32), x)
    with pytest.raises(JaxImportError, match=r"host callback \(pure_callback\) computes its results in Python") as info:
        import_jax(callback, jnp.ones(3))
    assert info.value.op == "jax.pure_callback"


def test_custom_linear_solve_is_its_solve():
    """custom_linear_solve (jnp.linalg.solve, inv) imports as its `solve` jaxpr, inlined."""
    def solve(b):
        return jax.lax.custom_linear_solve(lambda x: 2.0 * x, b, solve=lambda mv, c: c / 2.0 + 0.0 * mv(c))
    program = import_jax(solve, jnp.arange(3.0), inline_calls=True)
    assert not any(op.name == "jax.custom_linear_solve" for op in program.main.walk())
    np.testing.assert_allclose(np.asarray(evaluate(program, np.arange(3.0, dtype=np.float32))[0]), np.arange(3.0) / 2)
    a = np.array([[3.0, 1.0], [1.0, 2.0]], np.float32)
    program = import_jax(lambda a: jnp.linalg.inv(a), a, inline_calls=True)
    np.testing.assert_allclose(np.asarray(evaluate(program, a)[0]), np.linalg.inv(a), rtol=1e-5)


def test_tracing_failure_is_a_typed_error():
    with pytest.raises(JaxImportError, match="tracing"):
        import_jax(lambda a, b: a @ b, jnp.ones((2, 3)), jnp.ones((4, 5)))
    with pytest.raises(TypeError, match="callable"):
        import_jax(42, jnp.ones(2))


def test_gpt_train_step_prints_and_parses_to_a_fixed_point(train_program):
    text = print_program(train_program)
    again = parse(text, strict_ops=False)
    assert print_program(again) == text
    assert [op.name for op in again.walk()] == [op.name for op in train_program.walk()]
    assert list(again.functions) == list(train_program.functions)
    verify_program(again)


def test_printed_program_evaluates_in_a_fresh_process(tmp_path, gpt_inputs):
    """Text alone is enough: a process that never traced the model finds every primitive by name."""
    import subprocess
    import sys
    program = import_jax(gpt.loss_fn, *gpt_inputs)
    (tmp_path / "loss.mlir").write_text(print_program(program))
    np.savez(tmp_path / "args.npz", *[np.asarray(a) for a in _flat(*gpt_inputs)])
    want = float(jax.jit(gpt.loss_fn)(*gpt_inputs))
    script = (f"import jax, numpy as np\n"
              f"from spmdkit.ir import load, evaluate\n"
              f"program = load({str(tmp_path / 'loss.mlir')!r}, strict_ops=False)\n"
              f"args = np.load({str(tmp_path / 'args.npz')!r})\n"
              f"leaves = [args[f'arr_{{i}}'] for i in range(len(args.files))]\n"
              f"print(repr(float(jax.jit(lambda *a: evaluate(program, *a)[0])(*leaves))))\n")
    env = child_env()
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert float(out.stdout.strip().splitlines()[-1]) == want
