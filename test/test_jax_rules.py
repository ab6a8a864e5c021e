"""The JAX / StableHLO rule family (rules_yaml/jax_*.yaml): the naming contract, behaviour of
infer_forward / infer_backward, errors, execution on the simulator (0 wrong), and the proofs of
the factor-table differences from Shardy (test_factor_tables.py lists them)."""
import re
from pathlib import Path

import numpy as np
import pytest

from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core
from spmdkit.verify import Placement, TensorArg, load_specs
from spmdkit.verify.simulate import Execution, verify_placements

ROOT = Path(__file__).resolve().parents[1]
MESH = ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])
SPECS = load_specs()
P = Placement.make


def T(*shape, mapping=None, partial=None):
    attr = TensorDistAttr()
    attr.process_mesh = MESH
    attr.dims_mapping = list(mapping) if mapping is not None else [-1] * len(shape)
    for d, kind in (partial or {}).items():
        attr._set_partial_dims([d], kind)
    return DistTensorSpec(list(shape), attr)


def rule(name):
    return core.get_phi_spmd_rule(name)


def family():
    return sorted(n for n in core.list_spmd_rules() if n.startswith(("jax.", "stablehlo.")))


# ---- the naming contract ------------------------------------------------------------------------

def documented_names():
    text = (ROOT / "docs" / "jax_stablehlo_rules.md").read_text()
    return set(re.findall(r"\b((?:jax|stablehlo)\.[a-z_][a-z0-9_-]*)", text))


def test_every_documented_name_is_registered_and_every_registered_name_documented():
    documented = documented_names()
    assert documented - set(family()) == set()
    assert set(family()) - documented == set()


GPT_PRIMITIVES = ["iota", "add", "broadcast_in_dim", "convert_element_type", "div", "dot_general", "exp", "gather", "ge",
                  "integer_pow", "log", "lt", "max", "mul", "neg", "reduce_max", "reduce_sum", "reshape", "rsqrt",
                  "select_n", "split", "stop_gradient", "sub", "tanh", "transpose", "add_any", "concatenate", "eq",
                  "scatter-add", "min", "pow", "sqrt", "logistic", "erf", "abs", "sign", "exp2", "log1p", "sin", "cos",
                  "gt", "le", "ne", "and", "or", "not", "squeeze", "expand_dims", "reduce_min", "reduce_prod", "argmax",
                  "argmin", "cumsum", "slice", "dynamic_slice", "dynamic_update_slice", "pad", "copy", "copy_p"]
STABLEHLO = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "exponential", "log", "tanh", "rsqrt", "sqrt",
             "negate", "power", "abs", "logistic", "convert", "compare", "select", "clamp", "broadcast_in_dim",
             "reshape", "transpose", "dot_general", "dot", "reduce", "gather", "scatter", "concatenate", "slice",
             "dynamic_slice", "dynamic_update_slice", "pad", "reverse", "iota", "constant"]


def test_coverage():
    names = set(core.list_spmd_rules())
    assert {f"jax.{p}" for p in GPT_PRIMITIVES} <= names
    assert {f"stablehlo.{p}" for p in STABLEHLO} <= names


def test_same_semantics_share_one_entry():
    assert rule("stablehlo.multiply").op == rule("jax.mul").op == "jax.mul"
    assert rule("jax.add_any").op == "jax.add"
    assert rule("stablehlo.dot_general").op == "jax.dot_general"


# ---- behaviour ----------------------------------------------------------------------------------

def test_dot_general_contracted_split_is_partial_and_reverse_finds_operands():
    r = rule("jax.dot_general")
    (lhs, rhs), (out,) = r.infer_forward(T(4, 8, 32, mapping=[0, -1, 1]), T(4, 32, 16), [2], [1], [0], [0])
    assert lhs.dims_mapping == [0, -1, 1] and rhs.dims_mapping == [0, 1, -1]
    assert out.dims_mapping == [0, -1, -1] and out.partial_status == {1: "sum"}
    (lhs, rhs), (out,) = r.infer_backward(T(4, 8, 32), T(4, 32, 16), T(4, 8, 16, mapping=[-1, 0, 1]), [2], [1], [0], [0])
    assert lhs.dims_mapping == [-1, 0, -1] and rhs.dims_mapping == [-1, -1, 1] and out.dims_mapping == [-1, 0, 1]


def test_ragged_dot_keeps_the_ragged_dim_and_groups_whole():
    r = rule("jax.ragged_dot_general")
    # a MoE's forward: tokens [m, k] by experts' weights [g, k, n]; m and g whole, k partial, n free
    (lhs, rhs, gs), (out,) = r.infer_forward(T(8, 16, mapping=[0, 1]), T(2, 16, 4, mapping=[0, -1, -1]), T(2),
                                             [1], [1], [0], [], [], [0])
    assert lhs.dims_mapping == [-1, 1] and rhs.dims_mapping == [-1, 1, -1] and gs.dims_mapping == [-1]
    assert out.dims_mapping == [-1, -1] and out.partial_status == {1: "sum"}
    # its weight gradient: the ragged dim contracted, the groups lead the result
    (lhs, rhs, gs), (out,) = r.infer_forward(T(8, 16, mapping=[-1, 0]), T(8, 4, mapping=[-1, 1]), T(2),
                                             [0], [0], [0], [], [], [])
    assert out.dims_mapping == [-1, 0, 1] and not out.partial_status


def test_broadcast_in_dim_maps_dims_and_keeps_expanded_dims_whole():
    r = rule("stablehlo.broadcast_in_dim")
    (x,), (out,) = r.infer_forward(T(8, 1, mapping=[0, -1]), [4, 8, 6], [1, 2])
    assert x.dims_mapping == [0, -1] and out.dims_mapping == [-1, 0, -1]
    (x,), (out,) = r.infer_backward(T(8, 1), T(4, 8, 6, mapping=[1, 0, -1]), [4, 8, 6], [1, 2])
    assert x.dims_mapping == [0, -1]  # the new dim 0 and the expanded dim 2 ask nothing of x
    assert out.dims_mapping == [-1, 0, -1]  # a dim the op creates is born whole (the engine's policy)


def test_scatter_add_summed_batch_makes_the_operand_an_addend():
    r = rule("jax.scatter-add")
    (op, idx, upd), (out,) = r.infer_forward(T(16, 8), T(6, 1, mapping=[0, -1]), T(6, 8, mapping=[0, -1]),
                                             [1], [0], [0])
    assert upd.dims_mapping == [0, -1] and idx.dims_mapping == [0, -1]
    assert out.partial_status == {0: "sum"} and op.partial_status == {0: "sum"}  # each rank adds its share


def test_stablehlo_reduce_body_chooses_the_partial_type():
    r = rule("stablehlo.reduce")
    for body, kind in [("sum", "sum"), ("max", "max"), ("min", "min"), ("prod", "prod"), ("or", "any"), ("and", "all")]:
        (_, init), (out,) = r.infer_forward(T(4, 8, mapping=[-1, 0]), T(), [1], body)
        assert out.partial_status == {0: kind}, body
        assert init.partial_status == {0: kind}
    with pytest.raises(ValueError, match="stablehlo.reduce: attribute 'body' = \"mean\" is not one of"):
        r.infer_forward(T(4, 8), T(), [1], "mean")


def test_split_returns_one_layout_per_output():
    (x,), outs = rule("jax.split").infer_forward(T(4, 6, mapping=[0, 1]), [2, 4], 1)
    assert x.dims_mapping == [0, -1] and [o.dims_mapping for o in outs] == [[0, -1], [0, -1]]


def test_iota_takes_its_result_for_the_mesh():
    r = rule("stablehlo.iota")
    ins, (out,) = r.infer_forward(T(4, 8, mapping=[0, 1]), [4, 8], 1)
    assert ins == [] and out.dims_mapping == [-1, -1]  # dims the op creates are born whole
    assert str(r.factors(T(4, 8), [4, 8], 1)) == "()->([i, j]) {i=4, j=8}"
    with pytest.raises(ValueError, match="stablehlo.iota: attribute 'shape' does not match"):
        r.infer_forward(T(4, 8), [4, 7], 1)
    with pytest.raises(ValueError, match="attribute 'dimension' = 2 is out of range"):
        r.infer_forward(T(4, 8), [4, 8], 2)


def test_rank0_literal_operand():
    (x, y), (out,) = rule("jax.mul").infer_forward(T(4, 8, mapping=[0, 1]), T())
    assert out.dims_mapping == [0, 1] and y.dims_mapping == []


@pytest.mark.parametrize("name,args,match", [
    ("jax.dot_general", [T(4, 8), T(8, 3), [1], []], "lhs_contracting_dimensions' and 'rhs_contracting_dimensions' have 1 and 0"),
    ("jax.dot_general", [T(4, 8), T(8, 3), [2], [0]], "lhs_contracting_dimensions' names dim 2, out of range for lhs of rank 2"),
    ("jax.dot_general", [T(4, 8), T(7, 3), [1], [0]], "dim 0 has size 7, but the same factor has size 8"),
    ("jax.dot_general", [T(4, 8), T(8, 3), [1, 1], [0, 1]], "names dim 1 twice"),
    ("jax.ragged_dot_general", [T(8, 16), T(2, 16, 4), T(2), [1], [1], [0, 1], [], [], [0]],
     "lhs_ragged_dimensions' must name exactly one dim, got 2"),
    ("jax.ragged_dot_general", [T(8, 16), T(2, 16, 4), T(2), [1], [1], [0], [], [], []],
     "rhs_group_dimensions' must name one dim when the lhs ragged dim is not contracted or batch"),
    ("jax.ragged_dot_general", [T(8, 16), T(2, 16, 4), T(2), [1], [1], [0], [], [], [1]],
     "rhs_group_dimensions' names a contracted or batch dim"),
    ("jax.ragged_dot_general", [T(8, 16), T(2, 16, 4), T(2), [1], [3], [0], [], [], [0]],
     "rhs_contracting_dimensions' names dim 3, out of range for rhs of rank 3"),
    ("jax.ragged_dot_general", [T(8, 16), T(2, 16, 4), T(3, 2), [1], [1], [0], [], [], [0]],
     "group_sizes of rank 2 must have rank 1 (the groups)"),
    ("stablehlo.broadcast_in_dim", [T(3), [4, 5], [1]], "operand dim 0 has size 3, but result dim 1"),
    ("stablehlo.broadcast_in_dim", [T(3), [4, 3], []], "broadcast_dimensions' has 0 entries for operand of rank 1"),
    ("jax.gather", [T(8, 4), T(5, 1), [1, 2], [0], [0], [1, 4]], "offset_dims' has 2 entries"),
    ("jax.gather", [T(8, 4), T(5, 1), [1], [0], [0], [2, 4]], "collapsed_slice_dims' names dim 0, whose slice size is not 1"),
    ("jax.slice", [T(8, 4), [0, 0], [9, 4]], "dim 0 of size 8 cannot be sliced"),
    ("jax.pad", [T(8, 4), T(), [1, 1, 0]], "padding_config' has 3 entries"),
    ("jax.dynamic_slice", [T(8, 4), [T(), T()], [9, 4]], "slice_sizes' asks for 9"),
    ("jax.reshape", [T(8, 4), [5, 6]], "holds 30 elements, but the input holds 32"),
    ("jax.reduce_sum", [T(8, 4), [2]], "out of range"),
])
def test_bad_calls_raise_naming_op_and_attribute(name, args, match):
    with pytest.raises(ValueError, match=re.escape(name) + ".*" + re.escape(match)):
        rule(name).infer_forward(*args)
    if name != "jax.reduce_sum" and rule(name).op != "jax.reshape":
        with pytest.raises(ValueError, match=re.escape(match)):
            rule(name).factors(*args)


# ---- execution on the simulator -----------------------------------------------------------------

def test_family_executes_right_on_the_simulator():
    """spmdkit verify's random mode over every op of the family: no wrong rule (CI's full run
    in test_verify.py covers more cases; this keeps the family's proof close to it)."""
    from spmdkit.verify import get_backend, run_random
    backend = get_backend("spmdkit")
    ops = sorted({rule(n).op for n in family()})
    assert len(ops) >= 60
    for op in ops:
        assert op in SPECS and SPECS[op].kernel and SPECS[op].sampler, op
        for tally in run_random(backend, SPECS[op], SPECS, cases=12, seed=5):
            assert tally.wrong == 0, (op, tally.function, tally.counterexample)
            assert tally.correct > 0, (op, tally.function, tally.notes[:2])


# ---- proofs of the differences from Shardy --------------------------------------------------------
# Shardy gives these dims plain (pass-through) factors; its partitioner then inserts what it
# needs. A rule's claim is that each rank runs the op on its shards: executed that way, a split
# of such a dim gives no placement of the result that is right, so spmdkit makes it whole.

def execute(op, mesh, inputs, attrs, ins, outs, seed=0):
    spec = SPECS[op]
    args = [[TensorArg(tuple(s), P(*p), hi) for s, p, hi in a] if isinstance(a, list) else TensorArg(tuple(a[0]), P(*a[1]), a[2])
            for a in inputs]
    return verify_placements(Execution(spec, mesh, args, attrs, np.random.default_rng(seed)), ins, outs)


def replicated(x):
    if isinstance(x, list):
        return [replicated(e) for e in x]
    if isinstance(x, Placement):
        return P([-1] * len(x.dims))
    shape, (dims,), hi = x
    return shape, ([-1] * len(dims),), hi


def no_result_placement_is_right(op, mesh, inputs, attrs, ins, out_rank):
    # control: with every input whole, the whole result is right (the check can say yes)
    assert execute(op, mesh, replicated(inputs), attrs, replicated(ins), [P([-1] * out_rank)])
    candidates = [P([-1] * out_rank)] + [P([-1] * out_rank, {m: "sum"}) for m in range(len(mesh))]
    candidates += [P([m if d == k else -1 for d in range(out_rank)]) for k in range(out_rank) for m in range(len(mesh))]
    return not any(execute(op, mesh, inputs, attrs, ins, [c]) for c in candidates)


def test_reverse_difference_from_shardy():
    # rev over dim 0 split over 2 ranks: pass-through would keep dim 0 split
    inputs, attrs = [((6, 4), ([0, -1],), None)], [[0]]
    assert no_result_placement_is_right("jax.rev", (2,), inputs, attrs, [P([0, -1])], 2)
    (x,), (out,) = rule("jax.rev").infer_forward(T(6, 4, mapping=[0, -1]), [0])
    assert x.dims_mapping == [-1, -1] and execute("jax.rev", (2,), [((6, 4), ([-1, -1],), None)], attrs,
                                                  [P([-1, -1])], [P(out.dims_mapping)])


def test_dynamic_update_slice_difference_from_shardy():
    inputs = [((8, 4), ([0, -1],), None), ((3, 4), ([-1, -1],), None), [((), ([],), 6), ((), ([],), 1)]]
    assert no_result_placement_is_right("jax.dynamic_update_slice", (2,), inputs, [],
                                        [P([0, -1]), P([-1, -1]), [P([]), P([])]], 2)


def test_gather_difference_from_shardy():
    # embedding-style gather: operand [8, 4], ids [5, 1]; the collapsed dim 0 split over 2 ranks
    attrs = [[1], [0], [0], [1, 4], [], [], -1]
    inputs = [((8, 4), ([0, -1],), None), ((5, 1), ([-1, -1],), 8)]
    assert no_result_placement_is_right("jax.gather", (2,), inputs, attrs, [P([0, -1]), P([-1, -1])], 2)
    # a window smaller than its dim: operand [8, 4] windows [3, 4] at row ids, dim 0 split
    attrs = [[1, 2], [], [0], [3, 4], [], [], -1]
    assert no_result_placement_is_right("jax.gather", (2,), inputs, attrs, [P([0, -1]), P([-1, -1])], 3)


def test_scatter_difference_from_shardy():
    # rows added into operand [8, 4] at ids [5, 1]; the inserted dim 0 split over 2 ranks
    attrs = [[1], [0], [0], [], [], -1]
    inputs = [((8, 4), ([0, -1],), None), ((5, 1), ([-1, -1],), 8), ((5, 4), ([-1, -1],), None)]
    assert no_result_placement_is_right("jax.scatter-add", (2,), inputs, attrs,
                                        [P([0, -1]), P([-1, -1]), P([-1, -1])], 2)
    # an update window smaller than its operand dim: updates [5, 2] into rows of width 4; the
    # updates' window dim split (it is in no other tensor: Shardy leaves it free)
    inputs = [((8, 4), ([-1, -1],), None), ((5, 1), ([-1, -1],), 8), ((5, 2), ([-1, 0],), None)]
    assert no_result_placement_is_right("jax.scatter-add", (2,), inputs, attrs,
                                        [P([-1, -1]), P([-1, -1]), P([-1, 0])], 2)


# ---- the factor table predicts inference ------------------------------------------------------------

DIM_TRANS = {"jax.reshape", "stablehlo.reshape", "jax.squeeze", "jax.expand_dims"}


def test_table_predicts_where_a_single_split_goes():
    """One input dim split over a 2-rank mesh, everything else whole: a pass-through factor
    carries the split to the output dims that have it, a reduction factor leaves the outputs
    partial, a need-replication or permutation factor is gathered (the input comes back whole).
    Checked for every op of the family on sampler-drawn calls."""
    from spmdkit.verify.random_mode import draw_case
    from spmdkit.verify.samplers import Options
    rng = np.random.default_rng(7)
    checked = {}
    for op in sorted({rule(n).op for n in family()} - DIM_TRANS):
        r = rule(op)
        if any(kind == "output_tensor" for _, kind, _ in r.forward_params):  # handed its results (iota)
            continue
        for _ in range(4):
            case, _ = draw_case(SPECS[op], "forward", SPECS, rng, (2,), Options(p_partial=0.0))
            tensors = [x for a in case.inputs for x in (a if isinstance(a, list) else [a])]

            def build(split_at):
                it = iter(range(len(tensors)))
                def one(t):
                    k = next(it)
                    mapping = [0 if (k, d) == split_at else -1 for d in range(len(t.shape))]
                    return T(*t.shape, mapping=mapping)
                return [[one(t) for t in a] if isinstance(a, list) else one(a) for a in case.inputs] + list(case.attrs)
            t = r.factors(*build(None))
            for k, x in enumerate(tensors):
                for d, n in enumerate(x.shape):
                    fs = t.operands[k][d]
                    if n % 2 or n < 2 or len(fs) != 1:
                        continue
                    f = fs[0]
                    ins, outs = r.infer_forward(*build((k, d)))
                    outs = [q for o in outs for q in (o if isinstance(o, list) else [o])]
                    ins = [q for a in ins for q in (a if isinstance(a, list) else [a])]
                    kind = t.kinds[f]
                    for o, res in zip(outs, t.results):
                        if kind == "pass_through":
                            expect = [0 if f in dim[:1] else -1 for dim in res]
                            assert o.dims_mapping == expect and not o._is_partial(), (op, case.attrs, k, d, str(t))
                        elif kind == "reduction":
                            assert o.dims_mapping == [-1] * len(res) and list(o.partial_status) == [0], (op, k, d, str(t))
                        else:
                            assert o.dims_mapping == [-1] * len(res) and not o._is_partial(), (op, k, d, str(t))
                            assert ins[k].dims_mapping[d] == -1, (op, k, d, str(t))
                    checked[kind] = checked.get(kind, 0) + 1
    assert sum(checked.values()) > 400 and all(checked.get(k, 0) > 10 for k in
                                               ("pass_through", "reduction", "need_replication", "permutation")), checked


# ---- bad input never crashes ------------------------------------------------------------------------

def test_random_garbage_raises_or_answers():
    """Random ranks, shapes and attribute values (dims out of range, lists of any length, huge
    numbers): every call of every function answers or raises ValueError / TypeError."""
    rng = np.random.default_rng(13)
    def value(kind):
        if kind in ("int", "int64"):
            return int(rng.choice([-40, -2, -1, 0, 1, 2, 3, 5, 40]))
        if kind.endswith("list"):
            return [int(rng.choice([-3, -1, 0, 1, 2, 3, 13, 40])) for _ in range(int(rng.integers(0, 15)))]
        if kind == "bool":
            return bool(rng.integers(2))
        if kind in ("str", "dtype"):
            return str(rng.choice(["sum", "max", "and", "LT", "", "bogus"]))
        return 0.5
    def tensor_arg():
        return T(*[int(rng.choice([0, 1, 2, 3, 4])) for _ in range(int(rng.integers(0, 5)))])
    answered = raised = 0
    for name in family():
        r = rule(name)
        for _ in range(40):
            for params, fn in ((r.forward_params, r.infer_forward), (r.forward_params, r.factors),
                               (r.backward_params, r.infer_backward)):
                args = []
                for _, kind, _ in params:
                    if kind == "tensor_list":
                        args.append([tensor_arg() for _ in range(int(rng.integers(0, 4)))])
                    elif "tensor" in kind:
                        args.append(tensor_arg())
                    else:
                        args.append(value(kind))
                try:
                    fn(*args)
                    answered += 1
                except (ValueError, TypeError):
                    raised += 1
    assert answered > 100 and raised > 100, (answered, raised)
