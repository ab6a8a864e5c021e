"""Factor tables (SpmdRule.factors): Shardy's tables for the StableHLO ops we cover, tables of
Paddle rules, properties of the reshape factorization, and agreement with infer_forward.

The Shardy cases restate openxla/shardy's op_sharding_rule_registry tests as facts (op,
shapes, attributes, Shardy's table). Where spmdkit differs on purpose the expected table says
so, and test_jax_rules.py proves the difference by execution on the simulator
(docs/jax_stablehlo_rules.md lists them).
"""
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from factor_table_text import canonical, of_table, parse, same_up_to_renumbering  # noqa: E402

from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core  # noqa: E402

MESH = ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])


def T(*shape, mapping=None):
    attr = TensorDistAttr()
    attr.process_mesh = MESH
    attr.dims_mapping = list(mapping) if mapping is not None else [-1] * len(shape)
    return DistTensorSpec(list(shape), attr)


def S():
    return T()  # a scalar (rank 0)


def table(name, *args, **kwargs):
    return core.get_phi_spmd_rule(name).factors(*args, **kwargs)


# (registry name, positional args, keyword attrs, Shardy's table)
SHARDY_SAME = [
    ("stablehlo.add", [T(2, 1, 4), T(2, 1, 4)], {}, "([i, j, k], [i, j, k])->([i, j, k]) {i=2, j=1, k=4}"),
    ("stablehlo.add", [T(2, 0, 4), T(2, 0, 4)], {}, "([i, j, k], [i, j, k])->([i, j, k]) {i=2, j=0, k=4}"),
    ("stablehlo.add", [S(), S()], {}, "([], [])->([])"),
    ("stablehlo.broadcast_in_dim", [T(2, 13, 1)], {"shape": [2, 64, 13, 1], "broadcast_dimensions": [0, 2, 3]},
     "([i, k, l])->([i, j, k, l]) {i=2, j=64, k=13, l=1}"),
    ("stablehlo.broadcast_in_dim", [T(2, 13, 0)], {"shape": [2, 64, 13, 0], "broadcast_dimensions": [0, 2, 3]},
     "([i, k, l])->([i, j, k, l]) {i=2, j=64, k=13, l=0}"),
    ("stablehlo.broadcast_in_dim", [S()], {"shape": [2, 1, 13], "broadcast_dimensions": []},
     "([])->([i, j, k]) {i=2, j=1, k=13}"),
    ("stablehlo.broadcast_in_dim", [T(2, 1, 13)], {"shape": [2, 64, 13], "broadcast_dimensions": [0, 1, 2]},
     "([i, j, l])->([i, k, l]) {i=2, j=1, k=64, l=13}"),
    ("stablehlo.broadcast_in_dim", [T(2, 3, 5, 1, 7)], {"shape": [2, 5, 3, 11, 7, 13], "broadcast_dimensions": [0, 2, 1, 3, 4]},
     "([i, k, j, l, n])->([i, j, k, m, n, o]) {i=2, j=5, k=3, l=1, m=11, n=7, o=13}"),
    ("stablehlo.clamp", [T(4, 8), T(4, 8), T(4, 8)], {}, "([i, j], [i, j], [i, j])->([i, j]) {i=4, j=8}"),
    ("stablehlo.clamp", [S(), T(4, 8), S()], {}, "([], [i, j], [])->([i, j]) {i=4, j=8}"),
    ("stablehlo.concatenate", [[T(4, 1, 256)] * 3], {"dimension": 1},
     "([i, j, k], [i, j, k], [i, j, k])->([i, j, k]) {i=4, j=3, k=256} permutation={j}"),
    ("stablehlo.concatenate", [[T(4, 3, 256), T(4, 5, 256)]], {"dimension": 1},
     "([i, j, k], [i, j, k])->([i, j, k]) {i=4, j=8, k=256} permutation={j}"),
    ("stablehlo.concatenate", [[T(4, 16, 256), T(4, 16, 256)]], {"dimension": 1},
     "([i, j, k], [i, j, k])->([i, j, k]) {i=4, j=32, k=256} permutation={j}"),
    ("stablehlo.concatenate", [[T(4, 32, 256), T(4, 16, 256)]], {"dimension": 1},
     "([i, j, k], [i, j, k])->([i, j, k]) {i=4, j=48, k=256} permutation={j}"),
    ("stablehlo.concatenate", [[T(4, 32, 256), T(4, 48, 256)]], {"dimension": 1},
     "([i, j, k], [i, j, k])->([i, j, k]) {i=4, j=80, k=256} permutation={j}"),
    ("stablehlo.dot", [T(32), T(32)], {}, "([i], [i])->([]) {i=32} reduction={i}"),
    ("stablehlo.dot", [T(32), T(32, 16)], {}, "([j], [j, i])->([i]) {i=16, j=32} reduction={j}"),
    ("stablehlo.dot", [T(8, 32), T(32)], {}, "([i, j], [j])->([i]) {i=8, j=32} reduction={j}"),
    ("stablehlo.dot", [T(8, 32), T(32, 16)], {}, "([i, k], [k, j])->([i, j]) {i=8, j=16, k=32} reduction={k}"),
    ("stablehlo.dot_general", [T(8, 32), T(32, 16)], {"lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
     "([i, k], [k, j])->([i, j]) {i=8, j=16, k=32} reduction={k}"),
    ("stablehlo.dot_general", [T(4, 8, 32), T(4, 32, 16)],
     {"lhs_batching_dimensions": [0], "rhs_batching_dimensions": [0], "lhs_contracting_dimensions": [2],
      "rhs_contracting_dimensions": [1]},
     "([i, j, l], [i, l, k])->([i, j, k]) {i=4, j=8, k=16, l=32} reduction={l}"),
    ("stablehlo.dot_general", [T(2, 4, 8, 4, 64, 32), T(16, 32, 64, 4, 2)],
     {"lhs_batching_dimensions": [0, 1], "rhs_batching_dimensions": [4, 3], "lhs_contracting_dimensions": [5, 4],
      "rhs_contracting_dimensions": [1, 2]},
     "([i, j, k, l, o, n], [m, n, o, j, i])->([i, j, k, l, m]) {i=2, j=4, k=8, l=4, m=16, n=32, o=64} reduction={n, o}"),
    ("stablehlo.dynamic_slice", [T(32, 4, 8), [S(), S(), S()]], {"slice_sizes": [32, 1, 2]},
     "([i, j, k], [], [], [])->([i, l, m]) {i=32, j=1, k=1, l=1, m=1}"),
    ("stablehlo.pad", [T(28, 28, 16), S()], {"edge_padding_low": [1, -1, 0], "edge_padding_high": [1, -1, 0],
                                           "interior_padding": [0, 0, 0]},
     "([i, j, k], [])->([i, j, k]) {i=28, j=28, k=16} permutation={i, j}"),
    ("stablehlo.slice", [T(32, 4, 8)], {"start_indices": [0, 1, 4], "limit_indices": [32, 2, 8], "strides": [1, 1, 2]},
     "([i, j, k])->([i, j, k]) {i=32, j=4, k=8} permutation={j, k}"),
    ("stablehlo.reduce", [T(2, 64, 13), S()], {"dimensions": [1], "body": "sum"},
     "([i, j, k], [])->([i, k]) {i=2, j=64, k=13} reduction={j}"),
    ("stablehlo.reduce", [T(2, 64, 1, 13), S()], {"dimensions": [1], "body": "sum"},
     "([i, j, k, l], [])->([i, k, l]) {i=2, j=64, k=1, l=13} reduction={j}"),
    ("stablehlo.select", [T(4, 8), T(4, 8), T(4, 8)], {}, "([i, j], [i, j], [i, j])->([i, j]) {i=4, j=8}"),
    ("stablehlo.select", [S(), T(4, 8), T(4, 8)], {}, "([], [i, j], [i, j])->([i, j]) {i=4, j=8}"),
    ("stablehlo.transpose", [T(256, 32, 64, 100)], {"permutation": [3, 1, 0, 2]},
     "([k, j, l, i])->([i, j, k, l]) {i=100, j=32, k=256, l=64}"),
]

RESHAPES = [  # (input shape, output shape, Shardy's table)
    ((1, 1), (), "([i, j])->([]) {i=1, j=1}"),
    ((2, 4), (8,), "([i, j])->([ij]) {i=2, j=4}"),
    ((8,), (2, 4), "([ij])->([i, j]) {i=2, j=4}"),
    ((4, 12), (4, 2, 3, 2), "([i, jkl])->([i, j, k, l]) {i=4, j=2, k=3, l=2}"),
    ((8, 4, 5), (2, 16, 5), "([ij, k, l])->([i, jk, l]) {i=2, j=4, k=4, l=5}"),
    ((3, 2), (2, 3), "([i, l])->([j, k]) {i=3, j=2, k=3, l=2}"),
    ((6, 4), (4, 6), "([ij, mn])->([ik, ln]) {i=2, j=3, k=2, l=3, m=2, n=2}"),
    ((5, 2, 5, 3), (5, 3, 5, 2), "([i, j, l, n])->([i, k, m, o]) {i=5, j=2, k=3, l=5, m=5, n=3, o=2}"),
    ((2, 3, 8), (3, 4, 4), "([i, k, mn])->([j, lm, n]) {i=2, j=3, k=3, l=2, m=2, n=4}"),
    ((3, 4, 4), (2, 3, 8), "([i, lm, n])->([j, k, mn]) {i=3, j=2, k=3, l=2, m=2, n=4}"),
    ((4, 7, 5, 8), (14, 10, 8), "([ij, l, n, o])->([ik, mn, o]) {i=2, j=2, k=7, l=7, m=2, n=5, o=8}"),
    ((1, 8, 4), (8, 1, 4, 1), "([i, j, l])->([j, k, l, m]) {i=1, j=8, k=1, l=4, m=1}"),
    ((8, 4), (32, 1), "([i, j])->([ij, k]) {i=8, j=4, k=1}"),
    ((32, 1), (8, 4), "([ij, k])->([i, j]) {i=8, j=4, k=1}"),
    ((32,), (8, 1, 4), "([ik])->([i, j, k]) {i=8, j=1, k=4}"),
]

# Differences on purpose: (registry name, args, attrs, Shardy's table, ours). Each is proven by
# execution in test_jax_rules.py (test_*_difference_from_shardy).
SHARDY_DIFFERENT = [
    # a reversed dim: Shardy treats reverse as pointwise; its split needs a collective permute
    ("stablehlo.reverse", [T(4, 32, 8, 2)], {"dimensions": [1, 3]},
     "([i, j, k, l])->([i, j, k, l]) {i=4, j=32, k=8, l=2}",
     "([i, j, k, l])->([i, j, k, l]) {i=4, j=32, k=8, l=2} permutation={j, l}"),
    # the operand dims the update lands in (at a run-time position) are whole
    ("stablehlo.dynamic_update_slice", [T(32, 4, 8), T(32, 1, 2), [S(), S(), S()]], {},
     "([i, j, k], [i, l, m], [], [], [])->([i, j, k]) {i=32, j=4, k=8, l=1, m=1}",
     "([i, j, k], [i, l, m], [], [], [])->([i, j, k]) {i=32, j=4, k=8, l=1, m=1} need_replication={j, k}"),
    # gather: the collapsed dim (n) and the indexed, windowed dim (k) of the operand are whole
    ("stablehlo.gather", [T(3, 4, 2), T(2, 3, 2)],
     {"offset_dims": [2, 3], "collapsed_slice_dims": [0], "start_index_map": [1, 0], "slice_sizes": [1, 2, 2],
      "index_vector_dim": 2},
     "([n, k, m], [i, j, o])->([i, j, l, m]) {i=2, j=3, k=4, l=2, m=2, n=3, o=1}",
     "([n, k, m], [i, j, o])->([i, j, l, m]) {i=2, j=3, k=4, l=2, m=2, n=3, o=1} need_replication={k, n}"),
    ("stablehlo.gather", [T(5, 3, 7, 4), T(7, 5, 3, 2)],
     {"offset_dims": [3], "collapsed_slice_dims": [1], "operand_batching_dims": [0, 2],
      "start_indices_batching_dims": [1, 0], "start_index_map": [1, 3], "index_vector_dim": 3, "slice_sizes": [1, 1, 1, 2]},
     "([j, n, i, l], [i, j, k, o])->([i, j, k, m]) {i=7, j=5, k=3, l=4, m=2, n=3, o=1}",
     "([j, n, i, l], [i, j, k, o])->([i, j, k, m]) {i=7, j=5, k=3, l=4, m=2, n=3, o=1} need_replication={l, n}"),
    ("stablehlo.gather", [T(5, 3, 7, 4), T(7, 2, 5, 3)],
     {"offset_dims": [3], "collapsed_slice_dims": [1], "operand_batching_dims": [0, 2],
      "start_indices_batching_dims": [2, 0], "start_index_map": [1, 3], "index_vector_dim": 1, "slice_sizes": [1, 1, 1, 2]},
     "([j, n, i, l], [i, o, j, k])->([i, j, k, m]) {i=7, j=5, k=3, l=4, m=2, n=3, o=1}",
     "([j, n, i, l], [i, o, j, k])->([i, j, k, m]) {i=7, j=5, k=3, l=4, m=2, n=3, o=1} need_replication={l, n}"),
    # scatter-add: likewise the inserted dim and the windowed dim, and the update dim of a window
    # smaller than its operand dim (it lands anywhere in it)
    ("stablehlo.scatter", [T(3, 4, 2), T(2, 3, 2), T(2, 3, 2, 2)],
     {"update_window_dims": [2, 3], "inserted_window_dims": [0], "scatter_dims_to_operand_dims": [1, 0],
      "index_vector_dim": 2},
     "([n, k, m], [i, j, o], [i, j, l, m])->([n, k, m]) {i=2, j=3, k=4, l=2, m=2, n=3, o=1} reduction={i, j}",
     "([n, k, m], [i, j, o], [i, j, l, m])->([n, k, m]) {i=2, j=3, k=4, l=2, m=2, n=3, o=1} reduction={i, j} "
     "need_replication={k, l, n}"),
    ("stablehlo.scatter", [T(4, 2, 3), T(2, 3, 2), T(2, 3, 2, 2)],
     {"update_window_dims": [2, 3], "inserted_window_dims": [2], "scatter_dims_to_operand_dims": [1, 0],
      "index_vector_dim": 2},
     "([k, m, n], [i, j, o], [i, j, l, m])->([k, m, n]) {i=2, j=3, k=4, l=2, m=2, n=3, o=1} reduction={i, j}",
     "([k, m, n], [i, j, o], [i, j, l, m])->([k, m, n]) {i=2, j=3, k=4, l=2, m=2, n=3, o=1} reduction={i, j} "
     "need_replication={k, l, n}"),
    ("stablehlo.scatter", [T(5, 3, 7, 4), T(7, 5, 3, 2), T(7, 5, 3, 2)],
     {"update_window_dims": [3], "inserted_window_dims": [1], "input_batching_dims": [0, 2],
      "scatter_indices_batching_dims": [1, 0], "scatter_dims_to_operand_dims": [1, 3], "index_vector_dim": 3},
     "([j, n, i, l], [i, j, k, o], [i, j, k, m])->([j, n, i, l]) {i=7, j=5, k=3, l=4, m=2, n=3, o=1} reduction={k}",
     "([j, n, i, l], [i, j, k, o], [i, j, k, m])->([j, n, i, l]) {i=7, j=5, k=3, l=4, m=2, n=3, o=1} reduction={k} "
     "need_replication={l, m, n}"),
]


@pytest.mark.parametrize("name,args,attrs,shardy", SHARDY_SAME, ids=[f"{c[0]}-{i}" for i, c in enumerate(SHARDY_SAME)])
def test_same_table_as_shardy(name, args, attrs, shardy):
    t = table(name, *args, **attrs)
    assert same_up_to_renumbering(t, shardy), f"{t}\n  Shardy: {shardy}"


@pytest.mark.parametrize("src,dst,shardy", RESHAPES, ids=[f"{a}->{b}" for a, b, _ in RESHAPES])
@pytest.mark.parametrize("name", ["stablehlo.reshape", "reshape"])
def test_reshape_tables_are_shardys(name, src, dst, shardy):
    t = table(name, T(*src), list(dst))
    assert str(t) == shardy  # even the numbering: the same walk
    assert same_up_to_renumbering(t, shardy)


@pytest.mark.parametrize("name,args,attrs,shardy,ours", SHARDY_DIFFERENT,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(SHARDY_DIFFERENT)])
def test_documented_differences_from_shardy(name, args, attrs, shardy, ours):
    t = table(name, *args, **attrs)
    assert same_up_to_renumbering(t, ours), str(t)
    theirs = parse(shardy)
    # the same factors on the same dims; only kinds differ
    mine = of_table(t)
    assert canonical(mine)[:3] == canonical(theirs)[:3]
    assert canonical(mine)[3] != canonical(theirs)[3] and canonical(mine)[4] == canonical(theirs)[4]


def test_zero_element_reshape_has_no_table():  # Shardy gives no rule either
    with pytest.raises(ValueError, match="reshape.*no elements"):
        table("stablehlo.reshape", T(0, 4), [4, 0])


# ---- Paddle rules ------------------------------------------------------------------------------

PADDLE = [
    ("matmul", [T(8, 32), T(32, 16), False, False], "([i, k], [k, j])->([i, j]) {i=8, j=16, k=32} reduction={k}"),
    ("matmul", [T(8, 32), T(16, 32), False, True], "([i, k], [j, k])->([i, j]) {i=8, j=16, k=32} reduction={k}"),
    # a batch dim of size 1 that broadcasts is a size-1 factor of its own
    ("matmul", [T(2, 1, 8, 32), T(4, 32, 16), False, False],
     "([a, b, i, k], [c, k, j])->([a, c, i, j]) {a=2, b=1, c=4, i=8, j=16, k=32} reduction={k}"),
    ("matmul", [T(32), T(32, 16), False, False], "([k], [k, j])->([j]) {j=16, k=32} reduction={k}"),
    ("softmax", [T(4, 8), -1], "([i, j])->([i, j]) {i=4, j=8} need_replication={j}"),
    ("sum", [T(4, 8, 3), [1], False], "([i, j, k])->([i, k]) {i=4, j=8, k=3} reduction={j}"),
    ("sum", [T(4, 8, 3), [1], True], "([i, j, k])->([i, l, k]) {i=4, j=8, k=3, l=1} reduction={j}"),
    ("transpose", [T(4, 8, 3), [2, 0, 1]], "([i, j, k])->([k, i, j]) {i=4, j=8, k=3}"),
    ("add", [T(4, 8, 3), T(8, 1)], "([i, j, k], [j, l])->([i, j, k]) {i=4, j=8, k=3, l=1}"),
    ("flatten", [T(2, 3, 4), 1, 2], "([i, j, k])->([i, jk]) {i=2, j=3, k=4}"),
    ("unsqueeze", [T(2, 3), [0]], "([i, j])->([k, i, j]) {i=2, j=3, k=1}"),
    ("einsum", [[T(4, 8), T(8, 5)], "ij,jk->ik"], "([i, j], [j, k])->([i, k]) {i=4, j=8, k=5} reduction={j}"),
    ("slice", [T(4, 8, 3), [1], [2], [5]], "([i, j, k])->([i, j, k]) {i=4, j=8, k=3} permutation={j}"),
    # a letter whose size differs between tensors (mismatch: replicate) is one need-replication
    # factor per size: the index's dim 0 (8) is not x's (64); the output is shaped as the index
    ("take_along_axis", [T(64, 32, 48), T(8, 4, 48), 1],
     "([i, j, k], [l, m, k])->([l, m, k]) {i=64, j=32, k=48, l=8, m=4} need_replication={i, j, l}"),
    ("take_along_axis", [T(64, 32, 48), T(64, 4, 48), 1],
     "([i, j, k], [i, l, k])->([i, l, k]) {i=64, j=32, k=48, l=4} need_replication={j}"),
    ("take_along_axis_grad", [T(64, 32, 48), T(8, 4, 48), T(8, 4, 48), 1],
     "([i, j, k], [l, m, k], [l, m, k])->([i, j, k]) {i=64, j=32, k=48, l=8, m=4} reduction={m} "
     "need_replication={i, j, l}"),
]


@pytest.mark.parametrize("name,args,expected", PADDLE, ids=[f"{c[0]}-{i}" for i, c in enumerate(PADDLE)])
def test_paddle_rule_tables(name, args, expected):
    t = table(name, *args)
    assert same_up_to_renumbering(t, expected), str(t)


def test_handwritten_rule_has_no_table_and_says_so():
    with pytest.raises(ValueError, match="unique.*hand-written"):
        table("unique", T(4, 8))


def test_factors_takes_infer_forward_arguments_and_checks_them():
    rule = core.get_phi_spmd_rule("stablehlo.dot_general")
    with pytest.raises(TypeError, match="missing argument"):
        rule.factors(T(2, 3), T(3, 4))
    with pytest.raises(TypeError, match="unexpected keyword"):
        rule.factors(T(2, 3), T(3, 4), [1], [0], bogus=1)


def test_table_object():
    t = table("matmul", T(8, 32), T(32, 16), False, False)
    assert t.sizes == [8, 32, 16] and t.kinds == ["pass_through", "reduction", "pass_through"]
    assert t.operands == [[[0], [1]], [[1], [2]]] and t.results == [[[0], [2]]]
    assert t.reduction == [1] and t.need_replication == [] and t.permutation == [] and t.blocked == []
    assert str(t) == "([i, j], [j, k])->([i, k]) {i=8, j=32, k=16} reduction={j}"
    same = table("stablehlo.dot_general", T(8, 32), T(32, 16), [1], [0])
    assert t == same and t.equivalent(same) and hash(t) == hash(same)
    renumbered = table("stablehlo.dot_general", T(32, 8), T(32, 16), [0], [0])  # k first
    assert renumbered != t and not renumbered.equivalent(t)  # lhs dims swapped: another table
    assert renumbered.canonical().equivalent(renumbered)
    assert t != "not a table"


def test_mappings_do_not_change_the_table():
    a = table("matmul", T(8, 32, mapping=[0, 1]), T(32, 16, mapping=[1, -1]), False, False)
    b = table("matmul", T(8, 32), T(32, 16), False, False)
    assert a == b


# ---- properties --------------------------------------------------------------------------------

def _dims(t, tensors):
    return [[(t.sizes[f] for f in d) for d in x] for x in tensors]


@st.composite
def reshape_pairs(draw):
    factors = draw(st.lists(st.sampled_from([1, 2, 2, 3, 5]), min_size=0, max_size=6))
    def group(fs):
        rank = draw(st.integers(0 if not fs else 1, 4))
        dims = [1] * rank
        for f in fs:
            dims[draw(st.integers(0, rank - 1))] *= f
        return dims
    perm = draw(st.permutations(factors))
    return group(factors), group(list(perm))


@settings(max_examples=150, deadline=None)
@given(reshape_pairs())
def test_reshape_table_properties(pair):
    src, dst = pair
    t = table("stablehlo.reshape", T(*src), dst)
    for shape, tensor in ((src, t.operands[0]), (dst, t.results[0])):
        assert len(tensor) == len(shape)
        for n, dim in zip(shape, tensor):  # the factors of a dim multiply to its size
            p = 1
            for f in dim:
                p *= t.sizes[f]
            assert p == n
        used = [f for d in tensor for f in d]
        assert len(used) == len(set(used))  # a factor at most once per tensor
    # every factor is used, and shared factors keep their order (major to minor) on both sides
    ins = [f for d in t.operands[0] for f in d]
    outs = [f for d in t.results[0] for f in d]
    assert set(ins) | set(outs) == set(range(t.num_factors))
    shared = [f for f in ins if f in outs]
    assert shared == [f for f in outs if f in ins]
    assert all(k == "pass_through" for k in t.kinds)
    assert t.canonical().equivalent(t) and t.canonical() == t.canonical().canonical()


@st.composite
def dot_general_calls(draw):
    nb, nc, nl, nr = (draw(st.integers(0, 2)) for _ in range(4))
    size = st.sampled_from([2, 4, 6])
    b, c = [draw(size) for _ in range(nb)], [draw(size) for _ in range(nc)]
    lf, rf = [draw(size) for _ in range(nl)], [draw(size) for _ in range(nr)]
    lhs = draw(st.permutations([("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("l", i) for i in range(nl)]))
    rhs = draw(st.permutations([("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("r", i) for i in range(nr)]))
    sizes = {"b": b, "c": c, "l": lf, "r": rf}
    shape = lambda dims: [sizes[k][i] for k, i in dims]  # noqa: E731
    attrs = {"lhs_contracting_dimensions": [lhs.index(("c", i)) for i in range(nc)],
             "rhs_contracting_dimensions": [rhs.index(("c", i)) for i in range(nc)],
             "lhs_batching_dimensions": [lhs.index(("b", i)) for i in range(nb)],
             "rhs_batching_dimensions": [rhs.index(("b", i)) for i in range(nb)]}
    split = draw(st.integers(0, len(lhs))) if lhs else 0
    return shape(lhs), shape(rhs), attrs, split


@settings(max_examples=100, deadline=None)
@given(dot_general_calls())
def test_dot_general_table_agrees_with_infer_forward(call):
    """Split one lhs dim over mesh dim 0: the factor table says where that split must go (the
    result dim with the same factor, or a partial result for a reduction factor)."""
    lhs, rhs, attrs, split = call
    mapping = [-1] * len(lhs)
    if split < len(lhs):
        mapping[split] = 0
    rule = core.get_phi_spmd_rule("jax.dot_general")
    t = rule.factors(T(*lhs), T(*rhs), **attrs)
    (li, ri), (out,) = rule.infer_forward(T(*lhs, mapping=mapping), T(*rhs), **attrs)
    assert len(t.results[0]) == len(out.dims_mapping)
    assert set(t.reduction) == {t.operands[0][d][0] for d in attrs["lhs_contracting_dimensions"]}
    if split == len(lhs):
        assert out.dims_mapping == [-1] * len(out.dims_mapping) and not out._is_partial()
        return
    f = t.operands[0][split][0]
    assert li.dims_mapping[split] == 0  # a split that divides is kept
    if f in t.reduction:
        assert out.partial_status == {0: "sum"} and out.dims_mapping == [-1] * len(out.dims_mapping)
    else:
        where = [d for d, fs in enumerate(t.results[0]) if f in fs]
        assert out.dims_mapping == [0 if d in where else -1 for d in range(len(out.dims_mapping))]
        rhs_dims = [d for d, fs in enumerate(t.operands[1]) if f in fs]
        assert ri.dims_mapping == [0 if d in rhs_dims else -1 for d in range(len(rhs))]


# ---- every rule ----------------------------------------------------------------------------------

def _every_rule_cases():
    from spmdkit.verify import load_specs, verifiable_ops
    specs = load_specs()
    return specs, [op for op in verifiable_ops(specs) if not core.get_phi_spmd_rule(op).handwritten]


def test_every_generated_rule_has_a_consistent_table():
    """For random calls of every generated rule (the verify samplers'): the table covers each
    input and output tensor dim for dim; a dim's factors multiply to its size, except a dim that
    the op resizes (a permutation factor, sized as Shardy sizes it) or one that is never split
    and shares nothing (Shardy's convention: a factor of size 1); every factor is used."""
    import numpy as np
    from spmdkit.verify import get_backend
    from spmdkit.verify.random_mode import draw_case
    from spmdkit.verify.samplers import Options
    specs, ops = _every_rule_cases()
    assert len(ops) > 150
    backend = get_backend("spmdkit")
    rng = np.random.default_rng(11)
    checked = 0
    for op in ops:
        for _ in range(3):
            mesh = (2, 2)
            case, ex = draw_case(specs[op], "forward", specs, rng, mesh, Options())
            api_mesh = backend.mesh(mesh)
            outputs = [[backend.spec(t, api_mesh) for t in case.outputs]] if ex.spec.list_output and case.outputs else \
                [backend.spec(t, api_mesh) for t in case.outputs]
            args = [backend.to_api(t, api_mesh) for t in case.inputs] + outputs + list(case.attrs)
            rule = core.get_phi_spmd_rule(op)
            t = rule.factors(*args)
            ins, outs = rule.infer_forward(*args)
            flat = [x for a in case.inputs for x in (a if isinstance(a, list) else [a])]
            assert len(t.operands) == len(flat), (op, str(t))
            for tensor, dims in zip(flat, t.operands):
                shape = () if tensor is None else tensor.shape
                assert len(dims) == (0 if tensor is None else len(shape)), (op, str(t))
                for n, fs in zip(shape, dims):
                    p = int(np.prod([t.sizes[f] for f in fs]))
                    resized = len(fs) == 1 and t.kinds[fs[0]] == "permutation"
                    alone = len(fs) == 1 and t.sizes[fs[0]] == 1
                    assert p == n or resized or alone or min(t.sizes[f] for f in fs) < 0, (op, shape, str(t))
            out_ranks = [len(o.dims_mapping) for o in
                         [q for o in outs for q in (o if isinstance(o, list) else [o])]]
            assert [len(r) for r in t.results] == out_ranks, (op, out_ranks, str(t))
            used = {f for x in t.operands + t.results for d in x for f in d}
            assert used == set(range(t.num_factors)), (op, str(t))
            checked += 1
    assert checked == 3 * len(ops)


def test_cli_prints_the_table(capsys):
    from spmdkit.cli import main
    assert main(["factors", "jax.dot_general", "[8,32]{0,-1}", "[32,16]", "[1]", "[0]"]) == 0
    assert capsys.readouterr().out.strip() == "([i, j], [j, k])->([i, k]) {i=8, j=32, k=16} reduction={j}"
    assert main(["factors", "unique", "[4]", "False", "False", "False", "[]", "'int64'"]) == 2  # hand-written
    assert "hand-written" in capsys.readouterr().err
