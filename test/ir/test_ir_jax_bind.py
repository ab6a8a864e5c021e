"""bind: an IR op -> its registry rule's arguments, read from the rule's own signature.

Three proofs: (1) on this build's Paddle rules, a bound op's `infer_forward` equals calling the
rule directly, for lists, optional tensors and attributes by name; (2) against the signatures of
docs/jax_stablehlo_rules.md (rules that may not be built yet, stubbed here with exactly those
signatures), the GPT step's imported ops bind with the right operands and attributes; (3) with
the real jax.* rules built, every GPT op binds and runs (skipped while they are not).
"""
from __future__ import annotations

import jax
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core
from spmdkit.ir import ProgramBuilder, RuleBindingError, bind, import_jax
from spmdkit.models import gpt

PMESH = ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])


def spec(shape, mapping):
    attr = TensorDistAttr()
    attr.process_mesh = PMESH
    attr.dims_mapping = list(mapping)
    return DistTensorSpec(list(shape), attr)


def _mappings(result):
    ins, outs = result
    flat = lambda xs: [[s.dims_mapping for s in x] if isinstance(x, list) else x.dims_mapping for x in xs]  # noqa
    return flat(ins), flat(outs)


def _op(result):
    """The op of a builder result (one Value, or a list of them)."""
    return (result[0] if isinstance(result, list) else result).owner


def _builder():
    pb = ProgramBuilder()
    return pb, pb.function()


@settings(max_examples=25, deadline=None)
@given(tx=st.booleans(), ty=st.booleans(), mx=st.lists(st.sampled_from([-1, 0, 1]), min_size=2, max_size=2),
       my=st.lists(st.sampled_from([-1, 0, 1]), min_size=2, max_size=2))
def test_bound_matmul_equals_direct_call(tx, ty, mx, my):
    if mx[0] == mx[1] != -1 or my[0] == my[1] != -1:
        mx, my = [mx[0], -1], [-1, my[1]]
    _, f = _builder()
    x = f.arg((8, 6) if not tx else (6, 8))
    y = f.arg((6, 4) if not ty else (4, 6))
    out = f.op("matmul", [x, y], {"trans_x": tx, "trans_y": ty}, result_types=[(8, 4)])
    call = bind(out.owner)
    specs = {id(x): spec(x.type.shape, mx), id(y): spec(y.type.shape, my)}
    got = call.infer_forward(lambda v: specs[id(v)])
    want = core.get_phi_spmd_rule("matmul").infer_forward(specs[id(x)], specs[id(y)], tx, ty)
    assert _mappings(got) == _mappings(want)


def test_lists_optionals_and_named_attributes():
    _, f = _builder()
    a, b, c = f.arg((4, 8)), f.arg((4, 8)), f.arg((4, 8))
    cat = bind(_op(f.op("concat", [a, b, c], {"axis": 1}, result_types=[(4, 24)])))
    assert cat.inputs == [[a, b, c]] and cat.attrs == {"axis": 1}
    specs = lambda v: spec(v.type.shape, [0, -1])  # noqa: E731
    assert _mappings(cat.infer_forward(specs))[1] == [[0, -1]]
    scale, bias = f.arg((8,)), f.arg((8,))
    ln3 = bind(_op(f.op("layer_norm", [a, scale, bias], {"begin_norm_axis": 1},
                        result_types=[(4, 8), (4,), (4,)])))
    assert ln3.inputs == [a, scale, bias] and ln3.attrs == {"begin_norm_axis": 1}
    ln1 = bind(_op(f.op("layer_norm", [a], {}, result_types=[(4, 8), (4,), (4,)])))
    assert ln1.inputs == [a, None, None] and ln1.attrs == {}
    got = ln1.infer_forward(lambda v: spec(v.type.shape, [0, 1]))
    want = core.get_phi_spmd_rule("layer_norm").infer_forward(spec((4, 8), [0, 1]), None, None)
    assert _mappings(got) == _mappings(want)
    sp = bind(_op(f.op("split", [a], {"sections": [4, 4], "axis": 1, "ignored_attr": 7},
                       result_types=[(4, 4), (4, 4)])))
    assert sp.attrs == {"sections": [4, 4], "axis": 1}  # attributes the rule does not take are not passed


def test_binding_errors_name_the_op():
    _, f = _builder()
    a = f.arg((4, 8))
    with pytest.raises(RuleBindingError, match="'split' needs attribute 'sections'") as info:
        bind(_op(f.op("split", [a], {"axis": 1}, result_types=[(4, 4), (4, 4)])))
    assert info.value.op == "split"
    with pytest.raises(RuleBindingError, match="has 3 operands; rule 'matmul' takes 2"):
        bind(_op(f.op("matmul", [a, a, a], {}, result_types=[(4, 4)])))
    with pytest.raises(RuleBindingError, match="has 0 operands; rule 'layer_norm' takes 1 to 3"):
        bind(_op(f.op("layer_norm", [], {}, result_types=[(4, 8)])))
    with pytest.raises(RuleBindingError, match="no rule named 'frobnicate'"):
        bind(_op(f.op("frobnicate", [a], {}, result_types=[(4, 8)])))
    with pytest.raises(TypeError, match="Op"):
        bind(a)


# -- the contract's signatures (docs/jax_stablehlo_rules.md), stubbed -----------------------------
T, L, O, I, IL, S = "tensor", "tensor_list", "output_tensor", "int", "int64_list", "str"
CONTRACT = {
    "jax.dot_general": [("lhs", T, 0), ("rhs", T, 0), ("lhs_contracting_dimensions", IL, 0),
                        ("rhs_contracting_dimensions", IL, 0), ("lhs_batching_dimensions", IL, 1),
                        ("rhs_batching_dimensions", IL, 1)],
    "jax.select_n": [("which", T, 0), ("cases", L, 0)],
    "jax.gather": [("operand", T, 0), ("start_indices", T, 0), ("offset_dims", IL, 0),
                   ("collapsed_slice_dims", IL, 0), ("start_index_map", IL, 0), ("slice_sizes", IL, 0),
                   ("operand_batching_dims", IL, 1), ("start_indices_batching_dims", IL, 1),
                   ("index_vector_dim", I, 1)],
    "jax.scatter-add": [("operand", T, 0), ("scatter_indices", T, 0), ("updates", T, 0),
                        ("update_window_dims", IL, 0), ("inserted_window_dims", IL, 0),
                        ("scatter_dims_to_operand_dims", IL, 0), ("input_batching_dims", IL, 1),
                        ("scatter_indices_batching_dims", IL, 1), ("index_vector_dim", I, 1)],
    "jax.broadcast_in_dim": [("operand", T, 0), ("shape", IL, 0), ("broadcast_dimensions", IL, 0)],
    "jax.reshape": [("operand", T, 0), ("new_sizes", IL, 0), ("dimensions", IL, 1)],
    "jax.iota": [("out", O, 0), ("shape", IL, 0), ("dimension", I, 0)],  # no input: its result is passed
    "jax.reduce_sum": [("operand", T, 0), ("axes", IL, 0)],
    "jax.split": [("operand", T, 0), ("sizes", IL, 0), ("axis", I, 0)],
    "jax.concatenate": [("operands", L, 0), ("dimension", I, 0)],
    "jax.convert_element_type": [("x", T, 0), ("new_dtype", S, 1)],
    "jax.integer_pow": [("x", T, 0), ("y", I, 0)],
    "jax.transpose": [("operand", T, 0), ("permutation", IL, 0)],
    "jax.add": [("x", T, 0), ("y", T, 0)],
}


class _StubRule:
    def __init__(self, params):
        self.forward_params = [(n, k, bool(d)) for n, k, d in params]


@pytest.fixture
def contract_registry(monkeypatch):
    real_contains, real_get = core.contains_spmd_rule, core.get_phi_spmd_rule
    monkeypatch.setattr(core, "contains_spmd_rule", lambda n: n in CONTRACT or real_contains(n))
    monkeypatch.setattr(core, "get_phi_spmd_rule",
                        lambda n: _StubRule(CONTRACT[n]) if n in CONTRACT else real_get(n))


@pytest.fixture(scope="module")
def train_program():
    cfg = gpt.GPTConfig()
    params = gpt.init_params(jax.random.PRNGKey(0), cfg)
    return import_jax(gpt.train_step, params, *gpt.example_batch(jax.random.PRNGKey(1), cfg))


def test_gpt_ops_bind_to_the_contract_signatures(contract_registry, train_program):
    bound = {}
    for op in train_program.walk():
        if op.name in CONTRACT:
            bound.setdefault(op.name, []).append((op, bind(op)))
    assert set(bound) == set(CONTRACT)
    for op, call in bound["jax.dot_general"]:
        assert call.inputs == op.operands
        assert set(call.attrs) == {"lhs_contracting_dimensions", "rhs_contracting_dimensions",
                                   "lhs_batching_dimensions", "rhs_batching_dimensions"}
    for op, call in bound["jax.select_n"]:
        assert call.inputs == [op.operands[0], op.operands[1:]]
    for op, call in bound["jax.concatenate"]:
        assert call.inputs == [op.operands] and call.attrs == {"dimension": op.attrs["dimension"]}
    for op, call in bound["jax.iota"]:
        assert call.inputs == [op.result] and call.attrs == {"shape": op.attrs["shape"],
                                                             "dimension": op.attrs["dimension"]}
    for op, call in bound["jax.reshape"]:
        assert "dimensions" not in call.attrs  # None in the jaxpr: the rule's default applies
    for op, call in bound["jax.scatter-add"]:
        assert call.inputs == op.operands and "input_batching_dims" in call.attrs
    for op, call in bound["jax.gather"]:
        assert "index_vector_dim" not in call.attrs and len(call.attrs) == 6
    args = bound["jax.select_n"][0][1].args(lambda v: v.type.shape)
    assert isinstance(args[1], list) and all(isinstance(s, tuple) for s in args[1])


HAVE_JAX_RULES = core.contains_spmd_rule("jax.add")


@pytest.mark.skipif(not HAVE_JAX_RULES, reason="the jax.* rule family (branch jax-rules) is not in this build")
def test_every_gpt_op_binds_and_infers_with_the_real_rules(train_program):
    replicated = lambda v: spec(v.type.shape, [-1] * v.type.rank)  # noqa: E731
    missing = sorted({op.name for op in train_program.walk()
                      if op.name.startswith("jax.") and not core.contains_spmd_rule(op.name)})
    assert not missing, f"GPT train-step primitives with no rule: {missing}"
    for op in train_program.walk():
        if op.name.startswith("jax."):
            call = bind(op)
            ins, outs = call.infer_forward(replicated)
            assert len(outs) == len(op.results), op.name
            assert all(o.dims_mapping == [-1] * r.type.rank for o, r in zip(outs, op.results)), op.name
            assert call.factors(replicated) is not None, op.name
