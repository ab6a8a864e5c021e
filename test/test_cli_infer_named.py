"""`spmdkit infer` takes a rule's attributes by name (`axis=1`), as the Python API does: the same
call by position and by name prints the same shardings."""
from __future__ import annotations

import pytest

from spmdkit import core
from spmdkit.cli import main

CALLS = [
    ("softmax", ["[8,8]{0,1}"], {"axis": "1"}),
    ("softmax", ["[8,8]{0,1}"], {"axis": "0"}),
    ("matmul", ["[8,4]{1,0}", "[8,6]{-1,1}"], {"trans_x": "True", "trans_y": "False"}),
    ("concat", ["([4,8]{0,1};[4,8]{0,-1})"], {"axis": "0"}),
    ("sum", ["[8,8,8]{0,1,-1}"], {"axis": "[1]", "keep_dim": "True"}),
]


def _printed(argv, capsys) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("op, tensors, attrs", CALLS)
def test_named_attributes_equal_positional_ones(op, tensors, attrs, capsys):
    if not core.contains_spmd_rule(op):
        pytest.skip(f"no rule {op}")
    order = [p[0] for p in core.get_phi_spmd_rule(op).forward_params][len(tensors):]
    positional = [attrs[n] for n in order[:len(attrs)]]
    by_position = _printed(["infer", op, *tensors, *positional], capsys)
    by_name = _printed(["infer", op, *tensors, *(f"{n}={v}" for n, v in reversed(list(attrs.items())))], capsys)
    assert by_name == by_position and "output 0" in by_name


def test_named_attribute_changes_the_answer(capsys):
    """Not ignored: axis=1 replicates dim 1 of softmax's input, axis=0 dim 0."""
    one = _printed(["infer", "softmax", "[8,8]{0,1}", "axis=1"], capsys)
    zero = _printed(["infer", "softmax", "[8,8]{0,1}", "axis=0"], capsys)
    assert "output 0: {0,-1}" in one and "output 0: {-1,1}" in zero
