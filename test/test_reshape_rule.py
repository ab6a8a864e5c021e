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
