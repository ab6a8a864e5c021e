"""Differential: on conflict-free inputs, one propagation step through an op equals the op's own
rule in the registry (Paddle 3.3.1's API, spmdkit.core): the output split and the partial axes.
Mesh dims 0/1 are the named axes "x"/"y"."""
from hypothesis import given, settings, strategies as st

from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core
from spmdkit.propagation import Graph
from spmdkit.propagation.simulate import partial_axes

MESH = ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])
AXES = ("x", "y")


def spec(shape, mapping):
    attr = TensorDistAttr()
    attr.process_mesh = MESH
    attr.dims_mapping = list(mapping)
    return DistTensorSpec(list(shape), attr)


def text(mapping):
    return "[" + ", ".join("{}" if m < 0 else '{"' + AXES[m] + '"}' for m in mapping) + "]"


def mapping_of(g, v):
    return [AXES.index(d[0][0]) if d else -1 for d in g.dim_axes(v)]


@st.composite
def matmul_case(draw):
    m, k, n = draw(st.sampled_from([(-1, -1, -1), (0, -1, 1), (0, 1, -1), (-1, 0, 1), (1, 0, -1), (-1, 1, 0),
                                    (0, -1, -1), (-1, -1, 1), (-1, 0, -1), (1, -1, 0)]))
    return [m, k], [k, n]


@settings(max_examples=40, deadline=None)
@given(matmul_case())
def test_matmul_step_equals_the_matmul_rule(case):
    xm, ym = case
    g = Graph()
    g.mesh("mesh", x=2, y=2)
    a, b = g.value([8, 16], text(xm)), g.value([16, 4], text(ym))
    out = g.op("matmul", "ik,kj->ij", [a, b], [[8, 4]], reduction="k")
    g.propagate()
    _, (rule_out,) = core.get_phi_spmd_rule("matmul").infer_forward(spec([8, 16], xm), spec([16, 4], ym), False, False)
    assert mapping_of(g, out) == list(rule_out.dims_mapping)
    assert sorted(AXES.index(name) for name, _, _ in partial_axes(g, 0)) == sorted(rule_out._partial_dims())


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([[-1, -1], [0, -1], [-1, 1], [1, 0], [0, 1]]))
def test_elementwise_and_softmax_steps_equal_their_rules(mapping):
    g = Graph()
    g.mesh("mesh", x=2, y=2)
    a, b = g.value([8, 4], text(mapping)), g.value([8, 4], text(mapping))
    s = g.op("add", "ij,ij->ij", [a, b], [[8, 4]])
    sm = g.op("softmax", "ij->ij", [a], [[8, 4]], need_replication="j")
    g.propagate()
    _, (add_out,) = core.get_phi_spmd_rule("add").infer_forward(spec([8, 4], mapping), spec([8, 4], mapping))
    _, (sm_out,) = core.get_phi_spmd_rule("softmax").infer_forward(spec([8, 4], mapping), -1)
    assert mapping_of(g, s) == list(add_out.dims_mapping)
    assert mapping_of(g, sm) == list(sm_out.dims_mapping)
