import pytest

from spmdkit import core


def test_sum_split_reduced_dim_is_partial_sum(mesh2d, spec):
    ins, outs = core.get_phi_spmd_rule("sum").infer_forward(spec(mesh2d, [8, 16, 32], [0, 1, -1]), [1], False)
    assert ins[0].dims_mapping == [0, 1, -1]
    assert outs[0].dims_mapping == [0, -1] and outs[0].partial_status == {1: "sum"}


def test_keep_dim_and_negative_axis(mesh2d, spec):
    ins, outs = core.get_phi_spmd_rule("sum").infer_forward(spec(mesh2d, [8, 16, 32], [0, -1, 1]), [-1], True)
    assert outs[0].dims_mapping == [0, -1, -1] and outs[0].partial_status == {1: "sum"}


def test_empty_axis_reduces_everything(mesh2d, spec):
    ins, outs = core.get_phi_spmd_rule("sum").infer_forward(spec(mesh2d, [8, 16], [0, 1]), [], False)
    assert outs[0].dims_mapping == [] and outs[0].partial_status == {0: "sum", 1: "sum"}


@pytest.mark.parametrize("name,kind", [("max", "max"), ("reduce_max", "max"), ("amax", "max"), ("min", "min"), ("amin", "min")])
def test_max_min_partial_has_the_right_reduce_type(name, kind, mesh2d, spec):
    # Paddle 3.3.1 says "sum" here; a max of shards must be reduced with max (see docs/differences.md).
    ins, outs = core.get_phi_spmd_rule(name).infer_forward(spec(mesh2d, [8, 16], [0, 1]), [0], False)
    assert outs[0].dims_mapping == [1] and outs[0].partial_status == {0: kind}


@pytest.mark.parametrize("reduce_type,kind", [(0, "sum"), (1, "max"), (2, "min"), (3, "prod"), (4, "avg"), (5, "any"), (6, "all")])
def test_reduce_base_takes_the_type_from_its_attribute(reduce_type, kind, mesh2d, spec):
    ins, outs = core.get_phi_spmd_rule("reduce_base").infer_forward(spec(mesh2d, [8, 18], [0, 1]), [1], False, reduce_type)
    assert outs[0].dims_mapping == [0] and outs[0].partial_status == {1: kind}


def test_reduce_base_rejects_unknown_type(mesh2d, spec):
    with pytest.raises(ValueError, match="reduce_type"):
        core.get_phi_spmd_rule("reduce_base").infer_forward(spec(mesh2d, [8, 16], [0, 1]), [1], False, 7)


def test_mean_all_is_partial_avg_and_its_grad(mesh2d, spec):
    rule = core.get_phi_spmd_rule("mean_all")
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 18], [0, 1]))
    assert outs[0].dims_mapping == [] and outs[0].partial_status == {0: "avg", 1: "avg"}
    # an average of uneven shards is not the average: a split that does not divide is dropped
    ins, outs = rule.infer_forward(spec(mesh2d, [8, 16], [0, 1]))
    assert ins[0].dims_mapping == [0, -1] and outs[0].partial_status == {0: "avg"}
    # the grad kernel divides by the local element count, so x and the grad stay whole
    ins, outs = rule.infer_backward(spec(mesh2d, [8, 18], [0, 1]), spec(mesh2d, [], []))
    assert [a.dims_mapping for a in ins] == [[-1, -1], []] and outs[0].dims_mapping == [-1, -1]


def test_reduction_reverse(mesh2d, spec):
    ins, outs = core.get_phi_spmd_rule("sum").infer_backward(spec(mesh2d, [8, 16, 32], [-1, -1, -1]),
                                                             spec(mesh2d, [8, 32], [0, 1]), [1], False)
    assert ins[0].dims_mapping == [0, -1, 1] and outs[0].dims_mapping == [0, 1] and not outs[0]._is_partial()
