"""StableHLO that the installed jax prints now (`jax.jit(f).lower(...).as_text()`) imports, and
prints back exactly as MLIR prints it: scans (while), conds (case), nested jit (func.call of a
private function), gathers and scatters, convolutions, custom_jvp functions, integer and bool
ops, multiple results."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ir_text_equality import assert_programs_equal
from spmdkit.ir import parse, print_program
from spmdkit.ir.mlir_context import parse_module, print_module


def scan_cumsum(x):
    return jax.lax.scan(lambda c, v: (c + v, c * v), jnp.zeros(x.shape[1:]), x)


def cond_branches(x, p):
    return jax.lax.cond(p, lambda a: jnp.sin(a), lambda a: jnp.cos(a) * 2, x)


@jax.jit
def inner(a):
    return jnp.tanh(a) @ a.T


def nested_jit(x):
    return inner(x) + inner(x * 2)


def gather_scatter(table, idx):
    rows = table[idx]
    return rows, table.at[idx].add(1.0)


def conv(x, w):
    return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME")


def mixed_dtypes(x, i):
    return jax.nn.gelu(x).astype(jnp.bfloat16), (i % 3 == 0) & (i > 1), jnp.argmax(x, axis=-1)


CASES = {
    "scan": (scan_cumsum, [np.zeros((5, 3), np.float32)]),
    "cond": (cond_branches, [np.zeros((4,), np.float32), True]),
    "nested_jit": (nested_jit, [np.zeros((4, 4), np.float32)]),
    "gather_scatter": (gather_scatter, [np.zeros((10, 4), np.float32), np.zeros((3,), np.int32)]),
    "conv": (conv, [np.zeros((1, 3, 8, 8), np.float32), np.zeros((4, 3, 3, 3), np.float32)]),
    "mixed_dtypes": (mixed_dtypes, [np.zeros((2, 6), np.float32), np.zeros((2, 6), np.int32)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_lowered_module_round_trips(name):
    fn, args = CASES[name]
    text = jax.jit(fn).lower(*args).as_text()
    program = parse(text)
    printed = print_program(program)
    assert printed == print_module(parse_module(text))
    assert_programs_equal(program, parse(printed))


def test_nested_jit_becomes_calls_to_private_functions():
    program = parse(jax.jit(nested_jit).lower(np.zeros((4, 4), np.float32)).as_text())
    calls = [op for op in program.main.walk() if op.name == "func.call"]
    assert len(calls) == 2
    callee = calls[0].attrs["callee"]
    assert callee in program.functions and program.functions[callee].visibility == "private"
    assert calls[1].operands[0].owner.name == "stablehlo.multiply"


def test_scan_is_a_while_with_its_carry_tied():
    program = parse(jax.jit(scan_cumsum).lower(np.zeros((5, 3), np.float32)).as_text())
    loop = next(op for op in program.walk() if op.name == "stablehlo.while")
    cond, body = (r.block for r in loop.regions)
    assert [a.type for a in cond.args] == [a.type for a in body.args] == [r.type for r in loop.results]
    assert [v.type for v in loop.operands] == [r.type for r in loop.results]


def test_debug_info_names_become_op_locations():
    def f(x):
        return jnp.tanh(x) * 2
    program = parse(jax.jit(f).lower(np.zeros(4, np.float32)).as_text(debug_info=True))
    by_name = {op.name: op.location for op in program.walk()}
    assert by_name["stablehlo.tanh"] == "jit(f)/tanh"
    assert by_name["stablehlo.multiply"] == "jit(f)/mul"
    again = parse(print_program(program, locations=True))
    assert [op.location for op in again.walk()] == [op.location for op in program.walk()]


def test_generic_form_reads_back_the_same():
    program = parse(jax.jit(gather_scatter).lower(np.zeros((10, 4), np.float32), np.zeros((3,), np.int32)).as_text())
    generic = print_program(program, generic=True)
    assert '"stablehlo.gather"' in generic and '"func.func"' in generic
    assert_programs_equal(program, parse(generic))
