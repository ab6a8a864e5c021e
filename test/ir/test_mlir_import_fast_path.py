"""The import's C++ loop (_core.import_block_ops) against the Python path it stands for
(_Importer.op for every op): the same Program, op for op (fields, attributes, pins, locations,
parents, shardings), on every MLIR file of the tests, on random programs of every IR feature and
on random StableHLO programs; the same typed error on bad input; and attribute lists that are the
op's own, not shared through the importer's cache."""
from __future__ import annotations

import glob
import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ir_text_equality import assert_programs_equal
from spmdkit.ir import IRError, mlir_import, parse, print_program
from test_ir_text_random import programs

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "propagation"))
from stablehlo_programs import random_stablehlo_program  # noqa: E402

TEST_ROOT = os.path.join(os.path.dirname(__file__), "..")
FILES = sorted(glob.glob(os.path.join(TEST_ROOT, "**", "data", "*.mlir"), recursive=True))


def _parse(text: str, fast: bool, **kw):
    old = mlir_import._Importer.fast
    mlir_import._Importer.fast = fast
    try:
        return parse(text, **kw)
    finally:
        mlir_import._Importer.fast = old


def _ops(block):
    for op in block.ops:
        yield block, op
        for region in op.regions:
            for b in region.blocks:
                yield from _ops(b)


def assert_same_import(text: str, **kw):
    fast, slow = _parse(text, True, **kw), _parse(text, False, **kw)
    assert_programs_equal(fast, slow)
    for name in slow.functions:
        pairs = zip(_ops(fast.functions[name].body), _ops(slow.functions[name].body), strict=True)
        for (fb, f), (sb, s) in pairs:
            assert type(f) is type(s)
            assert list(vars(f)) == list(vars(s)), f.name  # the same fields, set in the same order
            assert f.parent is fb and s.parent is sb
            assert f.attrs == s.attrs and list(f.attrs) == list(s.attrs), f.name
            assert f.attr_types == s.attr_types, f.name
            assert f.location == s.location, f.name
            assert [type(v) for v in f.results] == [type(v) for v in s.results]
            assert [(v.index, v.owner is f, v.name) for v in f.results] == \
                [(v.index, v.owner is s, v.name) for v in s.results]
    assert print_program(fast, locations=True) == print_program(slow, locations=True)
    return fast


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_every_test_file_imports_the_same(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert_same_import(text, strict_ops=False)


def test_the_files_are_there():
    assert len(FILES) >= 8  # the corpus above is not empty by accident


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs_import_the_same(program):
    assert_same_import(print_program(program))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 40))
def test_random_stablehlo_programs_import_the_same(seed, n_ops):
    assert_same_import(random_stablehlo_program(seed, n_ops=n_ops), strict_ops=False)


def test_attribute_lists_are_each_ops_own():
    # the importer converts an attribute once and hands each op a copy of its lists
    text = """
    func.func @main(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
      %0 = "paddle.transpose"(%x) {perm = [1, 0]} : (tensor<4x8xf32>) -> tensor<8x4xf32>
      %1 = "paddle.transpose"(%x) {perm = [1, 0]} : (tensor<4x8xf32>) -> tensor<8x4xf32>
      %2 = "paddle.transpose"(%x) {perm = [1, 0]} : (tensor<4x8xf32>) -> tensor<8x4xf32>
      return %2 : tensor<8x4xf32>
    }"""
    program = assert_same_import(text)
    perms = [op.attrs["perm"] for op in program.functions["main"].body.ops[:3]]
    assert perms == [[1, 0]] * 3 and len({id(p) for p in perms}) == 3
    perms[1].append(7)
    assert perms[0] == perms[2] == [1, 0]


BAD = [
    # an op in no dialect and no registry, after ops of a known kind
    'func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n'
    '  %0 = stablehlo.add %x, %x : tensor<4xf32>\n'
    '  %1 = "nodialect.op"(%0) : (tensor<4xf32>) -> tensor<4xf32>\n'
    '  return %1 : tensor<4xf32>\n}',
    # a result type that is no tensor, after an op of the same kind with a tensor result
    'func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n'
    '  %0 = "paddle.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n'
    '  %1 = "paddle.relu"(%0) : (tensor<4xf32>) -> memref<4xf32>\n'
    '  return %0 : tensor<4xf32>\n}',
    # sdy.sharding with the wrong count of shardings, after a good one
    'sdy.mesh @m = <["a"=2]>\n'
    'func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n'
    '  %0 = stablehlo.add %x, %x {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"a"}]>]>} : tensor<4xf32>\n'
    '  %1:2 = "paddle.split_pair"(%0) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"a"}]>]>} : '
    '(tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)\n'
    '  return %0 : tensor<4xf32>\n}',
]


@pytest.mark.parametrize("text", BAD)
def test_bad_input_fails_the_same_way(text):
    errors = []
    for fast in (True, False):
        with pytest.raises(IRError) as info:
            _parse(text, fast, strict_ops=True)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]
