"""Invariants of propagation on random programs (hypothesis): every propagated program executes
correctly on simulated ranks, closed dims and user axes never change, no axis is used twice, and
the result is a fixed point."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from spmdkit.propagation import Graph
from spmdkit.propagation.random_programs import KERNELS, random_program
from spmdkit.propagation.simulate import execute

MODES = [dict(), dict(aggressive=False), dict(op_priority=False), dict(user_priority=False),
         dict(aggressive=False, op_priority=False, user_priority=False)]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _pieces(axes):
    """Each (axis, pre_size, size) cut into sub-axes of prime size, major to minor: "a":(1)4 is
    "a":(1)2 then "a":(2)2. Two dim shardings split a dim into the same device blocks as far as
    their pieces agree (exact for the meshes of these tests, whose axis sizes are powers of 2)."""
    out = []
    for axis, pre, size in axes:
        f = 2
        while size > 1:
            while size % f == 0:
                out.append((axis, pre, f))
                pre, size = pre * f, size // f
            f += 1
    return out


def _extends(old, new):
    """`new` keeps `old` as its major part: an open dim only grows minor-ward, possibly by
    widening its last sub-axis ("a":(1)2 -> "a")."""
    old_pieces, new_pieces = _pieces(old), _pieces(new)
    return new_pieces[:len(old_pieces)] == old_pieces


def _user_dims(g):
    return {v: g._g.sharding(v)[1] for v in range(g.num_values)}


@SETTINGS
@given(seed=st.integers(0, 10**6), mode=st.sampled_from(MODES), n_ops=st.integers(1, 12))
def test_every_propagated_program_executes_correctly(seed, mode, n_ops):
    g, inputs = random_program(seed, n_ops)
    g.propagate(**mode)
    g._g.validate()  # every value: axes exist, sub-axes divide, no axis used twice
    _, checks = execute(g, inputs, KERNELS)
    wrong = [c for c in checks if c.max_error > 1e-6]
    assert not wrong, wrong


@SETTINGS
@given(seed=st.integers(0, 10**6), mode=st.sampled_from(MODES))
def test_closed_dims_and_user_axes_never_change(seed, mode):
    g, _ = random_program(seed, 10, annotate=0.6)
    before = _user_dims(g)
    g.propagate(**mode)
    after = _user_dims(g)
    for v, dims in before.items():
        for (axes0, closed, _, user, _), (axes1, *_rest) in zip(dims, after[v]):
            if closed:
                assert axes1 == axes0, (g.value_name(v), axes0, axes1)
            if user:  # an open user dim may only grow at its minor end
                assert _extends(axes0, axes1), (g.value_name(v), axes0, axes1)


@SETTINGS
@given(seed=st.integers(0, 10**6), mode=st.sampled_from(MODES))
def test_result_is_a_fixed_point(seed, mode):
    g, _ = random_program(seed, 10)
    g.propagate(**mode)
    first = [g.sharding_full(v) for v in range(g.num_values)]
    stats = g.propagate(**mode)
    assert [g.sharding_full(v) for v in range(g.num_values)] == first
    assert stats["updates"] == 0


def test_random_programs_cover_the_factor_kinds():
    # The generator must actually exercise reduction, need-replication, compound and blocked factors.
    seen = set()
    for seed in range(60):
        g, _ = random_program(seed, 10)
        for op in g.ops:
            seen.add(op["name"])
    assert {"matmul", "reduce_sum", "softmax", "reshape", "broadcast", "opaque", "sharding_constraint"} <= seen


def test_simulator_catches_a_wrong_factor_table():
    # A matmul whose contracted factor is (wrongly) declared pass-through: splitting it must be
    # caught as a wrong answer, so the executability property above can fail.
    g = Graph()
    g.mesh("mesh", x=2)
    a = g.value([4, 8], '[{?}, {"x"}]')
    b = g.value([8, 6])
    g.op("matmul", "ik,kj->ij", [a, b], [[4, 6]])  # no reduction= on purpose
    g.propagate()
    rng = np.random.default_rng(0)
    _, checks = execute(g, {a: rng.standard_normal([4, 8]), b: rng.standard_normal([8, 6])}, KERNELS)
    assert checks[0].max_error > 1e-3


def test_simulator_catches_a_missing_need_replication():
    g = Graph()
    g.mesh("mesh", x=2)
    a = g.value([4, 8], '[{?}, {"x"}]')
    g.op("softmax", "ij->ij", [a], [[4, 8]])  # the softmax axis should be need_replication
    g.propagate()
    _, checks = execute(g, {a: np.random.default_rng(1).standard_normal([4, 8])}, KERNELS)
    assert checks[0].max_error > 1e-3


@pytest.mark.parametrize("seed", range(3))
def test_propagation_shards_something_when_annotated(seed):
    # Not vacuous: random annotated programs do get intermediate values sharded.
    sharded = 0
    for s in range(seed * 20, seed * 20 + 20):
        g, _ = random_program(s, 10, annotate=0.8)
        g.propagate()
        sharded += sum(any(dim for dim in g.dim_axes(v)) for v in range(g.num_values) if g.mesh_of(v))
    assert sharded > 20


def test_sweep_of_random_programs_has_no_wrong_op():
    # A fixed sweep on top of the hypothesis runs: 150 programs, every op checked on every rank.
    total = wrong = consistent = 0
    for seed in range(150):
        g, inputs = random_program(10_000 + seed, 10)
        g.propagate()
        _, checks = execute(g, inputs, KERNELS)
        total += len(checks)
        wrong += sum(c.max_error > 1e-6 for c in checks)
        consistent += sum(not c.resharded for c in checks)
    assert total > 900 and wrong == 0
    # most ops end up consistent with their factor table (they run on their propagated shardings
    # as they are, no reshard), despite random, often conflicting, annotations
    assert consistent > 0.6 * total, (consistent, total)


def test_results_are_partial_exactly_over_the_reduction_factors_axes():
    from spmdkit.propagation.simulate import partial_axes
    g = Graph()
    g.mesh("mesh", x=2, y=2)
    a = g.value([8, 16], '[{"y"}, {"x"}]')
    w = g.value([16, 4])
    mm = g.op("matmul", "ik,kj->ij", [a, w], [[8, 4]], reduction="k")
    sm = g.op("softmax", "ij->ij", [mm], [[8, 4]], need_replication="j")
    rs = g.op("reduce_sum", "ij->i", [a], [[8]], reduction="j")
    g.propagate()
    assert partial_axes(g, 0) == [("x", 1, 2)]   # k is split over x: the matmul's result is partial over x
    assert partial_axes(g, 1) == []              # a softmax is never partial
    assert partial_axes(g, 2) == [("x", 1, 2)]
    assert g.sharding(mm) == '[{"y", ?}, {?}]' and g.sharding(rs) == '[{"y", ?}]'
    assert g.sharding(sm) == '[{"y", ?}, {?}]'  # its need-replication dim stays whole


def test_extends_is_prefix_of_device_blocks():
    y2, y4, x4 = ("y", 1, 2), ("y", 1, 4), ("x", 1, 4)
    assert _extends([y2], [y4, x4])            # widened, then grown minor-ward
    assert _extends([y2], [y2, ("y", 2, 2)])
    assert _extends([], [x4])
    assert not _extends([y4], [y2])            # shrunk
    assert not _extends([y2], [("y", 2, 2)])   # another piece of y
    assert not _extends([y2, x4], [y4, x4])    # x moved from second to third piece
