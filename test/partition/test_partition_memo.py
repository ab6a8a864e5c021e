"""The partitioner's situation memo is sound: an op whose situation was met before replays that
answer (partitioner._Partitioner.situation), and that gives the very plan the rule path gives.
Differential: the same propagated program partitioned as is, and with the memo off (every op
asks its rule), must agree step for step: layouts, localized attributes and reshard plans. The
programs repeat layers (where the memo answers most ops) and carry a scan (nested blocks, a trial
partitioning of the body). No JAX devices needed."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spmdkit
from spmdkit.ir import import_jax
from spmdkit.models import gpt
from spmdkit.partition import partition
from spmdkit.partition import partitioner as partitioner_module
from spmdkit.partition import regions as regions_module
from spmdkit.partition.plan import LocalControlFlow, LocalOp, Reshard
from spmdkit.sharding import Mesh, parse_sharding

MESH = Mesh({"dp": 2, "mp": 2})
CFG = gpt.GPTConfig(n_layers=3)
SPLITS = {  # a weight's placements to draw from: Megatron's, the other way round, whole
    "col": ['#sdy.sharding<@mesh, [{}, {"mp"}]>', '#sdy.sharding<@mesh, [{"mp"}, {}]>', None],
    "row": ['#sdy.sharding<@mesh, [{"mp"}, {}]>', '#sdy.sharding<@mesh, [{}, {"mp"}]>', None],
}
ROLE = {"w_qkv": "col", "w_fc": "col", "w_o": "row", "w_proj": "row"}


def described(parted) -> list:
    """Every step of a partitioned program as comparable data (values by their place)."""
    place: dict[int, int] = {}
    for v in parted.function.args:
        place[id(v)] = len(place)
    for op in parted.function.walk():
        for r in op.results:
            place[id(r)] = len(place)
    for op in parted.function.walk():
        for region in op.regions:
            for block in region.blocks:
                for v in block.args:
                    place[id(v)] = len(place)

    def steps(items):
        out = []
        for s in items:
            if isinstance(s, LocalOp):
                out.append(("op", s.op.name, [place[id(r)] for r in s.op.results], repr(sorted(s.attrs.items())),
                            s.operand_layouts, s.result_layouts))
            elif isinstance(s, Reshard):
                out.append(("reshard", place[id(s.value)], s.source, s.target, s.plan, s.reason))
            else:
                assert isinstance(s, LocalControlFlow)
                out.append(("control flow", s.op.name, s.operand_layouts, s.result_layouts, s.trip_count,
                            [(b.arg_layouts, [(place[id(v)], l) for v, l in b.results], steps(b.steps))
                             for b in s.blocks]))
        return out
    return [parted.arg_layouts, parted.result_layouts, [(place[id(v)], l) for v, l in parted.results],
            steps(parted.steps)]


def without_memo(program):
    """Partition with every op taking the rule path (no situation is keyed, none replayed)."""
    mp = pytest.MonkeyPatch()
    mp.setattr(partitioner_module._Partitioner, "situation", lambda self, op: None)
    mp.setattr(partitioner_module._Partitioner, "fast", False)
    try:
        return partition(program)
    finally:
        mp.undo()


def python_only(program):
    """Partition with every op through partition_op (the C++ loop of _core.partition_hits off)."""
    mp = pytest.MonkeyPatch()
    mp.setattr(partitioner_module._Partitioner, "fast", False)
    try:
        return partition(program)
    finally:
        mp.undo()


def gpt_step(placements: dict):
    params = gpt.init_params(jax.random.PRNGKey(0), CFG)
    tokens, targets = gpt.example_batch(jax.random.PRNGKey(1), CFG, batch=4)
    names = sorted(params)  # as jax flattens a dict
    shardings = [placements.get(n.split(".")[-1]) for n in names] + ['#sdy.sharding<@mesh, [{"dp"}, {}]>'] * 2
    program = import_jax(gpt.train_step, params, tokens, targets, meshes={"mesh": MESH}, inline_calls=True,
                         arg_shardings=[parse_sharding(s) if s else None for s in shardings])
    return spmdkit.propagate(program)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.fixed_dictionaries({w: st.sampled_from(SPLITS[role]) for w, role in ROLE.items()}))
def test_repeated_layers_partition_as_without_the_memo(placements):
    program = gpt_step(placements)
    parted = partition(program)
    rule_ops = sum(1 for op in program.main.body.ops if op.operands and not op.is_terminator)
    assert len(parted.mesh.outcomes) < rule_ops / 2  # the layers repeat: most ops were answered by the memo
    assert described(parted) == described(without_memo(program))
    assert described(parted) == described(python_only(program))  # the C++ loop replays as Python does


def test_the_cxx_loop_takes_most_ops():
    """partition_hits answers the repeated layers itself: Python's partition_op sees few ops."""
    program = gpt_step({"w_qkv": SPLITS["col"][0], "w_fc": SPLITS["col"][0], "w_o": SPLITS["row"][0],
                        "w_proj": SPLITS["row"][0]})
    seen = []
    mp = pytest.MonkeyPatch()
    original = partitioner_module._Partitioner.partition_op
    mp.setattr(partitioner_module._Partitioner, "partition_op", lambda self, op: (seen.append(op), original(self, op)))
    try:
        parted = partition(program)
    finally:
        mp.undo()
    ops = sum(1 for op in program.main.body.ops if not op.is_terminator)
    assert len(seen) < ops / 3
    assert described(parted) == described(python_only(program))


def scan_step():
    """A propagated SGD step through a scan (a while with a nested body) and its gradient."""
    def loss(w, xs, h):
        def cell(c, x):
            c = jnp.tanh(c @ w + x)
            return c, jnp.sum(c * c)
        c, ys = jax.lax.scan(cell, h, xs)
        return jnp.sum(ys) + jnp.sum(c)

    def step(w, xs, h):
        return w - 0.1 * jax.grad(loss)(w, xs, h)

    w, xs, h = jnp.ones((8, 8)) * 0.1, jnp.ones((3, 8, 8)), jnp.ones((8, 8))
    shardings = ['#sdy.sharding<@mesh, [{}, {"mp"}]>', '#sdy.sharding<@mesh, [{}, {"dp"}, {}]>',
                 '#sdy.sharding<@mesh, [{"dp"}, {}]>']
    program = import_jax(step, w, xs, h, meshes={"mesh": MESH}, inline_calls=True,
                         arg_shardings=[parse_sharding(s) for s in shardings])
    return spmdkit.propagate(program)


def test_a_scan_and_its_gradient_partition_as_without_the_memo():
    program = scan_step()
    parted = partition(program)
    assert any(isinstance(s, LocalControlFlow) for s in parted.steps)
    assert described(parted) == described(without_memo(program))
    assert described(parted) == described(python_only(program))


def test_a_linear_op_read_once_or_twice_partitions_as_without_the_memo():
    """Two transposes of alike partial sums: one sum has no other reader (it stays partial through
    the transpose), the other has (it is reduced first). Same op, same layouts, another answer."""
    def f(a, w1, w2):
        p1, p2 = a @ w1, a @ w2
        return p1.T, p2.T, p2

    shardings = ['#sdy.sharding<@mesh, [{"dp"}, {"mp"}]>', '#sdy.sharding<@mesh, [{"mp"}, {}]>',
                 '#sdy.sharding<@mesh, [{"mp"}, {}]>']
    program = import_jax(f, jnp.ones((8, 4)), jnp.ones((4, 4)), jnp.ones((4, 4)), meshes={"mesh": MESH},
                         inline_calls=True, arg_shardings=[parse_sharding(s) for s in shardings])
    spmdkit.propagate(program)
    parted = partition(program)
    first, second = [s for s in parted.steps if isinstance(s, LocalOp) and s.op.name == "jax.transpose"]
    assert first.result_layouts[0].partial and not second.result_layouts[0].partial
    assert described(parted) == described(without_memo(program))


def test_alike_ops_of_regions_run_whole_and_split_partition_as_without_the_memo(monkeypatch):
    """Two alike elementwise regions (same ops, same layouts), one run whole and one split: the
    region's decision is part of an op's situation. (Which region runs whole is fixed here, every
    other one: the memo must follow any decision.)"""
    def f(w1, g1, w2, g2):
        return w1 - g1, w2 - g2

    split = parse_sharding('#sdy.sharding<@mesh, [{"dp"}, {}]>')
    program = import_jax(f, *[jnp.ones((4, 4))] * 4, meshes={"mesh": MESH}, inline_calls=True,
                         arg_shardings=[split] * 4)
    for op in program.main.body.ops:
        if op.name == "jax.sub":
            op.result.sharding = split  # each sub its own split region
    monkeypatch.setattr(regions_module.Regions, "whole",
                        lambda self, op, versions, price: self.region_of.get(id(op), 1) % 2 == 0)
    parted = partition(program)
    first, second = [s for s in parted.steps if isinstance(s, LocalOp) and s.op.name == "jax.sub"]
    assert not any(first.result_layouts[0].dims) and second.result_layouts[0].dims == (("dp",), ())
    assert described(parted) == described(without_memo(program))


def test_alike_ops_of_values_annotated_otherwise_partition_as_without_the_memo():
    """Two transposes (wanted whole) of values produced alike (split), one annotated whole and one
    split: the annotation is what a consumer asks for, so it is part of the consumer's situation."""
    def f(a1, a2):
        return jnp.tanh(a1).T, jnp.tanh(a2).T

    split = '#sdy.sharding<@mesh, [{"dp"}, {}]>'
    program = import_jax(f, jnp.ones((4, 4)), jnp.ones((4, 4)), meshes={"mesh": MESH}, inline_calls=True,
                         arg_shardings=[parse_sharding(split)] * 2)
    first, second = [op for op in program.main.body.ops if op.name == "jax.tanh"]
    first.result.sharding = parse_sharding('#sdy.sharding<@mesh, [{}, {}]>')
    second.result.sharding = parse_sharding(split)
    for op in program.main.body.ops:
        if op.name == "jax.transpose":  # both wanted whole after (their answers differ by the operand)
            op.result.sharding = parse_sharding('#sdy.sharding<@mesh, [{}, {}]>')
    parted = partition(program)
    t1, t2 = [s for s in parted.steps if isinstance(s, LocalOp) and s.op.name == "jax.transpose"]
    assert not any(t1.result_layouts[0].dims) and t2.result_layouts[0].dims == ((), ("dp",))
    assert described(parted) == described(without_memo(program))
