"""TensorShardings drive spmdkit's rules through TensorDistAttr and read their answers back."""
from spmdkit import DistTensorSpec, core
from spmdkit.sharding import TensorSharding, from_dist_attr, parse_mesh, parse_sharding, to_dist_attr

MESH = parse_mesh('<["x"=2, "y"=2]>')


def spec(text, shape):
    return DistTensorSpec(list(shape), to_dist_attr(parse_sharding(text), MESH))


def test_matmul_contracting_over_y_leaves_the_output_unreduced_over_y():
    rule = core.get_phi_spmd_rule("matmul")
    _, (out,) = rule.infer_forward(spec('<@m, [{"x"}, {"y"}]>', (8, 4)), spec('<@m, [{"y"}, {}]>', (4, 6)),
                                   False, False)
    result = from_dist_attr(out, "m")  # rules answer with TensorDistAttrs
    assert str(result) == '#sdy.sharding<@m, [{"x"}, {}], unreduced={"y"}>'


def test_a_dim_over_two_axes_goes_through_a_rule_unchanged():
    rule = core.get_phi_spmd_rule("relu")
    (x,), (out,) = rule.infer_forward(spec('<@m, [{"y", "x"}, {}]>', (8, 4)))
    for t in (x, out):
        got = from_dist_attr(t, "m")
        assert got == TensorSharding("m", parse_sharding('<@m, [{"y", "x"}, {}]>').dims)
