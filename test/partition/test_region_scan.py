"""_core.scan_regions (the partitioner's one pass for elementwise regions) against a plain Python
statement of the same scan, on GPT training steps under drawn weight placements, a scan with its
gradient and random elementwise chains: the same use counts, the same readers of each value (ops
by identity, operand index), the same regions (ops by identity, in order). No devices needed."""
from __future__ import annotations

import jax.numpy as jnp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spmdkit
from spmdkit import _core
from spmdkit.ir import import_jax
from spmdkit.ir.types import OpaqueType
from spmdkit.partition.layouts import ProgramMesh
from spmdkit.partition.regions import _is_elementwise, _nested_uses
from spmdkit.partition.rules import CALL_OPS
from spmdkit.sharding import Mesh, parse_sharding
from test_partition_memo import ROLE, SPLITS, gpt_step, scan_step

MESH = Mesh({"dp": 2, "mp": 2})


def reference_scan(ops, pm, users):
    """The scan in Python: use counts, readers of the values in `users` (and of every elementwise
    op's results), elementwise ops joined to the region of each elementwise producer of a
    non-scalar operand; regions listed by their first op."""
    uses, producer, parent, elementwise_ops = {}, {}, {}, []

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for op in ops:
        elementwise = _is_elementwise(op, pm)
        if elementwise:
            elementwise_ops.append(op)
            parent[id(op)] = id(op)
        for i, v in enumerate(op.operands):
            uses[id(v)] = uses.get(id(v), 0) + 1
            if id(v) in users:
                users[id(v)].append((op, i))
                if elementwise and id(v) in producer and v.type.shape:
                    parent[find(id(op))] = find(producer[id(v)])
        if op.regions:
            _nested_uses(op, uses)
        if elementwise:
            for r in op.results:
                producer[id(r)] = id(op)
                users.setdefault(id(r), [])
    groups: dict[int, list] = {}
    for op in elementwise_ops:
        groups.setdefault(find(id(op)), []).append(op)
    return uses, list(groups.values())


def assert_same_scan(program):
    fn = program.main
    pm = ProgramMesh.of(program)
    pm.signed.sign(fn.body.ops)
    start = {id(v): [] for v in fn.body.terminator.operands}
    ours_users, ref_users = {k: [] for k in start}, {k: [] for k in start}
    uses, groups, checked = _core.scan_regions(fn.body.ops, pm.signatures, pm.elementwise,
                                               lambda op: _is_elementwise(op, pm), _nested_uses, ours_users,
                                               CALL_OPS, OpaqueType)
    ref_uses, ref_groups = reference_scan(fn.body.ops, pm, ref_users)
    # the ops check_function must look at: those with regions, calls, opaque results
    assert [id(op) for op in checked] == [id(op) for op in fn.body.ops if op.regions or op.name in CALL_OPS or any(
        isinstance(r.type, OpaqueType) for r in op.results)]
    assert uses == ref_uses
    assert list(ours_users) == list(ref_users)
    for k in ref_users:
        assert [(id(op), i) for op, i in ours_users[k]] == [(id(op), i) for op, i in ref_users[k]]
    assert [[id(op) for op in g] for g in groups] == [[id(op) for op in g] for g in ref_groups]
    return groups


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.fixed_dictionaries({w: st.sampled_from(SPLITS[role]) for w, role in ROLE.items()}))
def test_gpt_steps_scan_as_in_python(placements):
    groups = assert_same_scan(gpt_step(placements))
    assert len(groups) > 10  # the optimizer's updates and the activations' chains


def test_a_scan_and_its_gradient_scan_as_in_python():
    program = scan_step()
    assert any(op.regions for op in program.main.body.ops)  # nested reads are counted too
    assert_same_scan(program)


UNARY = {"tanh": jnp.tanh, "neg": jnp.negative, "exp": jnp.exp}
BINARY = {"add": jnp.add, "mul": jnp.multiply, "sub": jnp.subtract}


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(UNARY) + sorted(BINARY) + ["sum", "dot"]),
                          st.integers(0, 10), st.integers(0, 10)), min_size=1, max_size=12))
def test_random_chains_scan_as_in_python(steps):
    """Chains of elementwise ops mixed with reductions and dots (which cut regions), each op
    reading earlier values: regions join across several producers and split at the others."""
    def f(a, b):
        pool = [a, b]
        for name, i, j in steps:
            x, y = pool[i % len(pool)], pool[j % len(pool)]
            if name in UNARY:
                pool.append(UNARY[name](x))
            elif name in BINARY:
                pool.append(BINARY[name](x, y))
            elif name == "sum":
                pool.append(jnp.sum(x, axis=0, keepdims=True) + y)
            else:
                pool.append(x @ y)
        return pool[-1], pool[len(pool) // 2]

    program = import_jax(f, jnp.ones((4, 4)), jnp.ones((4, 4)), meshes={"mesh": MESH}, inline_calls=True,
                         arg_shardings=[parse_sharding('#sdy.sharding<@mesh, [{"dp"}, {}]>'), None])
    spmdkit.propagate(program)
    assert_same_scan(program)


def test_bad_state_is_a_type_error():
    with pytest.raises(TypeError):
        _core.scan_regions("not a list", {}, {}, lambda op: False, _nested_uses, {})
