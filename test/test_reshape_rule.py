import pytest

from spmdkit import core


def run(name, mesh, spec, shape, mapping, *attrs):
    ins, outs = core.get_phi_spmd_rule(name).infer_forward(spec(mesh, shape, mapping), *attrs)
    return ins[0].dims_mapping, outs[0].dims_mapping


@pytest.mark.parametrize("shape,mapping,target,want_in,want_out", [
    ([6, 12, 48], [0, -1, 1], [72, 6, 8], [0, -1, 1], [0, 1, -1]),     # flatten 6x12, split 48 = 6x8
    ([6, 12, 48], [-1, 0, -1], [72, 6, 8], [-1, -1, -1], [-1, -1, -1]),  # a non-leading flattened dim cannot stay split
    ([6, 12, 48], [0, 1, -1], [0, -1, 8], [0, 1, -1], [0, 1, -1]),      # 0 keeps a dim, -1 is inferred
    ([8, 1, 16], [0, -1, 1], [8, 16], [0, -1, 1], [0, 1]),               # dropping a size-1 dim
    ([12, 8], [0, -1], [3, 4, 8], [-1, -1], [-1, -1, -1]),               # leading part 3 not divisible by 2
    ([12, 8], [0, -1], [4, 3, 8], [0, -1], [0, -1, -1]),
])
def test_reshape_forward(shape, mapping, target, want_in, want_out, spec):
    from spmdkit import ProcessMesh
    mesh = ProcessMesh([[0, 1], [2, 3]])
    assert run("reshape", mesh, spec, shape, mapping, target) == (want_in, want_out)


def test_reshape_reverse(spec):
    from spmdkit import ProcessMesh
    mesh = ProcessMesh([[0, 1], [2, 3]])
    ins, outs = core.get_phi_spmd_rule("reshape").infer_backward(
        spec(mesh, [6, 12, 48], [-1, -1, -1]), spec(mesh, [72, 6, 8], [0, 1, -1]), [72, 6, 8])
    assert ins[0].dims_mapping == [0, -1, 1] and outs[0].dims_mapping == [0, 1, -1]


def test_reshape_keeps_partial(mesh2d, spec):
    ins, outs = core.get_phi_spmd_rule("reshape").infer_forward(spec(mesh2d, [6, 8], [-1, -1], {0: "sum"}), [48])
    assert outs[0].partial_status == {0: "sum"}


def test_flatten_squeeze_unsqueeze(mesh2d, spec):
    assert run("flatten", mesh2d, spec, [4, 6, 8], [0, -1, 1], 1, 2) == ([0, -1, -1], [0, -1])
    assert run("flatten", mesh2d, spec, [4, 6, 8], [-1, 1, -1], 1, -1) == ([-1, 1, -1], [-1, 1])
    assert run("squeeze", mesh2d, spec, [4, 1, 8], [0, -1, 1], [1]) == ([0, -1, 1], [0, 1])
    assert run("squeeze", mesh2d, spec, [1, 4, 1], [-1, 1, -1], []) == ([-1, 1, -1], [1])
    assert run("unsqueeze", mesh2d, spec, [4, 8], [0, 1], [0, -1]) == ([0, 1], [-1, 0, 1, -1])
    assert run("unsqueeze2", mesh2d, spec, [4, 8], [1, -1], [1]) == ([1, -1], [1, -1, -1])


@pytest.mark.parametrize("target,match", [([7, 3], "holds 21 elements"), ([-1, -1], "at most one"), ([5, -1], "divide")])
def test_bad_reshape_targets_raise(target, match, mesh2d, spec):
    with pytest.raises(ValueError, match=match):
        core.get_phi_spmd_rule("reshape").infer_forward(spec(mesh2d, [6, 8], [0, -1]), target)


# -- a dim split over several mesh dims, cut into parts (a reshape splitting heads into groups) ---
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _executes(shape, in_mm, target, out_mm, sizes) -> bool:
    """Whether every device's block of x, reshaped locally, is its block of the reshaped x."""
    import numpy as np
    from spmdkit.sharding import DimSharding, Mesh, MeshAxis, TensorSharding
    from spmdkit.sharding.layout import device_slices
    mesh = Mesh([MeshAxis(n, s) for n, s in zip("ab", sizes)])
    x = np.arange(int(np.prod(shape))).reshape(shape)
    y = x.reshape(target)
    ins = device_slices(TensorSharding(mesh, [DimSharding(["ab"[m] for m in d]) for d in in_mm]), shape)
    outs = device_slices(TensorSharding(mesh, [DimSharding(["ab"[m] for m in d]) for d in out_mm]), target)
    for device, sl in ins.items():
        local = x[sl]
        want = y[outs[device]]
        if local.size != want.size or not np.array_equal(local.reshape(want.shape), want):
            return False
    return True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_co_split_dim_cut_into_parts_keeps_its_split_across_the_parts(spec, data):
    from spmdkit import ProcessMesh
    sizes = data.draw(st.tuples(st.sampled_from([2, 3, 4]), st.sampled_from([2, 3, 4])))
    mesh = ProcessMesh([[j + sizes[1] * i for j in range(sizes[1])] for i in range(sizes[0])], dim_names=["a", "b"])
    parts = data.draw(st.lists(st.sampled_from([1, 2, 3, 4, 6, 8]), min_size=2, max_size=3))
    order = data.draw(st.sampled_from([[0, 1], [1, 0]]))
    n = 1
    for p in parts:
        n *= p
    shape, target = [2, n], [2, *parts]
    ins, outs = core.get_phi_spmd_rule("jax.reshape").infer_forward(spec(mesh, shape, [-1, order]), target, [])
    in_mm, out_mm = ins[0].multi_dims_mapping, outs[0].multi_dims_mapping
    assert in_mm[1] == order[:len(in_mm[1])]  # a major run of the split is kept, the rest gathered
    assert _executes(shape, in_mm, target, out_mm, sizes)
    # heads of 4 over (a, b), |a| = |b| = 2, cut into 2 groups of 2: one mesh dim per part
    if sizes == (2, 2) and parts[:2] == [2, 2] and len(parts) == 2:
        assert in_mm[1] == order and out_mm[1:] == [[order[0]], [order[1]]]


def test_jax_reshape_refuses_a_transposing_dimensions(mesh2d, spec):
    # lax.reshape's `dimensions` transposes first; read as a plain reshape it would be a wrong
    # answer, so the rule refuses it (import_jax writes the transpose as its own op)
    rule = core.get_phi_spmd_rule("jax.reshape")
    x = spec(mesh2d, [8, 16], [0, 1])
    assert rule.infer_forward(x, [16, 8], [0, 1])[0][0].dims_mapping == rule.infer_forward(x, [16, 8], [])[0][0].dims_mapping
    for call in (lambda: rule.infer_forward(x, [16, 8], [1, 0]),
                 lambda: rule.infer_backward(x, spec(mesh2d, [16, 8], [0, -1]), [16, 8], [1, 0])):
        with pytest.raises(ValueError, match=r"jax.reshape: attribute 'dimensions' = \[1, 0\] transposes"):
            call()
