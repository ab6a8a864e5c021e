"""Propagation numbers every op's signature; parallelize hands those numbers to the partition of
the same program (partition(signatures=)) instead of numbering every op again. Sound only if
every number propagation leaves is still its op's signature: propagation rewrites some ops'
attributes (a constraint's grown sharding, a data-flow edge's, a manual computation's), and
must forget those. Checked on steps with constraints, a scan, a shard_map and repeated layers:
every number kept names the op's signature now, and the partition is the same step for step."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from spmdkit.ir import import_jax, parse
from spmdkit.ir.core import op_signature
from spmdkit.ir.signatures import OpSignatures
from spmdkit.models import gpt
from spmdkit.partition import partition
from spmdkit.propagation.from_ir import propagate_program
from spmdkit.sharding import Mesh, parse_sharding

from test_partition_memo import described

MESH = Mesh({"dp": 2, "mp": 2})
ROW = '#sdy.sharding<@mesh, [{"dp"}, {}]>'
COL = '#sdy.sharding<@mesh, [{}, {"mp"}]>'


# an open constraint, which propagation grows (its attribute rewritten), and two alike ones
CONSTRAINED = """
sdy.mesh @mesh = <["dp"=2, "mp"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"dp"}, {}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"mp"}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{?}, {?}]> : tensor<8x8xf32>
  %2 = stablehlo.tanh %1 : tensor<8x8xf32>
  %3 = sdy.sharding_constraint %2 <@mesh, [{?}, {?}]> : tensor<8x8xf32>
  %4 = stablehlo.add %3, %1 : tensor<8x8xf32>
  return %4 : tensor<8x8xf32>
}
"""


# a manual computation whose open in/out shardings propagation grows (attributes rewritten)
MANUAL = """
sdy.mesh @mesh = <["dp"=2, "mp"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"dp"}]>}, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{"mp", ?}, {?}]>] out_shardings=[<@mesh, [{"mp", ?}, {?}]>] manual_axes={"mp"} (%arg2: tensor<4x8xf32>) {
    %1 = stablehlo.tanh %arg2 : tensor<4x8xf32>
    sdy.return %1 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = stablehlo.add %0, %arg0 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
"""


def _scanned(w, xs):
    def cell(c, x):
        c = jnp.tanh(c @ w + x)
        return c, jnp.sum(c)
    c, ys = jax.lax.scan(cell, xs[0], xs)
    return c, ys


def _gpt():
    cfg = gpt.GPTConfig(n_layers=2)
    params = gpt.init_params(jax.random.PRNGKey(0), cfg)
    tokens, targets = gpt.example_batch(jax.random.PRNGKey(1), cfg, batch=4)
    shardings = [COL if n.endswith(("w_qkv", "w_fc")) else None for n in sorted(params)] + [ROW, ROW]
    return gpt.train_step, (params, tokens, targets), shardings


CASES = {
    "constraint": None,
    "scan": lambda: (_scanned, (jnp.ones((8, 8)), jnp.ones((3, 4, 8))), [COL, None]),
    "gpt": _gpt,
}


def _program(case):
    if case in ("constraint", "manual"):
        return parse(CONSTRAINED if case == "constraint" else MANUAL)
    fn, args, shardings = CASES[case]()
    return import_jax(fn, *args, meshes={"mesh": MESH}, inline_calls=True,
                      arg_shardings=[parse_sharding(s) if s else None for s in shardings])


@pytest.mark.parametrize("case", sorted(CASES) + ["manual"])
def test_every_number_propagation_leaves_is_its_ops_signature_now(case):
    program = _program(case)
    signatures = propagate_program(program).signatures
    assert signatures.by_op, "propagation numbered no op"
    by_number = {n: sig for sig, n in signatures.numbers.items()}
    checked = 0
    for op in program.main.walk():
        number = signatures.by_op.get(id(op))
        if number is not None and number >= 0:
            assert by_number[number] == op_signature(op), op.name
            checked += 1
    assert checked > 0


@pytest.mark.parametrize("case, name", [("constraint", "sdy.sharding_constraint"),
                                        ("manual", "sdy.manual_computation")])
def test_an_op_whose_shardings_grow_is_forgotten(case, name):
    program = _program(case)
    before = {id(op): op_signature(op) for op in program.main.body.ops if op.name == name}
    signatures = propagate_program(program).signatures
    grown = [op for op in program.main.body.ops if op.name == name]
    assert grown and any(op_signature(op) != before[id(op)] for op in grown)  # propagation rewrote them
    assert all(id(op) not in signatures.by_op for op in grown)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_partition_with_propagations_numbers_is_the_same(case):
    program = _program(case)
    signatures = propagate_program(program).signatures
    handed = partition(program, signatures=signatures)
    assert described(handed) == described(partition(program))


def test_signatures_must_be_a_propagations():
    program = _program("constraint")
    propagate_program(program)
    with pytest.raises(TypeError, match="signatures must be an OpSignatures"):
        partition(program, signatures={})
    assert isinstance(OpSignatures(), OpSignatures)
