"""evaluate(..., apply_shardings=True): the program's shardings become layout constraints that XLA
sees (exactly those, in the lowered text), and the values stay what JAX computes."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import jax.numpy as jnp
import numpy as np
import pytest

from child_process import child_env
from spmdkit.ir import EvaluateError, evaluate, import_jax
from spmdkit.sharding import Mesh


SCRIPT = textwrap.dedent("""
    import jax, numpy as np
    jax.config.update("jax_num_cpu_devices", 4)
    from spmdkit.ir import import_jax, evaluate, parse, print_program
    from spmdkit.models import mlp
    from spmdkit.sharding import Mesh
    params = mlp.init_params(jax.random.PRNGKey(0))
    x, y = mlp.example_batch(jax.random.PRNGKey(1))
    batch = '#sdy.sharding<@m, [{"a"}, {}]>'
    sh = ({"w1": '#sdy.sharding<@m, [{}, {"b"}]>', "b1": None, "w2": '#sdy.sharding<@m, [{"b"}, {}]>', "b2": None},
          batch, batch)
    program = import_jax(mlp.train_step, params, x, y, arg_shardings=sh, meshes={"m": Mesh({"a": 2, "b": 2})})
    program = parse(print_program(program), strict_ops=False)
    leaves = jax.tree_util.tree_leaves((params, x, y))
    run = jax.jit(lambda *a: evaluate(program, *a, apply_shardings=True))
    lines = [l for l in run.lower(*leaves).as_text().splitlines() if "sdy.sharding_constraint" in l]
    got = sorted(l.split("<", 1)[1].split(">", 1)[0] + " " + l.rsplit(":", 1)[1].strip() for l in lines)
    assert got == sorted(['@mesh, [{}, {"b"}] tensor<16x32xf32>', '@mesh, [{"b"}, {}] tensor<32x8xf32>',
                          '@mesh, [{"a"}, {}] tensor<8x16xf32>', '@mesh, [{"a"}, {}] tensor<8x8xf32>']), got
    plain = jax.jit(lambda *a: evaluate(program, *a)).lower(*leaves).as_text()
    assert "sdy.sharding_constraint" not in plain
    want = jax.tree_util.tree_leaves(jax.jit(mlp.train_step)(params, x, y))
    for g, w in zip(run(*leaves), want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
    print("OK")
""")


def test_shardings_reach_xla_and_values_are_unchanged():
    env = child_env()
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0 and "OK" in out.stdout, out.stderr[-3000:]


def test_sub_axis_shardings_cannot_be_applied():
    program = import_jax(lambda a: a * 2.0, jnp.ones((4, 4)),
                         arg_shardings=['#sdy.sharding<@m, [{"x":(1)2}, {}]>'], meshes={"m": Mesh({"x": 4})})
    with pytest.raises(EvaluateError, match="sub-axis"):
        evaluate(program, np.ones((4, 4), np.float32), apply_shardings=True)
    np.testing.assert_array_equal(np.asarray(evaluate(program, np.ones((4, 4), np.float32))[0]), 2.0)
