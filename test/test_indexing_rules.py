"""Indexing / embedding / MoE rules (Paddle-style cases, hand-checked), and their bad inputs.

mesh2d is [2, 3] (mesh dim 0 of size 2, mesh dim 1 of size 3); mesh3d is [2, 2, 2].
"""
import pytest

from spmdkit import core


def dm(attrs):
    """dims_mapping of each attr (a list of them for a list argument)."""
    return [[b.dims_mapping for b in a] if isinstance(a, list) else a.dims_mapping for a in attrs]


def mdm(attrs):
    return [a.multi_dims_mapping for a in attrs]


def partial(attr):
    return dict(attr.partial_status)


# ---- index_select (Paddle 3.3.1's co-shard rule) -----------------------------------------------
def test_index_select_keeps_co_splits_and_gives_conflicts_to_x(mesh2d, mesh3d, spec):
    rule = core.get_phi_spmd_rule("index_select")
    # the index's co-split is kept as a list, the axis of x is whole
    ins, outs = rule.infer_forward(spec(mesh3d, [8, 2], [-1, 1]), spec(mesh3d, [8], [[1, 0, 2]]), -1)
    assert mdm(ins) == [[[], []], [[1, 0, 2]]] and mdm(outs) == [[[], [1, 0, 2]]]
    # mesh dim 0 splits x's other dim, so the index keeps only mesh dim 1 (x is seen first)
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6], [-1, 0]), spec(mesh2d, [8], [[0, 1]]), 0)
    assert mdm(ins) == [[[], [0]], [[1]]] and mdm(outs) == [[[1], [0]]]
    # no divisibility check: 8 rows over 2 x 3 ranks stay split
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6], [-1, -1]), spec(mesh2d, [8], [[0, 1]]), 1)
    assert mdm(outs) == [[[], [0, 1]]]


def test_index_select_grad_is_partial_over_the_index_split(mesh3d, spec):
    rule = core.get_phi_spmd_rule("index_select")
    ins, outs = rule.infer_backward(spec(mesh3d, [8, 8], [1, 0]), spec(mesh3d, [16], [[0, 1]]),
                                    spec(mesh3d, [16, 8], [0, 1]), 0)
    # x's dim 1 keeps mesh dim 0, so the index keeps mesh dim 1; out_grad follows the forward output
    assert mdm(ins) == [[[], [0]], [[1]], [[1], [0]]]
    assert mdm(outs) == [[[], [0]]] and partial(outs[0]) == {1: "sum"}


# ---- gather_nd ------------------------------------------------------------------------------
def test_gather_nd_addressed_dims_are_whole(mesh2d, spec):
    rule = core.get_phi_spmd_rule("gather_nd")
    # index [5, 2] addresses x's first two dims: they are whole; out = index batch + x's dim 2
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6, 4], [0, 1, -1]), spec(mesh2d, [5, 2], [0, -1]))
    assert dm(ins) == [[-1, -1, -1], [0, -1]] and dm(outs) == [[0, -1]]
    # mesh dim 0 wanted by x's kept dim and the index batch: x (first) keeps it
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6, 4], [-1, -1, 0]), spec(mesh2d, [5, 2], [0, -1]))
    assert dm(ins) == [[-1, -1, 0], [-1, -1]] and dm(outs) == [[-1, 0]]
    # the coordinate dim is whole too
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6], [-1, 1]), spec(mesh2d, [4, 3, 1], [0, -1, 1]))
    assert dm(ins) == [[-1, 1], [0, -1, -1]] and dm(outs) == [[0, -1, 1]]
    # a 1-D x and index give a 0-D output
    ins, outs = rule.infer_forward(spec(mesh2d, [8], [0]), spec(mesh2d, [1], [1]))
    assert dm(ins) == [[-1], [-1]] and dm(outs) == [[]]


def test_gather_nd_reverse(mesh2d, spec):
    rule = core.get_phi_spmd_rule("gather_nd")
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 6, 4], [-1, -1, -1]), spec(mesh2d, [5, 2], [-1, -1]),
                                    spec(mesh2d, [5, 4], [1, 0]))
    assert dm(ins) == [[-1, -1, 0], [1, -1]] and dm(outs) == [[1, 0]]


def test_gather_nd_bad_input(mesh2d, spec):
    rule = core.get_phi_spmd_rule("gather_nd")
    with pytest.raises(ValueError, match=r"gather_nd: input 'x' has rank 1, but needs at least 3 dims"):
        rule.infer_forward(spec(mesh2d, [8], [-1]), spec(mesh2d, [5, 3], [-1, -1]))
    with pytest.raises(ValueError, match=r"gather_nd: input 'index' has rank 0"):
        rule.infer_forward(spec(mesh2d, [8], [-1]), spec(mesh2d, [], []))


# ---- scatter / scatter_nd_add -----------------------------------------------------------------
def test_scatter_rows_are_whole_and_the_rest_follows_updates(mesh2d, spec):
    rule = core.get_phi_spmd_rule("scatter")
    # x's splits are not proposed (as Paddle); its rows are whole, its dim 1 follows the updates
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6], [0, 1]), spec(mesh2d, [5], [0]),
                                   spec(mesh2d, [5, 6], [-1, 1]), True)
    assert dm(ins) == [[-1, 1], [-1], [-1, 1]] and dm(outs) == [[-1, 1]] and not outs[0].partial_status
    # split update rows are gathered, never left as a partial output
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6], [-1, -1]), spec(mesh2d, [5], [1]),
                                   spec(mesh2d, [5, 6], [0, -1]), False)
    assert dm(ins) == [[-1, -1], [-1], [-1, -1]] and dm(outs) == [[-1, -1]] and not outs[0].partial_status
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 6], [-1, -1]), spec(mesh2d, [5], [1]),
                                    spec(mesh2d, [5, 6], [0, -1]), spec(mesh2d, [8, 6], [0, 1]), False)
    assert dm(ins) == [[-1, 1], [-1], [-1, 1]] and dm(outs) == [[-1, 1]]


def test_scatter_bad_input(mesh2d, spec):
    rule = core.get_phi_spmd_rule("scatter")
    with pytest.raises(ValueError, match=r"scatter: input 'updates': dim 1 has size 4, but the same factor has size 6"):
        rule.infer_forward(spec(mesh2d, [8, 6], [-1, -1]), spec(mesh2d, [5], [-1]), spec(mesh2d, [5, 4], [-1, -1]))
    with pytest.raises(ValueError, match=r"scatter: input 'index' has rank 2, but must have rank 1"):
        rule.infer_forward(spec(mesh2d, [8, 6], [-1, -1]), spec(mesh2d, [5, 1], [-1, -1]), spec(mesh2d, [5, 6], [-1, -1]))


def test_scatter_nd_add(mesh2d, spec):
    rule = core.get_phi_spmd_rule("scatter_nd_add")
    # index [5, 2] addresses x's dims 0 and 1; the updates [5, 4] carry x's dim 2
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6, 4], [0, 1, -1]), spec(mesh2d, [5, 2], [-1, -1]),
                                   spec(mesh2d, [5, 4], [0, 1]))
    assert dm(ins) == [[-1, -1, 1], [-1, -1], [-1, 1]] and dm(outs) == [[-1, -1, 1]]
    assert not outs[0].partial_status
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 6, 4], [-1, -1, -1]), spec(mesh2d, [5, 2], [-1, -1]),
                                    spec(mesh2d, [5, 4], [-1, -1]), spec(mesh2d, [8, 6, 4], [0, -1, 1]))
    assert dm(ins) == [[-1, -1, 1], [-1, -1], [-1, 1]] and dm(outs) == [[-1, -1, 1]]
    with pytest.raises(ValueError, match=r"scatter_nd_add: input 'updates': dim 1 has size 6, but the same factor has size 4"):
        rule.infer_forward(spec(mesh2d, [8, 6, 4], [-1, -1, -1]), spec(mesh2d, [5, 2], [-1, -1]),
                           spec(mesh2d, [5, 6], [-1, -1]))


# ---- put_along_axis ---------------------------------------------------------------------------
def test_put_along_axis(mesh2d, spec):
    rule = core.get_phi_spmd_rule("put_along_axis")
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6], [0, 1]), spec(mesh2d, [8, 3], [-1, -1]),
                                   spec(mesh2d, [8, 3], [-1, -1]), 1, "assign", True)
    assert dm(ins) == [[0, -1], [0, -1], [0, -1]] and dm(outs) == [[0, -1]]
    # dim 0: the index is shorter than x, so it is not one dim: whole everywhere
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6, 4], [-1, 0, -1]), spec(mesh2d, [4, 6, 2], [-1, -1, -1]),
                                   spec(mesh2d, [4, 6, 2], [-1, -1, -1]), 2, "add", False)
    assert dm(ins) == [[-1, 0, -1]] * 3 and dm(outs) == [[-1, 0, -1]]
    # ... and, as Paddle's '1' axis, its split still claims mesh dim 1 first
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6, 4], [1, -1, -1]), spec(mesh2d, [4, 6, 4], [-1, 1, -1]),
                                   spec(mesh2d, [4, 6, 4], [-1, -1, -1]), 2, "add", True)
    assert dm(ins) == [[-1, -1, -1]] * 3 and dm(outs) == [[-1, -1, -1]]


def test_put_along_axis_grad_follows_out_grad(mesh2d, spec):
    rule = core.get_phi_spmd_rule("put_along_axis")
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 6], [0, 1]), spec(mesh2d, [8, 3], [-1, -1]),
                                    spec(mesh2d, [8, 3], [-1, -1]), spec(mesh2d, [8, 6], [-1, -1]),
                                    spec(mesh2d, [8, 6], [1, 0]), 1, "assign", True)
    assert dm(ins) == [[1, -1]] * 5 and dm(outs) == [[1, -1], [1, -1]]


# ---- index_put ----------------------------------------------------------------------------
def test_index_put(mesh2d, spec):
    rule = core.get_phi_spmd_rule("index_put")
    # two indices address x's dims 0 and 1 (whole); value [4] is x's last dim
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6, 4], [0, 1, -1]), [spec(mesh2d, [5], [0]), spec(mesh2d, [5], [1])],
                                   spec(mesh2d, [4], [0]), False)
    assert dm(ins) == [[-1, -1, -1], [[-1], [-1]], [-1]] and dm(outs) == [[-1, -1, -1]]
    # value follows x's split last dim (Paddle leaves it whole, and the shards then do not broadcast)
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6, 6], [-1, 0, 1]), [spec(mesh2d, [5], [0])],
                                   spec(mesh2d, [6], [0]), True)
    assert dm(ins) == [[-1, 0, 1], [[-1]], [1]] and dm(outs) == [[-1, 0, 1]]
    # a size-1 value broadcasts: whole
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6, 6], [-1, 0, 1]), [spec(mesh2d, [5], [0])],
                                   spec(mesh2d, [1], [-1]), True)
    assert dm(ins) == [[-1, 0, 1], [[-1]], [-1]]
    # indices for every dim: all whole
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6], [0, 1]), [spec(mesh2d, [5], [0]), spec(mesh2d, [5], [-1])],
                                   spec(mesh2d, [5], [1]), False)
    assert dm(ins) == [[-1, -1], [[-1], [-1]], [-1]] and dm(outs) == [[-1, -1]]


def test_index_put_grad_value_grad_sums_over_the_dims_value_lacks(mesh2d, spec):
    rule = core.get_phi_spmd_rule("index_put")
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 6, 6], [-1, 0, 1]), [spec(mesh2d, [5], [-1])],
                                    spec(mesh2d, [6], [-1]), spec(mesh2d, [8, 6, 6], [1, 0, -1]), False)
    # x proposes (as Paddle); out_grad follows it
    assert dm(ins) == [[-1, 0, 1], [[-1]], [1], [-1, 0, 1]]
    assert dm(outs) == [[-1, 0, 1], [1]]
    assert not outs[0].partial_status and partial(outs[1]) == {0: "sum"}
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 6, 6], [-1, 0, 1]), [spec(mesh2d, [5], [-1])],
                                    spec(mesh2d, [1], [-1]), spec(mesh2d, [8, 6, 6], [-1, -1, -1]), True)
    assert dm(outs) == [[-1, 0, 1], [-1]] and partial(outs[1]) == {0: "sum", 1: "sum"}


def test_index_put_bad_input(mesh2d, spec):
    rule = core.get_phi_spmd_rule("index_put")
    x = spec(mesh2d, [8, 6], [-1, -1])
    with pytest.raises(ValueError, match=r"index_put: input 'value' has rank 2, but must have rank 1"):
        rule.infer_forward(x, [spec(mesh2d, [5], [-1])], spec(mesh2d, [5, 6], [-1, -1]))
    with pytest.raises(ValueError, match=r"index_put: input 'indices' has 3 tensors, but input 'x' has rank 2"):
        rule.infer_forward(x, [spec(mesh2d, [5], [-1])] * 3, spec(mesh2d, [1], [-1]))
    with pytest.raises(ValueError, match=r"index_put: input 'indices\[1\]': dim 0 has size 4, but the same factor has size 5"):
        rule.infer_forward(x, [spec(mesh2d, [5], [-1]), spec(mesh2d, [4], [-1])], spec(mesh2d, [1], [-1]))
    with pytest.raises(ValueError, match=r"index_put: input 'value': dim 0 has size 4, but the same factor has size 6"):
        rule.infer_forward(x, [spec(mesh2d, [5], [-1])], spec(mesh2d, [4], [-1]))


# ---- embedding_grad / c_embedding ------------------------------------------------------------
def test_embedding_grad(mesh2d, spec):
    rule = core.get_phi_spmd_rule("embedding_grad")
    # the table is no source: its rows stay whole; split ids leave the grad partial
    ins, outs = rule.infer_forward(spec(mesh2d, [4, 6], [0, -1]), spec(mesh2d, [16, 8], [1, -1]),
                                   spec(mesh2d, [4, 6, 8], [-1, -1, 1]), 2**40, False)
    assert dm(ins) == [[0, -1], [-1, 1], [0, -1, 1]] and dm(outs) == [[-1, 1]]
    assert partial(outs[0]) == {0: "sum"}


def test_c_embedding(mesh2d, spec):
    rule = core.get_phi_spmd_rule("c_embedding")
    ins, outs = rule.infer_forward(spec(mesh2d, [16, 8], [0, 1]), spec(mesh2d, [4, 6], [-1, -1]), 0, 16)
    assert dm(ins) == [[0, 1], [-1, -1]] and dm(outs) == [[-1, -1, 1]] and partial(outs[0]) == {0: "sum"}
    # ids and table rows on one mesh dim: the table (vocab-parallel) keeps it
    ins, outs = rule.infer_forward(spec(mesh2d, [16, 8], [0, -1]), spec(mesh2d, [4, 6], [0, -1]), 0, 16)
    assert dm(ins) == [[0, -1], [-1, -1]] and partial(outs[0]) == {0: "sum"}


def test_c_embedding_grad(mesh2d, spec):
    rule = core.get_phi_spmd_rule("c_embedding")
    ins, outs = rule.infer_backward(spec(mesh2d, [16, 8], [0, -1]), spec(mesh2d, [4, 6], [1, -1]),
                                    spec(mesh2d, [4, 6, 8], [-1, -1, -1]), 0)
    assert dm(ins) == [[0, -1], [1, -1], [1, -1, -1]] and dm(outs) == [[0, -1]] and partial(outs[0]) == {1: "sum"}
    # the grad's columns follow out_grad when the table's are whole
    ins, outs = rule.infer_backward(spec(mesh2d, [16, 8], [-1, -1]), spec(mesh2d, [4, 6], [1, -1]),
                                    spec(mesh2d, [4, 6, 8], [-1, -1, 0]), 0)
    assert dm(outs) == [[-1, 0]] and partial(outs[0]) == {1: "sum"}


# ---- MoE ----------------------------------------------------------------------------------
def test_moe_combine(mesh2d, spec):
    rule = core.get_phi_spmd_rule("moe_combine")
    # x's rows are addressed by global ids: whole
    ins, outs = rule.infer_forward(spec(mesh2d, [16, 8], [0, 1]), spec(mesh2d, [8, 2], [-1, -1]),
                                   spec(mesh2d, [8, 2], [-1, -1]))
    assert dm(ins) == [[-1, 1], [-1, -1], [-1, -1]] and dm(outs) == [[-1, 1]] and not outs[0].partial_status
    # a split k leaves y partial, and (as Paddle) the hidden dim is then whole
    ins, outs = rule.infer_forward(spec(mesh2d, [16, 8], [-1, 0]), spec(mesh2d, [8, 2], [-1, 1]),
                                   spec(mesh2d, [8, 2], [-1, -1]))
    assert dm(ins) == [[-1, -1], [-1, 1], [-1, 1]] and dm(outs) == [[-1, -1]] and partial(outs[0]) == {1: "sum"}
    # split tokens pass through
    ins, outs = rule.infer_forward(spec(mesh2d, [16, 8], [-1, -1]), spec(mesh2d, [8, 2], [0, -1]),
                                   spec(mesh2d, [8, 2], [-1, -1]))
    assert dm(ins) == [[-1, -1], [0, -1], [0, -1]] and dm(outs) == [[0, -1]]


def test_moe_combine_grad(mesh2d, spec):
    rule = core.get_phi_spmd_rule("moe_combine")
    ins, outs = rule.infer_backward(spec(mesh2d, [16, 8], [-1, 1]), spec(mesh2d, [8, 2], [0, -1]),
                                    spec(mesh2d, [8, 2], [0, -1]), spec(mesh2d, [8, 8], [0, 1]))
    assert dm(ins) == [[-1, 1], [0, -1], [0, -1], [0, 1]]
    assert dm(outs) == [[-1, 1], [0, -1], [0, -1]]
    # x_grad sums over the split tokens, combine_weights_grad over the split hidden dim
    assert [partial(o) for o in outs] == [{0: "sum"}, {1: "sum"}, {1: "sum"}]
    # k is made whole after the merge, but claims mesh dim 0 first (as Paddle): the tokens lose it
    ins, outs = rule.infer_backward(spec(mesh2d, [16, 8], [-1, -1]), spec(mesh2d, [8, 2], [-1, 0]),
                                    spec(mesh2d, [8, 2], [0, -1]), spec(mesh2d, [8, 8], [-1, -1]))
    assert dm(ins) == [[-1, -1], [-1, -1], [-1, -1], [-1, -1]]
    assert [partial(o) for o in outs] == [{}, {}, {}]


def test_moe_gate_dispatch_only_the_hidden_dim_passes(mesh2d, spec):
    rule = core.get_phi_spmd_rule("moe_gate_dispatch")
    # int64 attributes take Python ints (Paddle 3.3.1's binding cannot pass them)
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6], [0, 1]), spec(mesh2d, [8, 4], [-1, 0]), None, 2, 2**33, True)
    assert dm(ins) == [[-1, 1], [-1, -1], []]
    assert dm(outs) == [[-1, -1, 1], [-1, -1], [-1, -1], [-1], [-1, -1]]
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 6], [-1, -1]), spec(mesh2d, [8, 4], [-1, -1]),
                                   spec(mesh2d, [4], [0]), 1, 3, True)
    assert dm(ins) == [[-1, -1], [-1, -1], [-1]]
    with pytest.raises(ValueError, match=r"moe_gate_dispatch: input 'gate_logits': dim 0 has size 7, but the same factor has size 8"):
        rule.infer_forward(spec(mesh2d, [8, 6], [-1, -1]), spec(mesh2d, [7, 4], [-1, -1]), None, 1, 3, True)


# ---- the spec keys this family added -----------------------------------------------------------
GATHER_ND = """
- op: my_gather_nd
  inputs: [x, index]
  outputs: [out]
  groups: {G: "index.shape[-1]"}
  einsum: "G B, I k -> I B"
  replicate: [G, k]
  merge: legacy
"""


@pytest.mark.parametrize("bad,message", [
    (GATHER_ND.replace('"index.shape[-1]"', '"idx.shape[-1]"'), "takes G's length from 'idx', which is not a tensor input"),
    (GATHER_ND + "  unsplit_if_split: {q: k}\n", "names 'q', which is in no input pattern"),
    (GATHER_ND + "  replicate_after_merge: [z]\n", "names 'z', which is in no input pattern"),
    (GATHER_ND + "  conflict: first\n", "'conflict' applies to the co-shard merge only"),
    (GATHER_ND + "  mismatch: drop\n", "mismatch: 'drop' is not one of ['replicate']"),
    (GATHER_ND.replace('"G B, I k -> I B"', '"G B, I J k -> I B"'), "a pattern may have one dim group of unknown length"),
])
def test_new_spec_keys_are_checked(load_rules, spec_error, bad, message):
    with pytest.raises(spec_error) as e:
        load_rules(bad)
    assert str(e.value).startswith("rules_yaml/ops.yaml: entry 'my_gather_nd'") and message in str(e.value), str(e.value)


def test_new_spec_keys_render(load_rules):
    from codegen.emit import render
    spec = GATHER_ND.replace('"G B, I k -> I B"', '"G h, I k -> I h"')
    cc = render(load_rules(spec + "  mismatch: replicate\n  contraction: per_output\n"
                           "  unsplit_if_split: {h: k}\n  replicate_after_merge: [k]\n"))["rules_ops.cc"]
    assert "call.group_length('G', group_length_from_dim(rule.op, \"index\", index, -1));" in cc
    assert "o.mismatch_replicated = true;" in cc and "o.per_output_partial = true;" in cc
    assert "call.unsplit_if_split('h', 'k');" in cc and "call.unsplit_if_split('k', 'k');" in cc
