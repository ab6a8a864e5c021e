"""Property: calls built the way Paddle's rule unit tests build them (hand-sized shapes with
unequal dims, copy-constructed specs changed afterwards, partial inputs, output specs given
without a mapping, plain ints and lists for int / int64 attributes) get Paddle 3.3.1's answer
from spmdkit, or one the simulator proves right. The case tables cover what Paddle's tests
wrote down; this finds the next gap of the same kind (a call the surface refuses, a shape the
engine rejects) before a user does."""
import re

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core

from .notation import Api, Case, check
from .proof import execution_verdict

SPMDKIT = Api(core, ProcessMesh, TensorDistAttr, DistTensorSpec)
MESHES = [(4,), (2, 2), (2, 3), (2, 4)]
SIZES = [4, 6, 8, 12, 16, 24]   # unequal on purpose: a dim matched to the wrong one shows up


@pytest.fixture(scope="module")
def paddle_api():
    pytest.importorskip("paddle")
    from paddle.distributed import ProcessMesh as PMesh
    from paddle.distributed.auto_parallel.static.dist_attribute import DistTensorSpec as PSpec, TensorDistAttr as PAttr
    from paddle.framework import core as pcore
    return Api(pcore, PMesh, PAttr, PSpec)


@st.composite
def layouts(draw, shape, mesh, copy=False, partial=True):
    """A tensor argument: each mesh dim splits at most one dim (or is partial, or unused)."""
    mapping, part = [-1] * len(shape), []
    for d in range(len(mesh)):
        free = [i for i in range(len(shape)) if mapping[i] == -1 and shape[i] % mesh[d] == 0]
        use = draw(st.sampled_from(["none", "split", "partial"] if partial else ["none", "split"]))
        if use == "split" and free:
            mapping[draw(st.sampled_from(free))] = d
        elif use == "partial":
            part.append(d)
    text = f"[{','.join(map(str, shape))}]{{{','.join(map(str, mapping))}}}"
    if copy and not part:  # (a copied spec carries no partial status in the notation)
        return "copy:" + text
    return text + (f"p{{{','.join(map(str, part))}}}" if part else "")


@st.composite
def shapes(draw, rank):
    return [draw(st.sampled_from(SIZES)) for _ in range(rank)]


@st.composite
def calls(draw):
    mesh = draw(st.sampled_from(MESHES))
    op = draw(st.sampled_from(["add", "multiply", "relu", "softmax", "transpose", "matmul", "default_data_parallel",
                               "concat", "expand_as", "unsqueeze"]))
    fn = draw(st.sampled_from(["fwd", "bwd"]))
    x_shape = draw(shapes(draw(st.integers(1, 3))))
    rank = len(x_shape)
    copy = draw(st.booleans())   # Paddle's tests copy-construct specs, then set their mapping
    if op in ("add", "multiply"):
        y_shape = x_shape[draw(st.integers(0, rank - 1)):]       # numpy-broadcast suffix
        y_shape = [1 if draw(st.integers(0, 4)) == 0 else d for d in y_shape]
        ins = [draw(layouts(x_shape, mesh, copy)), draw(layouts(y_shape, mesh))]
        attrs, out_shape = [], x_shape
    elif op == "matmul":
        k, n = draw(st.sampled_from(SIZES)), draw(st.sampled_from(SIZES))
        tx, ty = draw(st.booleans()), draw(st.booleans())
        xs = x_shape[:-1] + [k] if not tx else x_shape[:-2] + [k, x_shape[-1]] if rank > 1 else [k]
        ys = [n, k] if ty else [k, n]
        ins, attrs = [draw(layouts(xs, mesh)), draw(layouts(ys, mesh))], [tx, ty]
        out_shape = None if tx or rank == 1 else x_shape[:-1] + [n]
    elif op == "softmax":
        ins, attrs, out_shape = [draw(layouts(x_shape, mesh, copy))], [draw(st.integers(-rank, rank - 1))], x_shape
    elif op == "transpose":
        perm = draw(st.permutations(list(range(rank))))
        ins, attrs, out_shape = [draw(layouts(x_shape, mesh, copy))], [list(perm)], [x_shape[p] for p in perm]
    elif op == "concat":   # inputs of unequal length along the axis, as the concat test has
        axis = draw(st.integers(0, rank - 1))
        shapes_ = [x_shape[:axis] + [draw(st.sampled_from(SIZES))] + x_shape[axis + 1:] for _ in range(draw(st.integers(1, 3)))]
        ins = [[draw(layouts(sh, mesh, copy, partial=False)) for sh in shapes_]]
        attrs, out_shape = [axis], None
    elif op == "expand_as":   # x with size-1 and missing leading dims, broadcast to y
        y_shape = x_shape
        xs = [1 if draw(st.booleans()) else d for d in y_shape[draw(st.integers(0, rank - 1)):]]
        ins = [draw(layouts(xs, mesh, partial=False)), draw(layouts(y_shape, mesh, partial=False))]
        attrs, out_shape = [list(y_shape)], None
    elif op == "unsqueeze":
        axis = sorted(draw(st.sets(st.integers(0, rank), min_size=1, max_size=2)))
        out_shape = list(x_shape)
        for a in axis:
            out_shape.insert(a, 1)
        ins, attrs = [draw(layouts(x_shape, mesh, copy))], [axis]
    elif op == "relu":
        ins, attrs, out_shape = [draw(layouts(x_shape, mesh, copy))], [], x_shape
    else:  # default_data_parallel: outputs given without a mapping (or mapped, in reverse)
        other = [x_shape[0]] + draw(shapes(draw(st.integers(0, 2))))
        ins = [[draw(layouts(x_shape, mesh, partial=False)), draw(layouts(other, mesh, partial=False))]]
        # (the simulator's batch-parallel kernel gives one output per input and the row sums)
        out_shapes = [x_shape, other, [x_shape[0]]]
        outs = ([f"[{','.join(map(str, sh))}]" for sh in out_shapes] if fn == "fwd"
                else [draw(layouts(sh, mesh, partial=False)) for sh in out_shapes])
        return Case("property", op, fn, mesh, ins + [outs])
    if fn == "bwd":
        if out_shape is None:
            fn = "fwd"
        else:
            ins = [re.sub(r"p\{[\d,]*\}$", "", a) for a in ins] + [draw(layouts(out_shape, mesh, copy=True, partial=False))]
    return Case("property", op, fn, mesh, ins + attrs)


def _layouts(result):
    def one(a):
        if isinstance(a, (list, tuple)):
            return [one(x) for x in a]
        p = sorted(a._partial_dims()) if a._is_partial() else []
        # a dim split over several mesh dims (a co-shard) is written [major,...,minor]: its 1-D
        # dims_mapping view would name one mesh dim and lose the others
        multi = [list(d) for d in getattr(a, "multi_dims_mapping", [])]
        dims = ([f"[{','.join(map(str, d))}]" if len(d) > 1 else str(d[0] if d else -1) for d in multi]
                if any(len(d) > 1 for d in multi) else list(map(str, a.dims_mapping)))
        return "{" + ",".join(dims) + "}" + (f"p{{{','.join(map(str, p))}}}" if p else "p{}")
    return [one(list(result[0])), one(list(result[1]))]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=calls())
@example(case=Case("property", "matmul", "fwd", (2, 3), ["[6]{0}", "[6,4]{1,-1}", True, False]))  # a co-shard (CI find)
def test_paddle_style_calls_agree_with_paddle_or_are_proven(case, paddle_api):
    ours = _layouts(SPMDKIT.call(case))   # a valid call: spmdkit must answer it
    try:
        theirs = _layouts(paddle_api.call(case))
    except Exception:  # noqa: BLE001 - Paddle refused: spmdkit's answer must run right
        theirs = None
    OUTCOMES[case.op, "agree" if theirs == ours else "proven"] = OUTCOMES.get((case.op, "agree" if theirs == ours else "proven"), 0) + 1
    if theirs == ours:
        return
    why = execution_verdict(case, ours[0], ours[1])
    assert why is None, f"{case.op}.{case.fn} {case.args}: spmdkit {ours} differs from Paddle {theirs} and is wrong: {why}"


OUTCOMES: dict = {}


def test_the_property_met_both_outcomes():
    """Runs after the property (file order): it saw agreements, and differences it proved."""
    if not OUTCOMES:
        pytest.skip("the property did not run")
    assert sum(n for (op, kind), n in OUTCOMES.items() if kind == "agree") > 0, OUTCOMES
    assert len({op for op, _ in OUTCOMES}) >= 5, OUTCOMES


def test_the_generator_builds_what_the_runner_checks():
    """The layouts the property compares are the case tables' own notation."""
    case = Case("property", "add", "fwd", (2, 2), ["[4,6]{0,-1}", "[6]{1}"])
    result = SPMDKIT.call(case)
    assert not check(Case("p", "add", "fwd", (2, 2), [], ins=["{0,1}", "{1}"], outs=["{0,1}"]), result)
    assert _layouts(result) == [["{0,1}p{}", "{1}p{}"], ["{0,1}p{}"]]
