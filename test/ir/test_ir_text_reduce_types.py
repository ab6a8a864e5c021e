"""Shardings with unreduced axes of other reduce types than sum (`unreduced_max={"y"}`, which
completion writes for a max over a split dim) print as text MLIR's parser takes and parse back
exactly, on arguments, op results and function results; in an attribute, where no exact text can
ride along, they are refused by name before MLIR sees them."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st
from spmdkit.ir import IRError, parse, print_program
from spmdkit.ir.builder import ProgramBuilder
from spmdkit.sharding import REDUCE_TYPES, parse_sharding

SHAPE = (8, 8)


def _program(arg_kind: str, op_kind: str, result_kind: str):
    pb = ProgramBuilder()
    pb.mesh("m", {"x": 2, "y": 2})
    f = pb.function("main")
    x = f.arg(SHAPE, sharding=f'#sdy.sharding<@m, [{{"x"}}, {{}}], {_unreduced(arg_kind)}>')
    y = f.op("stablehlo.add", [x, x], result_types=[(SHAPE, "f32")])
    y.sharding = parse_sharding(f'#sdy.sharding<@m, [{{}}, {{}}], {_unreduced(op_kind)}>')
    f.ret(y)
    f.fn.result_shardings = [parse_sharding(f'#sdy.sharding<@m, [{{}}, {{"x"}}], {_unreduced(result_kind)}>')]
    return pb.build(verify=False)


def _unreduced(kind: str) -> str:
    return 'unreduced={"y"}' if kind == "sum" else f'unreduced_{kind}={{"y"}}'


def _shardings(program):
    fn = program.main
    return ([a.sharding for a in fn.body.args] + [r.sharding for op in fn.body.ops for r in op.results]
            + list(fn.result_shardings))


@settings(max_examples=20, deadline=None)
@given(kinds=st.tuples(*[st.sampled_from(REDUCE_TYPES)] * 3))
def test_reduce_types_survive_print_and_parse(kinds):
    program = _program(*kinds)
    text = print_program(program)
    back = parse(text)
    assert _shardings(back) == _shardings(program)
    assert print_program(back) == text
    # the exact text rides along only where Shardy's text would lose a reduce type
    assert ("spmdkit.exact_sharding" in text) == any(k != "sum" for k in kinds)


def test_a_constraint_attribute_with_a_max_pending_axis_is_refused_by_name():
    pb = ProgramBuilder()
    pb.mesh("m", {"x": 2, "y": 2})
    f = pb.function("main")
    x = f.arg(SHAPE)
    f.ret(f.sharding_constraint(x, '#sdy.sharding<@m, [{}, {}], unreduced_max={"y"}>'))
    with pytest.raises(IRError, match=r"op 'sdy.sharding_constraint'.*reduce types \{.*'max'\}"):
        print_program(pb.build(verify=False))
