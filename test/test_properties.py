"""Properties every rule result must have, over random meshes, shapes and mappings."""
import random

from hypothesis import given, settings, strategies as st

from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core

MESHES = [[4], [2, 2], [2, 3], [2, 2, 2]]


def make_mesh(shape):
    n = 1
    for d in shape:
        n *= d
    ids = list(range(n))
    for d in reversed(shape[1:]):
        ids = [ids[i:i + d] for i in range(0, len(ids), d)]
    return ProcessMesh(ids)


def random_attr(rng, mesh, rank):
    dims = list(range(len(mesh.shape))) + [-1] * rank
    rng.shuffle(dims)
    a = TensorDistAttr()
    a.process_mesh = mesh
    a.dims_mapping = [d for d in dims[:rank]]
    return a


def spec(rng, mesh, shape):
    return DistTensorSpec(list(shape), random_attr(rng, mesh, len(shape)))


def valid(attr, mesh, rank):
    used = [m for d in attr.multi_dims_mapping for m in d]
    return (len(attr.multi_dims_mapping) == rank and len(used) == len(set(used))
            and all(0 <= m < len(mesh.shape) for m in used)
            and not (set(used) & set(attr._partial_dims())))


def random_call(rng):
    mesh = make_mesh(rng.choice(MESHES))
    sizes = [1, 2, 3, 4, 6, 8, 12]
    kind = rng.choice(["matmul", "add", "relu", "sum", "softmax", "transpose", "reshape", "layer_norm"])
    rank = rng.randint(1, 4)
    shape = [rng.choice(sizes) for _ in range(rank)]
    if kind == "matmul":
        k = rng.choice(sizes)
        x, y = shape[:-1] + [k], [k, rng.choice(sizes)]
        return kind, [spec(rng, mesh, x), spec(rng, mesh, y), False, False], [len(x), 2]
    if kind == "add":
        y = shape[rng.randint(0, rank - 1):]
        return kind, [spec(rng, mesh, shape), spec(rng, mesh, y)], [rank, len(y)]
    if kind == "relu":
        return kind, [spec(rng, mesh, shape)], [rank]
    if kind == "sum":
        axes = sorted(rng.sample(range(rank), rng.randint(0, rank)))
        return kind, [spec(rng, mesh, shape), axes, rng.random() < 0.5], [rank]
    if kind == "softmax":
        return kind, [spec(rng, mesh, shape), rng.randint(-rank, rank - 1)], [rank]
    if kind == "transpose":
        perm = list(range(rank))
        rng.shuffle(perm)
        return kind, [spec(rng, mesh, shape), perm], [rank]
    if kind == "reshape":
        n = 1
        for d in shape:
            n *= d
        target = [n] if rng.random() < 0.5 else list(reversed(shape))
        return kind, [spec(rng, mesh, shape), target], [rank]
    begin = rng.randint(1, rank)
    return kind, [spec(rng, mesh, shape), None, None, 1e-5, begin], [rank, 0, 0]


@settings(max_examples=400, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_results_are_valid_layouts(seed):
    rng = random.Random(seed)
    name, args, in_ranks = random_call(rng)
    mesh = args[0].process_mesh
    ins, outs = core.get_phi_spmd_rule(name).infer_forward(*args)
    for a, r in zip(ins, in_ranks):
        if r:
            assert valid(a, mesh, r), (name, a)
    for a in outs:
        assert valid(a, mesh, len(a.multi_dims_mapping)), (name, a)


@settings(max_examples=400, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_forward_is_a_fixpoint_on_its_own_inputs(seed):
    """Feeding the inferred input layouts back in changes nothing: no reshard is asked twice."""
    rng = random.Random(seed)
    name, args, in_ranks = random_call(rng)
    rule = core.get_phi_spmd_rule(name)
    ins, outs = rule.infer_forward(*args)
    again = [DistTensorSpec(a.shape, ins[i]) if isinstance(a, DistTensorSpec) else a for i, a in enumerate(args)]
    ins2, outs2 = rule.infer_forward(*again)
    assert [a.multi_dims_mapping for a in ins2] == [a.multi_dims_mapping for a in ins]
    assert [(a.multi_dims_mapping, a.partial_status) for a in outs2] == [(a.multi_dims_mapping, a.partial_status) for a in outs]
