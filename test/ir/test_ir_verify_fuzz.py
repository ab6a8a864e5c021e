"""verify_program never crashes: random mutations of a valid program (types, op order, attributes,
shardings, names, operands) either still verify or raise a typed IRVerifyError."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spmdkit.ir import IRVerifyError, TensorType, verify_program
from spmdkit.sharding import parse_sharding

from test_ir_verify_invariants import _program  # noqa: E402  (the valid program with every construct)

SHARDINGS = ['<@m, [{"x"}, {}]>', '<@m, [{}, {"y", ?}]>', '<@m, [{"x"}]>', '<@n, [{"z"}, {}]>', '<@q, [{}, {}]>',
             '<@m, [{"w"}, {}]>', '<@m, [{"x", "x"}, {}]>', '<@m, [{}, {}], replicated={"y", "x"}>']
JUNK = [None, -1, 0, 7, "x", "BOTH", [], ["x"], ["y", "x"], ["q"], [None], 1.5, True]


def _everything(program):
    ops, values = [], []
    for fn in program.functions.values():
        values.extend(fn.args)
        for op in fn.walk():
            ops.append(op)
            values.extend(op.results)
            for r in op.regions:
                for b in r.blocks:
                    values.extend(b.args)
    return ops, values


@st.composite
def mutations(draw):
    return [(draw(st.sampled_from(["type", "remove", "swap", "attr", "sharding", "rename", "operand"])),
             draw(st.integers(0, 10_000)), draw(st.integers(0, 10_000)), draw(st.integers(0, 10_000)))
            for _ in range(draw(st.integers(1, 3)))]


def _mutate(program, kind, i, j, k):
    ops, values = _everything(program)
    op, value = ops[i % len(ops)], values[j % len(values)]
    if kind == "type":
        value.type = TensorType([(8, 4), (4, 4), (), (8,), (4, 8)][k % 5], ["f32", "i32", "i1"][k % 3])
    elif kind == "remove" and op.parent is not None and op in op.parent.ops:
        op.parent.ops.remove(op)
    elif kind == "swap" and op.parent is not None and len(op.parent.ops) > 1:
        block = op.parent.ops
        a, b = k % len(block), i % len(block)
        block[a], block[b] = block[b], block[a]
    elif kind == "attr":
        keys = list(op.attrs) or ["extra"]
        op.attrs[keys[k % len(keys)]] = JUNK[j % len(JUNK)]
    elif kind == "sharding":
        value.sharding = parse_sharding("#sdy.sharding" + SHARDINGS[k % len(SHARDINGS)])
    elif kind == "rename":
        op.name = ["jax.neg", "frob", "sdy.manual_computation", "stablehlo.while", "func.call", "jax.add"][k % 6]
    elif kind == "operand" and op.operands:
        op.operands[k % len(op.operands)] = value


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations())
def test_mutated_programs_verify_or_raise_typed_errors(steps):
    program = _program()
    for step in steps:
        _mutate(program, *step)
    try:
        verify_program(program)
    except IRVerifyError as e:
        assert str(e)  # a message naming what is wrong
    except Exception as e:  # anything else is a crash of the verifier
        pytest.fail(f"{type(e).__name__} after {steps}: {e}")
