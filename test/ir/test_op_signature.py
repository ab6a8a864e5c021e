"""_core.op_signature / _core.signature_numbers (the C++ signature the graph build and the
partitioner read) against spmdkit.ir.core.op_signature, its Python definition: equal keys for
every kind of attribute value (atoms, lists and tuples of them, nested lists, dicts, arrays,
objects), and the same refusal (TypeError, number -1) for a value that cannot be keyed."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from spmdkit import _core
from spmdkit.ir import MLIRAttr, Op, TensorType, Value
from spmdkit.ir.core import frozen_attr, op_signature

atoms = st.one_of(st.integers(-5, 5), st.floats(allow_nan=False, width=32), st.text(max_size=3), st.booleans(),
                  st.none())
values = st.recursive(
    st.one_of(atoms, st.builds(MLIRAttr, st.sampled_from(["#sdy.sharding<@m, [{}]>", "dense<1.0>", "1 : i64"])),
              st.builds(lambda xs: np.array(xs, np.int64), st.lists(st.integers(0, 9), max_size=4))),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
                            st.dictionaries(st.text(max_size=2), inner, max_size=2),
                            st.just(set())),   # a set cannot be keyed: TypeError
    max_leaves=6)
types = st.builds(TensorType, st.lists(st.integers(1, 4), max_size=3).map(tuple), st.sampled_from(["f32", "i32"]))


def _op(name, in_types, out_types, attrs):
    args = [Value(t) for t in in_types]
    return Op.create(name, args, out_types, attrs)


def _python(op):
    try:
        key = op_signature(op)
        hash(key)
        return key
    except TypeError:
        return None


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(["jax.add", "stablehlo.dot_general", "matmul"]), ins=st.lists(types, max_size=3),
       outs=st.lists(types, min_size=1, max_size=2), attrs=st.dictionaries(st.text(max_size=4), values, max_size=4))
def test_the_cxx_signature_is_the_python_one(name, ins, outs, attrs):
    op = _op(name, ins, outs, attrs)
    want = _python(op)
    try:
        got = _core.op_signature(op, frozen_attr)
        hash(got)
    except TypeError:
        got = None
    assert got == want
    numbers = {}
    assert _core.signature_numbers([op, op], numbers, frozen_attr) == ([-1, -1] if want is None else [0, 0])
    assert list(numbers) == ([] if want is None else [want])


def test_numbers_are_shared_by_equal_signatures_and_new_ones_follow():
    t = TensorType((4, 4))
    a, b = _op("jax.add", [t, t], [t], {}), _op("jax.add", [t, t], [t], {})
    c = _op("jax.transpose", [t], [t], {"permutation": [1, 0]})
    d = _op("jax.transpose", [t], [t], {"permutation": (1, 0)})   # a tuple keys as the list does
    numbers = {"earlier": 0}
    assert _core.signature_numbers([a, c, b, d], numbers, frozen_attr) == [1, 2, 1, 2]
    assert numbers[op_signature(c)] == 2


def test_numbers_by_op_are_read_and_filled():
    t = TensorType((4, 4))
    a, b = _op("jax.add", [t, t], [t], {}), _op("jax.neg", [t], [t], {})
    by_op = {id(a): 7}  # known already: kept, not asked again
    assert _core.signature_numbers([a, b, b], {}, frozen_attr, by_op) == [7, 0, 0]
    assert by_op == {id(a): 7, id(b): 0}
    bad = _op("jax.add", [t, t], [t], {"odd": set()})  # cannot be keyed: -1, noted too
    assert _core.signature_numbers([bad], {}, frozen_attr, by_op) == [-1] and by_op[id(bad)] == -1
