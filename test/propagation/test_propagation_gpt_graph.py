"""The benchmark's GPT-style training step (2 layers): data parallel from one p0 annotation on
the tokens, Megatron splits from the p1 weight annotations, reach every value they should, and
the result is a fixed point."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
from bench_propagation import B, build  # noqa: E402


@pytest.fixture(scope="module")
def gpt():
    g = build(2)
    g.propagate()
    return g


def test_every_activation_is_batch_sharded(gpt):
    g = gpt
    activations = [v for op in g.ops for v in op["results"] if len(g.shape(v)) >= 2 and g.shape(v)[0] == B]
    assert len(activations) > 100
    assert all(g.dim_axes(v)[0] == [("data", 1, 8)] for v in activations)


def test_weight_updates_keep_the_weights_megatron_split(gpt):
    g = gpt
    updates = [op for op in g.ops if op["name"] == "adam.update"]
    assert len(updates) == 20  # 6 matrices and 4 layer-norm vectors per layer
    for op in updates:  # the updated weight is laid out as the weight (no reshard in the optimizer)
        weight, new_weight = op["operands"][0], op["results"][0]
        assert g.dim_axes(new_weight) == g.dim_axes(weight), g.value_name(weight)
    model_split = [op for op in g.ops if op["name"] == "matmul_grad.w" and any(("model", 1, 4) in d for d in g.dim_axes(op["results"][0]))]
    assert len(model_split) >= 12  # q, k, v, o, fc1, fc2 of both layers


def test_attention_heads_follow_the_column_split(gpt):
    g = gpt
    for op in g.ops:
        if op["name"] in ("softmax", "softmax_grad"):
            assert g.dim_axes(op["results"][0])[:2] == [[("data", 1, 8)], [("model", 1, 4)]]


def test_gpt_graph_is_a_fixed_point(gpt):
    assert gpt.propagate()["updates"] == 0
