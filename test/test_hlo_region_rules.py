"""The StableHLO ops with regions (rules_yaml/jax_region_ops.yaml): behaviour of the rules, their
errors, execution on the simulator (0 wrong), and execution proofs of where they differ from
jaxlib's Shardy (test_shardy_differential.py pins what Shardy says)."""
from itertools import product

import numpy as np
import pytest

from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core
from spmdkit.verify import Placement, TensorArg, get_backend, load_specs, run_random
from spmdkit.verify.simulate import Execution, verify_placements

MESH = ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])
SPECS = load_specs()
P = Placement.make
OPS = ["stablehlo.reduce-variadic", "jax.sort", "stablehlo.reduce_window", "jax.reduce_window_sum",
       "jax.reduce_window_max", "jax.reduce_window_min"]


def T(*shape, mapping=None):
    attr = TensorDistAttr()
    attr.process_mesh = MESH
    attr.dims_mapping = list(mapping) if mapping is not None else [-1] * len(shape)
    return DistTensorSpec(list(shape), attr)


def rule(name):
    return core.get_phi_spmd_rule(name)


@pytest.mark.parametrize("op", OPS)
def test_executes_right_on_the_simulator(op):
    backend = get_backend("spmdkit")
    for tally in run_random(backend, SPECS[op], SPECS, cases=60, seed=11):
        assert tally.wrong == 0, (op, tally.function, tally.counterexample)
        assert tally.correct > 0, (op, tally.function, tally.notes[:2])


# ---- variadic reduce ------------------------------------------------------------------------------

def test_variadic_reduce_keeps_reduced_dims_whole_and_passes_the_rest():
    r = rule("stablehlo.reduce-variadic")
    (ops, inits), (outs,) = r.infer_forward([T(4, 8, 6, mapping=[0, 1, -1]), T(4, 8, 6, mapping=[-1, -1, 1])],
                                            [T(), T()], [1], "argmax")
    # every operand and result shares the kept dims' split; the reduced dim is made whole
    assert [o.dims_mapping for o in ops] == [[0, -1, 1], [0, -1, 1]]
    assert [o.dims_mapping for o in outs] == [[0, 1], [0, 1]]
    assert all(o.partial_status == {} for o in outs)
    (ops, _), _ = r.infer_backward([T(4, 8, 6), T(4, 8, 6)], [T(), T()], [T(4, 6, mapping=[1, -1]), T(4, 6)], [1])
    assert [o.dims_mapping for o in ops] == [[1, -1, -1], [1, -1, -1]]


def test_variadic_reduce_factor_table():
    table = rule("stablehlo.reduce-variadic").factors([T(4, 8, 6), T(4, 8, 6)], [T(), T()], [1], "argmin")
    assert str(table) == "([i, j, k], [i, j, k], [], [])->([i, k], [i, k]) {i=4, j=8, k=6} need_replication={j}"


@pytest.mark.parametrize("args,match", [
    (([T(4, 8), T(4, 8)], [T(), T()], [2]), r"dimensions.*out of range"),
    (([T(4, 8), T(4, 7)], [T(), T()], [1]), r"operands\[1\].*size"),
    (([T(4, 8), T(4, 8)], [T(), T()], [1], "sum"), r"body.*not one of"),
])
def test_variadic_reduce_bad_calls_raise_naming_the_op(args, match):
    with pytest.raises(ValueError, match=match) as e:
        rule("stablehlo.reduce-variadic").infer_forward(*args)
    assert "stablehlo.reduce-variadic" in str(e.value)


def _candidates(rank, mesh_dims):
    """Whole, partial under each reduce type, or split on one dim, over one mesh dim."""
    out = [P([-1] * rank)] + [P([-1] * rank, {m: t}) for m in range(mesh_dims) for t in ("sum", "max", "min")]
    return out + [P([m if d == k else -1 for d in range(rank)]) for k in range(rank) for m in range(mesh_dims)]


@pytest.mark.parametrize("body", ["argmax", "argmin"])
def test_split_reduced_dim_has_no_right_all_reduce(body):
    """Shardy (jaxlib 0.10.2) makes a variadic reduce's reduced dims reduction factors. Executed
    that way, each rank reduces its shard: the value result is right partial max (min), but no
    placement of the index result is (a rank's winner is local), so ours is need_replication."""
    spec = SPECS["stablehlo.reduce-variadic"]
    # indices drawn from a wide range, so no two ranks' local winners agree by chance
    args = [[TensorArg((6, 16), P([-1, -1]), None), TensorArg((6, 16), P([-1, -1]), 10**6)],
            [TensorArg((), P([]), None), TensorArg((), P([]), 1)]]
    ex = Execution(spec, (2,), args, [[1], body], np.random.default_rng(0))
    whole = [[P([-1, -1]), P([-1, -1])], [P([]), P([])]]
    assert verify_placements(ex, whole, [P([-1]), P([-1])])  # control: the check can say yes
    split = [[P([-1, 0]), P([-1, 0])], [P([]), P([])]]
    value_type = "max" if body == "argmax" else "min"
    assert verify_placements(ex, split, [P([-1], {0: value_type}), P([-1])]).reason  # index wrong
    assert not any(verify_placements(ex, split, [v, i]) for v, i in product(_candidates(1, 1), repeat=2))


# ---- sort -------------------------------------------------------------------------------------------

def test_sort_dim_is_whole_and_operands_share_the_rest():
    r = rule("stablehlo.sort")
    assert r.op == "jax.sort"
    (ops,), outs = r.infer_forward([T(4, 8, mapping=[-1, 0]), T(4, 8, mapping=[1, -1])], 1, True)
    assert [o.dims_mapping for o in ops] == [[1, -1], [1, -1]]
    assert [o.dims_mapping for o in outs] == [[1, -1], [1, -1]]  # one layout per result
    table = r.factors([T(4, 8), T(4, 8)], 1)
    assert str(table) == "([i, j], [i, j])->([i, j], [i, j]) {i=4, j=8} need_replication={j}"


def test_sort_bad_calls_raise_naming_the_op():
    with pytest.raises(ValueError, match=r"jax.sort.*dimension"):
        rule("jax.sort").infer_forward([T(4, 8)], 2)
    with pytest.raises(ValueError, match=r"jax.sort.*operands\[1\]"):
        rule("jax.sort").infer_forward([T(4, 8), T(4, 6)], 0)


def test_split_sort_dim_is_wrong_when_executed():
    """Why the sort dim is need_replication (as in Shardy): each rank sorting its shard gives
    no placement of the result that is right."""
    spec = SPECS["jax.sort"]
    ex = Execution(spec, (2,), [[TensorArg((3, 16), P([-1, -1]), None)]], [1, True, 1], np.random.default_rng(1))
    assert verify_placements(ex, [[P([-1, -1])]], [P([-1, -1])])
    assert not any(verify_placements(ex, [[P([-1, 0])]], [c]) for c in _candidates(2, 1))


# ---- reduce_window ------------------------------------------------------------------------------------

def test_reduce_window_passes_trivial_window_dims_and_keeps_real_windows_whole():
    r = rule("stablehlo.reduce_window")
    (ops, inits), outs = r.infer_forward([T(4, 8, 6, mapping=[0, 1, -1])], [T()], [1, 2, 1], [1, 2, 1])
    assert [o.dims_mapping for o in ops] == [[0, -1, -1]] and [o.dims_mapping for o in outs] == [[0, -1, -1]]
    # the windowed factor has the result's size (the window count), as Shardy's
    table = r.factors([T(4, 8, 6), T(4, 8, 6)], [T(), T()], [1, 3, 1], [], [], [], [0, 0, 2, 0, 0, 0])
    assert str(table) == "([i, j, k], [i, j, k], [], [])->([i, j, k], [i, j, k]) {i=4, j=8, k=6} permutation={j}"
    table = rule("jax.reduce_window_max").factors(T(4, 8), [2, 1], [2, 1])
    assert str(table) == "([i, j])->([i, j]) {i=2, j=8} permutation={i}"


@pytest.mark.parametrize("args,match", [
    (([T(4, 8)], [T()], [1]), r"window_dimensions.*1 entries for operand of rank 2"),
    (([T(4, 8)], [T()], [1, 1], [1]), r"window_strides"),
    (([T(4, 8)], [T()], [1, 1], [], [], [], [0, 0, 1]), r"padding.*\(low, high\) pair per dim"),
    (([T(4, 8)], [T()], [1, 9]), r"dim 1 of size 8.*window of span 9"),
    (([T(4, 8)], [T()], [1, 0]), r"window_dimensions.*>= 1"),
])
def test_reduce_window_bad_calls_raise_naming_the_op(args, match):
    with pytest.raises(ValueError, match=match) as e:
        rule("stablehlo.reduce_window").infer_forward(*args)
    assert "stablehlo.reduce_window" in str(e.value)


def test_base_dilated_dim_is_wrong_split_though_shardy_passes_it_through():
    """Shardy (jaxlib 0.10.2) gives a base-dilated dim (window 1, stride 1, no padding) a
    pass-through factor; executed that way, each rank spreads its own shard (n elements become
    2n - 1, the holes between shards are lost) and no placement of the result is right."""
    spec = SPECS["stablehlo.reduce_window"]
    attrs = [[1, 1], [], [1, 2], [], [], "sum"]
    ex = Execution(spec, (2,), [[TensorArg((3, 8), P([-1, -1]), None)], [TensorArg((), P([]), None)]], attrs,
                   np.random.default_rng(2))
    assert verify_placements(ex, [[P([-1, -1])], [P([])]], [P([-1, -1])])
    assert not any(verify_placements(ex, [[P([-1, 0])], [P([])]], [c]) for c in _candidates(2, 1))
    table = rule("stablehlo.reduce_window").factors([T(3, 8)], [T()], *attrs)
    assert "permutation={j}" in str(table)
