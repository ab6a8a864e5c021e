"""tile, roll, pad, expand_as grad, one_hot, slice, strided_slice, concat, stack, add_n, split,
split_with_num, unbind, reshape_grad (Paddle-style; mesh2d is 2 x 3: mesh dim 0 has 2 ranks, 1 has 3)."""
import pytest

from spmdkit import core


def dm(attrs):
    return [a.dims_mapping for a in attrs]


def pdims(a):
    return dict(a.partial_status)


# ---- tile ---------------------------------------------------------------------------------------
def test_tile_repeated_dims_are_whole(mesh2d, spec):
    rule = core.get_phi_spmd_rule("tile")
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16], [0, 1]), [1, 2])
    assert dm(ins) == [[0, -1]] and dm(outs) == [[0, -1]]
    # repeat_times shorter than the rank is right-aligned (np.tile): only dim 1 is repeated
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16], [0, 1]), [3])
    assert dm(ins) == [[0, -1]] and dm(outs) == [[0, -1]]
    # longer: new leading dims, born whole; x's dims keep their splits
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16], [0, 1]), [2, 1, 1])
    assert dm(ins) == [[0, 1]] and dm(outs) == [[-1, 0, 1]]
    # a pending reduction is settled first (as Paddle)
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16], [-1, 1], {0: "sum"}), [1, 1])
    assert pdims(ins[0]) == {} and pdims(outs[0]) == {}


def test_tile_reverse_leading_dims_are_whole(mesh2d, spec):
    rule = core.get_phi_spmd_rule("tile")
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16], [-1, -1]), spec(mesh2d, [2, 8, 16], [0, 1, -1]), [2, 1, 1])
    # out's dim 0 holds the copies, which every rank makes whole from x: it cannot stay split
    assert dm(ins) == [[1, -1]] and dm(outs) == [[-1, 1, -1]]
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16], [-1, -1]), spec(mesh2d, [8, 32], [0, 1]), [1, 2])
    assert dm(ins) == [[0, -1]] and dm(outs) == [[0, -1]]


# ---- roll ---------------------------------------------------------------------------------------
def test_roll_rolled_dims_are_whole(mesh2d, spec):
    rule = core.get_phi_spmd_rule("roll")
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16], [0, 1]), [1], [1])
    assert dm(ins) == [[0, -1]] and dm(outs) == [[0, -1]]
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16], [0, 1]), [3], [-2])
    assert dm(ins) == [[-1, 1]] and dm(outs) == [[-1, 1]]
    # no axis: the flattened tensor rolls, every dim is whole
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16], [0, 1]), [3], [])
    assert dm(ins) == [[-1, -1]] and dm(outs) == [[-1, -1]]


def test_roll_grad_follows_x_then_out_grad(mesh2d, spec):
    rule = core.get_phi_spmd_rule("roll")
    assert rule.backward_kind == "grad"
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16], [0, -1]), spec(mesh2d, [8, 16], [-1, 1]), [1], [1])
    assert dm(ins) == [[0, -1], [0, -1]] and dm(outs) == [[0, -1]]
    # one mesh dim wanted by two dims: x's claim comes first
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16, 4], [0, -1, -1]), spec(mesh2d, [8, 16, 4], [-1, 0, -1]),
                                    [1], [2])
    assert dm(outs) == [[0, -1, -1]]


# ---- pad ----------------------------------------------------------------------------------------
def test_pad_padded_dims_are_whole(mesh2d, spec):
    rule = core.get_phi_spmd_rule("pad")
    x = spec(mesh2d, [8, 16], [0, 1])
    assert dm(rule.infer_forward(x, [0, 0, 1, 1], 0)[1]) == [[0, -1]]     # dim 1 padded
    assert dm(rule.infer_forward(x, [1, 0, 0, 0], 0)[1]) == [[-1, 1]]     # dim 0 padded before
    assert dm(rule.infer_forward(x, [0, 0, 0, 0], 0)[1]) == [[0, 1]]      # nothing padded


def test_pad_grad_follows_out_grad(mesh2d, spec):
    rule = core.get_phi_spmd_rule("pad")
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16], [-1, -1]), spec(mesh2d, [8, 18], [0, 1]), [0, 0, 1, 1], 0)
    # like Paddle, one input placement (out_grad's): x gives only the shape
    assert dm(ins) == [[0, -1]] and dm(outs) == [[0, -1]]


# ---- expand_as grad -----------------------------------------------------------------------------
def test_expand_as_grad_is_partial_over_broadcast_dims(mesh2d, spec):
    rule = core.get_phi_spmd_rule("expand_as_v2")
    assert rule.backward_kind == "grad"
    ins, outs = rule.infer_backward(spec(mesh2d, [1, 16], [-1, 1]), spec(mesh2d, [8, 16], [0, 1]), [8, 16])
    # x's size-1 dim 0 broadcasts over out_grad's dim 0 (split on mesh dim 0): x_grad sums it
    assert dm(ins) == [[-1, 1], [0, 1]] and dm(outs) == [[-1, 1]] and pdims(outs[0]) == {0: "sum"}
    ins, outs = rule.infer_backward(spec(mesh2d, [4, 1], [0, -1]), spec(mesh2d, [2, 4, 6], [1, -1, 0]), [2, 4, 6])
    # a leading dim x lacks (mesh dim 1) and x's size-1 last dim (mesh dim 0) are both summed
    assert dm(ins) == [[-1, -1], [1, -1, 0]] and dm(outs) == [[-1, -1]]
    assert pdims(outs[0]) == {0: "sum", 1: "sum"}


# ---- one_hot ------------------------------------------------------------------------------------
def test_one_hot_class_dim_is_whole(mesh2d, spec):
    rule = core.get_phi_spmd_rule("one_hot")
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16], [0, 1]), 10)
    assert dm(ins) == [[0, 1]] and dm(outs) == [[0, 1, -1]]
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16], [-1, -1]), spec(mesh2d, [8, 16, 10], [0, -1, 1]), 10)
    assert dm(ins) == [[0, -1]] and dm(outs) == [[0, -1, -1]]


# ---- slice / strided_slice ----------------------------------------------------------------------
def test_slice_sliced_dims_are_whole(mesh2d, spec):
    rule = core.get_phi_spmd_rule("slice")
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16, 32], [0, 1, -1]), [1], [0], [8], [1], [])
    assert dm(ins) == [[0, -1, -1]] and dm(outs) == [[0, -1, -1]]
    # decrease_axis drops the (now size-1) sliced dim from the output
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16, 32], [0, -1, 1]), [-2], [2], [3], [1], [1])
    assert dm(ins) == [[0, -1, 1]] and dm(outs) == [[0, 1]]
    # a dim split over both mesh dims is read as the larger one (as Paddle)
    ins, outs = rule.infer_forward(spec(mesh2d, [12, 16, 32], [[0, 1], -1, -1]), [2], [0], [3], [1], [])
    assert dm(ins) == [[1, -1, -1]] and dm(outs) == [[1, -1, -1]]


def test_slice_reverse(mesh2d, spec):
    rule = core.get_phi_spmd_rule("slice")
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16, 32], [-1, -1, -1]), spec(mesh2d, [8, 8, 32], [0, 1, -1]),
                                    [1], [0], [8], [1], [])
    assert dm(ins) == [[0, -1, -1]] and dm(outs) == [[0, -1, -1]]
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16, 32], [1, -1, -1]), spec(mesh2d, [8, 32], [0, 1]),
                                    [1], [0], [1], [1], [1])
    assert dm(ins) == [[0, -1, 1]] and dm(outs) == [[0, 1]]


def test_strided_slice_last_dim_split_stays_only_where_shards_line_up(mesh2d, spec):
    rule = core.get_phi_spmd_rule("strided_slice")
    x = spec(mesh2d, [8, 16, 12], [0, -1, 1])  # the last dim: 3 shards of 4
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16, 32], [0, 1, -1]), [1], [0], [16], [2])
    assert dm(ins) == [[0, -1, -1]] and dm(outs) == [[0, -1, -1]]
    # every 2nd element from the start: each shard's every 2nd element is its block of the result
    assert dm(rule.infer_forward(x, [2], [0], [12], [2])[1]) == [[0, -1, 1]]
    assert dm(rule.infer_forward(x, [-1], [-12], [2 ** 31 - 1], [2])[1]) == [[0, -1, 1]]
    # starting at 1 of a stride of 2 still lines up; at 2, shard 0 would take 2 elements, not 2 of 6 / 3
    assert dm(rule.infer_forward(x, [2], [1], [12], [2])[1]) == [[0, -1, 1]]
    assert dm(rule.infer_forward(x, [2], [2], [12], [2])[1]) == [[0, -1, -1]]
    # a stride that does not divide the shard size, or an end that cuts a selected element
    assert dm(rule.infer_forward(x, [2], [0], [12], [3])[1]) == [[0, -1, -1]]
    assert dm(rule.infer_forward(x, [2], [0], [10], [2])[1]) == [[0, -1, -1]]
    # the last element is not selected by a stride of 2 from 0, so ending before it is harmless
    assert dm(rule.infer_forward(x, [2], [0], [11], [2])[1]) == [[0, -1, 1]]
    assert dm(rule.infer_forward(x, [2], [0], [-1], [2])[1]) == [[0, -1, 1]]


def test_strided_slice_grad_follows_out_grad_first(mesh2d, spec):
    rule = core.get_phi_spmd_rule("strided_slice")
    assert rule.backward_kind == "grad"
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16, 32], [1, -1, -1]), spec(mesh2d, [8, 8, 32], [-1, -1, 1]),
                                    [1], [0], [16], [2])
    # mesh dim 1 is wanted by input's dim 0 and out_grad's dim 2: out_grad's claim comes first
    assert dm(ins) == [[-1, -1, 1], [-1, -1, 1]] and dm(outs) == [[-1, -1, 1]]
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16, 32], [0, 1, -1]), spec(mesh2d, [8, 8, 32], [-1, -1, -1]),
                                    [1], [0], [16], [2])
    assert dm(outs) == [[0, -1, -1]]  # the strided dim is whole


# ---- concat / stack / add_n ---------------------------------------------------------------------
def test_concat_aligns_the_other_dims(mesh2d, spec):
    rule = core.get_phi_spmd_rule("concat")
    ins, outs = rule.infer_forward([spec(mesh2d, [8, 16], [0, 1]), spec(mesh2d, [8, 16], [-1, 1])], 0)
    # the concat axis is whole; mesh dim 1 is agreed on dim 1
    assert dm(ins[0]) == [[-1, 1], [-1, 1]] and dm(outs) == [[-1, 1]]
    ins, outs = rule.infer_forward([spec(mesh2d, [8, 16], [0, -1]), spec(mesh2d, [8, 16], [-1, 1])], 0)
    # both mesh dims are disputed; dim 1 is the only other dim: mesh dim 0 (processed first) takes it
    assert dm(ins[0]) == [[-1, 0], [-1, 0]] and dm(outs) == [[-1, 0]]
    ins, outs = rule.infer_forward([spec(mesh2d, [8, 16], [0, -1], {1: "sum"}),
                                    spec(mesh2d, [8, 4], [0, -1], {1: "sum"})], 1)
    # a pending SUM all inputs share stays, on the output too (concat is linear)
    assert dm(ins[0]) == [[0, -1], [0, -1]] and dm(outs) == [[0, -1]]
    assert [pdims(a) for a in ins[0]] == [{1: "sum"}, {1: "sum"}] and pdims(outs[0]) == {1: "sum"}


def test_concat_reverse(mesh2d, spec):
    rule = core.get_phi_spmd_rule("concat")
    ins, outs = rule.infer_backward([spec(mesh2d, [8, 16], [-1, -1]), spec(mesh2d, [8, 16], [-1, -1])],
                                    spec(mesh2d, [16, 16], [0, 1]), 0)
    assert dm(ins[0]) == [[-1, 1], [-1, 1]] and dm(outs) == [[-1, 1]]


def test_stack(mesh2d, spec):
    rule = core.get_phi_spmd_rule("stack")
    ins, outs = rule.infer_forward([spec(mesh2d, [8, 16], [0, 1]), spec(mesh2d, [8, 16], [0, -1])], 0)
    assert dm(ins[0]) == [[0, 1], [0, 1]] and dm(outs) == [[-1, 0, 1]]
    ins, outs = rule.infer_forward([spec(mesh2d, [8, 16], [0, -1], {1: "sum"}),
                                    spec(mesh2d, [8, 16], [0, -1], {1: "sum"})], -1)
    assert dm(outs) == [[0, -1, -1]] and pdims(outs[0]) == {1: "sum"}
    ins, outs = rule.infer_backward([spec(mesh2d, [8, 16], [-1, -1]), spec(mesh2d, [8, 16], [-1, -1])],
                                    spec(mesh2d, [2, 8, 16], [0, 1, -1]), 0)
    assert dm(ins[0]) == [[1, -1], [1, -1]] and dm(outs) == [[-1, 1, -1]]


def test_add_n_keeps_a_shared_pending_sum_only(mesh2d, spec):
    rule = core.get_phi_spmd_rule("add_n")
    assert rule.backward_kind is None
    ins, outs = rule.infer_forward([spec(mesh2d, [8, 16], [0, -1]), spec(mesh2d, [8, 16], [0, 1]),
                                    spec(mesh2d, [8, 16], [0, -1])])
    assert dm(ins[0]) == [[0, 1]] * 3 and dm(outs) == [[0, 1]]
    same = [spec(mesh2d, [8, 16], [0, -1], {1: "sum"}), spec(mesh2d, [8, 16], [0, -1], {1: "sum"})]
    ins, outs = rule.infer_forward(same)
    assert [pdims(a) for a in ins[0]] == [{1: "sum"}] * 2 and pdims(outs[0]) == {1: "sum"}
    # one input partial, the other not: the sum would count the whole input on every rank
    mixed = [spec(mesh2d, [8, 16], [0, -1], {1: "sum"}), spec(mesh2d, [8, 16], [0, -1])]
    ins, outs = rule.infer_forward(mixed)
    assert [pdims(a) for a in ins[0]] == [{}, {}] and pdims(outs[0]) == {}
    # a max of addends cannot be summed
    maxes = [spec(mesh2d, [8, 16], [0, -1], {1: "max"}), spec(mesh2d, [8, 16], [0, -1], {1: "max"})]
    ins, outs = rule.infer_forward(maxes)
    assert pdims(outs[0]) == {}


# ---- split / split_with_num / unbind ------------------------------------------------------------
def test_split_returns_one_entry_per_output(mesh2d, spec):
    rule = core.get_phi_spmd_rule("split")
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16], [0, 1]), [4, 12], 1)
    assert dm(ins) == [[0, -1]] and dm(outs) == [[0, -1], [0, -1]]
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 16], [-1, -1]),
                                    [spec(mesh2d, [8, 4], [0, -1]), spec(mesh2d, [8, 12], [-1, -1])], [4, 12], 1)
    assert dm(ins) == [[0, -1]] and dm(outs) == [[0, -1], [0, -1]]
    rule = core.get_phi_spmd_rule("split_with_num")
    ins, outs = rule.infer_forward(spec(mesh2d, [6, 15], [0, 1]), 3, 0)
    assert dm(ins) == [[-1, 1]] and dm(outs) == [[-1, 1]] * 3


def test_split_reverse_split_axis_claims_its_mesh_dim(mesh2d, spec):
    rule = core.get_phi_spmd_rule("split_with_num")
    outs_in = [spec(mesh2d, [2, 6], [-1, -1]), spec(mesh2d, [2, 6], [0, -1]), spec(mesh2d, [2, 6], [-1, 0])]
    ins, outs = rule.infer_backward(spec(mesh2d, [6, 6], [-1, -1]), outs_in, 3, 0)
    # out[1] splits the split axis over mesh dim 0 first: out[2]'s dim 1 does not get it
    assert dm(ins) == [[-1, -1]] and dm(outs) == [[-1, -1]] * 3


def test_unbind(mesh2d, spec):
    rule = core.get_phi_spmd_rule("unbind")
    ins, outs = rule.infer_forward(spec(mesh2d, [2, 8, 16], [0, 1, -1]), 0)
    assert dm(ins) == [[-1, 1, -1]] and dm(outs) == [[1, -1], [1, -1]]
    # the outputs are views of x: a pending sum carries over
    ins, outs = rule.infer_forward(spec(mesh2d, [3, 8, 16], [-1, 1, -1], {0: "sum"}), -3)
    assert pdims(ins[0]) == {0: "sum"} and [pdims(o) for o in outs] == [{0: "sum"}] * 3
    ins, outs = rule.infer_backward(spec(mesh2d, [2, 2, 16], [-1, -1, -1]),
                                    [spec(mesh2d, [2, 16], [0, 1]), spec(mesh2d, [2, 16], [-1, -1])], 1)
    assert dm(ins) == [[0, -1, 1]] and dm(outs) == [[0, 1], [0, 1]]


# ---- reshape_grad -------------------------------------------------------------------------------
def test_reshape_grad_follows_x(mesh2d, spec):
    rule = core.get_phi_spmd_rule("reshape_grad")
    ins, outs = rule.infer_forward(spec(mesh2d, [6, 12, 48], [0, -1, 1]), spec(mesh2d, [72, 6, 8], [-1, -1, -1]))
    # out_grad gets the layout reshaping x's gives; x_grad has x's
    assert dm(ins) == [[0, -1, 1], [0, 1, -1]] and dm(outs) == [[0, -1, 1]]
    ins, outs = rule.infer_forward(spec(mesh2d, [6, 12], [0, -1]), spec(mesh2d, [72], [-1], {1: "sum"}))
    assert dm(ins) == [[0, -1], [0]] and dm(outs) == [[0, -1]]
    assert pdims(ins[1]) == {1: "sum"} and pdims(outs[0]) == {1: "sum"}


# ---- bad input ----------------------------------------------------------------------------------
@pytest.mark.parametrize("call, words", [
    (lambda m, s: core.get_phi_spmd_rule("roll").infer_forward(s(m, [8, 16], [0, 1]), [1], [2]),
     ["roll", "'axis'", "2"]),
    (lambda m, s: core.get_phi_spmd_rule("pad").infer_forward(s(m, [8, 16], [0, 1]), [0, 0, 1], 0),
     ["pad", "'paddings'", "3 entries"]),
    (lambda m, s: core.get_phi_spmd_rule("unbind").infer_forward(s(m, [2, 8], [0, 1]), 2),
     ["unbind", "'axis'"]),
    (lambda m, s: core.get_phi_spmd_rule("slice").infer_forward(s(m, [8, 16], [0, 1]), [1], [0], [1], [1], [3]),
     ["slice", "'decrease_axis'", "3"]),
    (lambda m, s: core.get_phi_spmd_rule("strided_slice").infer_forward(s(m, [8, 16], [0, 1]), [1], [0], [1], [1, 1]),
     ["strided_slice", "'strides'"]),
    (lambda m, s: core.get_phi_spmd_rule("concat").infer_forward([s(m, [8, 16], [0, 1]), s(m, [8], [0])], 0),
     ["concat", "'x[1]'", "rank"]),
    (lambda m, s: core.get_phi_spmd_rule("add_n").infer_forward([s(m, [8, 16], [0, 1]), s(m, [8, 12], [0, 1])]),
     ["add_n", "'x[1]'", "dim 1"]),
    (lambda m, s: core.get_phi_spmd_rule("split").infer_backward(s(m, [8, 16], [0, 1]), [s(m, [8, 4], [0, 1])],
                                                                 [4, 12], 1),
     ["split", "'out'", "1 tensors", "2"]),
    (lambda m, s: core.get_phi_spmd_rule("reshape_grad").infer_forward(s(m, [6, 12], [0, 1]), s(m, [70], [0])),
     ["reshape_grad", "'out_grad'", "70"]),
    (lambda m, s: core.get_phi_spmd_rule("expand_as").infer_backward(s(m, [4, 3], [0, 1]), s(m, [2, 4, 6], [1, -1, 0]),
                                                                     [2, 4, 6]),
     ["expand_as", "'out_grad'", "dim 2", "size 6"]),
])
def test_bad_input_raises_value_error(mesh2d, spec, call, words):
    with pytest.raises(ValueError) as e:
        call(mesh2d, spec)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_bad_attribute_type_raises_type_error(mesh2d, spec):
    with pytest.raises(TypeError, match="tile.*'repeat_times'"):
        core.get_phi_spmd_rule("tile").infer_forward(spec(mesh2d, [8, 16], [0, 1]), "2")
    with pytest.raises(TypeError, match="concat.*'x'"):
        core.get_phi_spmd_rule("concat").infer_forward([spec(mesh2d, [8, 16], [0, 1]), 3], 0)


# ---- the spec keys this family added: checked at generation time --------------------------------
@pytest.mark.parametrize("entry, words", [
    ("""- op: bad
  inputs: [x]
  outputs: [out]
  attrs: {reps: "int64[]"}
  einsum: "... -> ..."
  whole: {x: reps, keep: 1, lead: true}
""", ["'lead' needs 'align: end'"]),
    ("""- op: bad
  inputs: [x]
  outputs: [out]
  attrs: {axis: "int64[]"}
  einsum: "... -> ..."
  whole: {x: axis, per_dim: 2}
""", ["'per_dim' needs 'keep'"]),
    ("""- op: bad
  inputs: [x]
  outputs: ["out[]"]
  attrs: {axis: int}
  einsum: "A u B -> A B"
  groups: {A: axis}
  count: {out: "y[axis]"}
""", ["'count' names 'y', which is not an input"]),
    ("""- op: bad
  inputs: [x]
  outputs: [out]
  einsum: "... -> ..."
  flat_outputs: true
""", ["'flat_outputs' needs a list output"]),
    ("""- op: bad
  inputs: [x, g]
  outputs: [out]
  einsum: "..., ... -> ..."
  unbroadcast: {x_grad: x}
""", ["'unbroadcast' names 'x_grad'"]),
])
def test_new_spec_keys_are_checked(load_rules, spec_error, entry, words):
    with pytest.raises(spec_error) as e:
        load_rules(entry, "fam.yaml")
    assert "fam.yaml: entry 'bad'" in str(e.value)
    for w in words:
        assert w in str(e.value), (w, str(e.value))
