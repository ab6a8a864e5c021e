"""jax.conv_general_dilated | stablehlo.convolution (rules_yaml/jax_region_ops.yaml): behaviour,
errors, execution on the simulator (0 wrong) and why its spatial dims are whole.
test_shardy_differential.py compares its table with jaxlib's Shardy."""
import numpy as np
import pytest

from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core
from spmdkit.verify import Placement, TensorArg, get_backend, load_specs, run_random
from spmdkit.verify.simulate import Execution, verify_placements

MESH = ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])
SPECS = load_specs()
P = Placement.make
NCHW = ([0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 2, 3])  # lhs_spec, rhs_spec, out_spec


def T(*shape, mapping=None):
    attr = TensorDistAttr()
    attr.process_mesh = MESH
    attr.dims_mapping = list(mapping) if mapping is not None else [-1] * len(shape)
    return DistTensorSpec(list(shape), attr)


def conv():
    return core.get_phi_spmd_rule("stablehlo.convolution")


def test_is_jax_conv_and_executes_right_on_the_simulator():
    assert conv().op == "jax.conv_general_dilated"
    for tally in run_random(get_backend("spmdkit"), SPECS["jax.conv_general_dilated"], SPECS, cases=80, seed=13):
        assert tally.wrong == 0, (tally.function, tally.counterexample)
        assert tally.correct > 0, (tally.function, tally.notes[:2])


def test_batch_and_out_features_pass_in_features_contract_spatial_whole():
    (x, w), (out,) = conv().infer_forward(T(4, 6, 8, 8, mapping=[0, 1, -1, -1]), T(10, 6, 3, 3), *NCHW, [1, 1],
                                          [1, 1, 1, 1])
    assert x.dims_mapping == [0, 1, -1, -1] and w.dims_mapping == [-1, 1, -1, -1]
    assert out.dims_mapping == [0, -1, -1, -1] and out.partial_status == {1: "sum"}
    (x, w), (out,) = conv().infer_forward(T(4, 6, 8, 8, mapping=[-1, -1, 0, 1]), T(10, 6, 3, 3, mapping=[1, -1, -1, -1]),
                                          *NCHW, [1, 1], [1, 1, 1, 1])
    assert x.dims_mapping == [-1, -1, -1, -1] and out.dims_mapping == [-1, 1, -1, -1]
    table = conv().factors(T(4, 6, 8, 8), T(10, 6, 3, 3), *NCHW, [2, 2])
    assert str(table) == ("([i, j, k, l], [m, j, n, o])->([i, m, k, l]) {i=4, j=6, k=3, l=3, m=10, n=1, o=1} "
                          "reduction={j} permutation={k, l}")


def test_grouped_convolution_keeps_features_whole():
    (x, w), (out,) = conv().infer_forward(T(4, 6, 8, mapping=[0, 1, -1]), T(6, 3, 3, mapping=[1, -1, -1]),
                                          [0, 1, 2], [0, 1, 2], [0, 1, 2], feature_group_count=2)
    assert x.dims_mapping == [0, -1, -1] and w.dims_mapping == [-1, -1, -1]
    assert out.dims_mapping == [0, -1, -1] and out.partial_status == {}
    (x, w), (out,) = conv().infer_forward(T(4, 6, 8, mapping=[0, -1, -1]), T(6, 6, 3),
                                          [0, 1, 2], [0, 1, 2], [0, 1, 2], batch_group_count=2)
    assert x.dims_mapping == [-1, -1, -1] and out.dims_mapping == [-1, -1, -1]


@pytest.mark.parametrize("args,kw,match", [
    ((T(4, 6, 8), T(5, 6, 3), [0, 1], [0, 1, 2], [0, 1, 2]), {}, r"lhs_spec.*2 entries"),
    ((T(4, 6, 8), T(5, 6, 3), [0, 1, 1], [0, 1, 2], [0, 1, 2]), {}, r"lhs_spec.*names dim 1"),
    ((T(4, 6, 8), T(5, 4, 3), [0, 1, 2], [0, 1, 2], [0, 1, 2]), {}, r"feature dim.*size 6.*has 4"),
    ((T(4, 6, 8), T(5, 3, 3), [0, 1, 2], [0, 1, 2], [0, 1, 2]), {"feature_group_count": 2}, r"feature_group_count.*5"),
    ((T(4, 6, 2), T(5, 6, 3), [0, 1, 2], [0, 1, 2], [0, 1, 2]), {}, r"spatial dim 0 of size 2.*span 3"),
    ((T(4, 6, 8), T(5, 6, 3, 3), [0, 1, 2], [0, 1, 2], [0, 1, 2]), {}, r"rank"),
])
def test_bad_calls_raise_naming_the_op(args, kw, match):
    with pytest.raises(ValueError, match=match) as e:
        conv().infer_forward(*args, **kw)
    assert "conv" in str(e.value)


def test_split_spatial_dim_is_wrong_when_executed():
    """Why spatial dims are whole (Shardy: a permutation factor too): with a 3-wide kernel and
    SAME padding, each rank convolving its own rows misses its neighbours' halo rows."""
    spec = SPECS["jax.conv_general_dilated"]
    attrs = [[0, 1, 2], [0, 1, 2], [0, 1, 2], [1], [1, 1], [1], [1], 1, 1]
    ex = Execution(spec, (2,), [TensorArg((2, 3, 8), P([-1, -1, -1]), None), TensorArg((4, 3, 3), P([-1, -1, -1]), None)],
                   attrs, np.random.default_rng(3))
    assert verify_placements(ex, [P([-1, -1, -1]), P([-1, -1, -1])], [P([-1, -1, -1])])
    split = [P([-1, -1, 0]), P([-1, -1, -1])]
    candidates = [P([-1, -1, -1]), P([-1, -1, -1], {0: "sum"}), P([0, -1, -1]), P([-1, 0, -1]), P([-1, -1, 0])]
    assert not any(verify_placements(ex, split, [c]) for c in candidates)
