"""The graph build's C++ loop (_core.build_rule_ops) against the Python path it stands for: the
same graph, entry for entry, and the same propagated program, on random StableHLO programs and on
a GPT training step (while loops, annotated values, repeated ops)."""
from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spmdkit import ir
from spmdkit.propagation import from_ir
from spmdkit.propagation.from_ir import build_graph, propagate_program

from stablehlo_programs import random_stablehlo_program

GPT_STEP = os.path.join(os.path.dirname(__file__), "data", "gpt_2x2x2_sgd_step.mlir")


class _PythonOnly:
    """_core as from_ir sees it, with build_rule_ops taking no op: every op goes through Python."""

    def __init__(self, core):
        self._core = core

    def __getattr__(self, name):
        return getattr(self._core, name)

    @staticmethod
    def build_rule_ops(ops, start, *args):
        return start


def _graph_fields(out):
    g = out.graph
    g._flush()
    return (g._value_names, g._shapes, g._value_meshes, g._op_names, g._op_tables, g._op_operands, g._op_results,
            g._op_flags, [id(v) for v in out.values], out.opaque)


def _both(text: str, monkeypatch):
    fast = build_graph(ir.parse(text, strict_ops=False))
    with monkeypatch.context() as m:
        m.setattr(from_ir, "_core", _PythonOnly(from_ir._core))
        slow = build_graph(ir.parse(text, strict_ops=False))
    return fast, slow


def _same_graph(fast, slow):
    f, s = _graph_fields(fast), _graph_fields(slow)
    names = ("value names", "shapes", "value meshes", "op names", "op tables", "operands", "results", "flags")
    for name, a, b in zip(names, f, s):
        assert a == b, name
    # the IR values stand at the same graph ids (compared by position in each program)
    fast_ids = {id(v): k for k, v in enumerate(_values_in_order(fast.program))}
    slow_ids = {id(v): k for k, v in enumerate(_values_in_order(slow.program))}
    assert [fast_ids.get(i) for i in f[8]] == [slow_ids.get(i) for i in s[8]]
    assert f[9] == s[9]


def _values_in_order(program):
    out = []
    for fn in program.functions.values():
        out.extend(fn.args)
        for op in fn.walk():
            out.extend(op.results)
            for region in op.regions:
                for block in region.blocks:
                    out.extend(block.args)
    return out


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_ops=st.integers(1, 24))
def test_random_programs_build_the_same_graph(seed, n_ops):
    text = random_stablehlo_program(seed, n_ops=n_ops)
    with pytest.MonkeyPatch.context() as mp:
        fast, slow = _both(text, mp)
    _same_graph(fast, slow)


def test_gpt_step_builds_and_propagates_the_same(monkeypatch):
    with open(GPT_STEP) as f:
        text = f.read()
    fast, slow = _both(text, monkeypatch)
    _same_graph(fast, slow)
    assert len(fast.graph._op_names) > 500  # the loop took a real program, repeated ops and all

    a = ir.parse(text, strict_ops=False)
    propagate_program(a)
    with monkeypatch.context() as m:
        m.setattr(from_ir, "_core", _PythonOnly(from_ir._core))
        b = ir.parse(text, strict_ops=False)
        propagate_program(b)
    assert ir.print_program(a) == ir.print_program(b)


def test_the_loop_takes_most_ops_of_a_step():
    """Not a timing: the C++ loop must take the common op, or it stands for nothing."""
    with open(GPT_STEP) as f:
        program = ir.parse(f.read(), strict_ops=False)
    calls = []
    real = from_ir._Builder.op

    def counted(self, op, fn):
        calls.append(op.name)
        return real(self, op, fn)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(from_ir._Builder, "op", counted)
        out = build_graph(program)
    assert len(calls) < len(out.graph._op_names) / 2, (len(calls), len(out.graph._op_names))
