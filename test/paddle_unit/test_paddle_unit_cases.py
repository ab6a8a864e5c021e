"""Runs every re-expressed case of Paddle's rule unit tests on spmdkit and, where Paddle 3.3.1
accepts the call, on Paddle too: both must give the layouts Paddle's test expects, except for a
documented difference, where execution proves spmdkit's answer right and the test's wrong."""
import importlib
import pkgutil
from collections import Counter
from pathlib import Path

import pytest

from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core

from dataclasses import replace

from .notation import EMPTY, Api, check
from .proof import execution_verdict, layout_problem

MODULES = sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if m.name.startswith("cases_"))
CASES = [c for m in MODULES for c in importlib.import_module(f"{__package__}.{m}").CASES]
SPMDKIT = Api(core, ProcessMesh, TensorDistAttr, DistTensorSpec)
REFUSED = (ValueError, TypeError, NotImplementedError)


def _ids(cases):
    seen = Counter()
    for c in cases:
        seen[c.id] += 1
        yield f"{c.id}#{seen[c.id]}"


def _params(cases, with_xfail=True):
    for c, cid in zip(cases, _ids(cases)):
        marks = [pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail and with_xfail else []
        yield pytest.param(c, id=cid, marks=marks)


@pytest.fixture(scope="module")
def paddle_api():
    pytest.importorskip("paddle")
    from paddle.distributed import ProcessMesh as PMesh
    from paddle.distributed.auto_parallel.static.dist_attribute import DistTensorSpec as PSpec, TensorDistAttr as PAttr
    from paddle.framework import core as pcore
    import paddle
    return Api(pcore, PMesh, PAttr, PSpec, dtype=lambda name: getattr(paddle, name))


@pytest.mark.parametrize("case", list(_params(CASES)))
def test_spmdkit_gives_paddles_expected_layout(case):
    refuses = case.ours == "raises" if case.differs else case.raises
    if refuses:
        with pytest.raises(REFUSED):
            SPMDKIT.call(case)
        return
    ins, outs = case.ours if case.differs else (None, None)
    bad = check(case, SPMDKIT.call(case), ins, outs)
    assert not bad, f"{case.id} {case.args}: " + "; ".join(bad)


PADDLE_CASES = [c for c in CASES if c.paddle == "agree"]


@pytest.mark.parametrize("case", list(_params(PADDLE_CASES, with_xfail=False)))
def test_paddle_gives_the_same_expected_layout(case, paddle_api):
    """The case tables are Paddle's facts: Paddle 3.3.1 itself must meet them, so a mistyped case
    shows up here rather than being 'fixed' to our own output."""
    if case.raises:
        with pytest.raises(Exception):
            paddle_api.call(case)
        return
    bad = check(case, paddle_api.call(case))
    assert not bad, f"Paddle 3.3.1 {case.id} {case.args}: " + "; ".join(bad)


DIFFERENCES = [c for c in CASES if c.differs]


@pytest.mark.parametrize("case", list(_params(DIFFERENCES, with_xfail=False)))
def test_documented_difference_is_proven_by_execution(case, request):
    """spmdkit's answer runs right on the simulated ranks and the Paddle test's does not; where
    spmdkit refuses the call, the op's kernel refuses its global inputs too."""
    if case.convention:
        paddle_api = request.getfixturevalue("paddle_api")
        absent_form = replace(case, args=["[]{}" if a == EMPTY else a for a in case.args])
        assert not check(case, paddle_api.call(absent_form), *case.ours)
        return
    if case.bad_input:
        assert layout_problem(case, case.bad_input) is not None
        return
    if case.ours == "raises" or case.kernel_refuses:
        why = execution_verdict(case, [], [])
        assert why and "kernel rejects the global inputs" in why, why
        return
    assert execution_verdict(case, *case.ours) is None
    if case.both_right:
        assert execution_verdict(case, case.ins, case.outs) is None
    elif not case.raises:  # (where Paddle refuses the call, its refusal is the difference)
        assert execution_verdict(case, case.ins, case.outs) is not None


def test_every_paddle_test_file_is_covered():
    files = Counter(c.file for c in CASES)
    missing = [f for f in PADDLE_FILES if f not in files]
    assert not missing, f"no cases for {missing}"


PADDLE_FILES = """add_n argmax argmin argsort c_embedding c_softmax_with_cross_entropy
c_softmax_with_multi_label_cross_entropy clip concat conv2d conv2d_transpose conv3d
cross_entropy_with_softmax cummax cummin cumsum default_data_parallel depthwise_conv2d einsum
elementwise embedding expand_as expand flash_attention flatten fused_dropout_add
fused_gemm_epilogue fused_linear_param_grad_add gather_nd gather gelu index_put index_select
label_smooth layer_norm logsumexp matmul mean_all nonzero one_hot p_norm pad put_along_axis
reduction replicated reshape roi_align roll scatter_nd_add scatter slice softmax split squeeze
stack take_along_axis tile topk transpose triu unbind unique unsqueeze where""".split()
PADDLE_FILES = [f"test_{f}_rule" for f in PADDLE_FILES] + ["test_matmul_rules", "test_op_co_shard_rule"]
