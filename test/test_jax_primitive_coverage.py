"""Every JAX primitive that flax / equinox / optax models emit has a rule (docs/jax_primitives.md).

Real model code (test/jax_models/model_zoo.py: flax linen and nnx Dense / Linear, LayerNorm, Embed,
Conv, multi-head attention, exact gelu, dropout with an rng, max_pool; equinox's layers; optax's
adam, adamw, sgd with momentum, clip_by_global_norm) is traced through spmdkit.ir.import_jax: every
op must have a rule whose factor table builds, and the imported program must compute what JAX does.
The page docs/jax_primitives.md must be the table tools/jax_primitive_table.py writes now.
"""
from __future__ import annotations

import sys
from pathlib import Path

import jax
import numpy as np
import pytest

from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr
from spmdkit.ir import import_jax
from spmdkit.ir.bind_jax import bind, has_rule
from spmdkit.ir.evaluate import evaluate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "test"))

import jax_primitive_table as table  # noqa: E402
from jax_models.model_zoo import all_steps  # noqa: E402

STEPS = all_steps()
MESH = ProcessMesh([0, 1], dim_names=["x"])
PROGRAMS = {name: import_jax(fn, *args) for name, (fn, args, _) in STEPS.items()}


def whole(value):
    attr = TensorDistAttr()
    attr.process_mesh = MESH
    attr.dims_mapping = [-1] * len(value.type.shape)
    return DistTensorSpec(list(value.type.shape), attr)


def walk(block):
    for op in block.ops:
        yield op
        for region in op.regions:
            for b in region.blocks:
                yield from walk(b)


def rule_ops(program):
    return [op for f in program.functions.values() for op in walk(f.body) if op.name.startswith("jax.")]


@pytest.mark.parametrize("name", sorted(STEPS))
def test_model_step_has_a_rule_for_every_op(name):
    ops = rule_ops(PROGRAMS[name])
    assert ops
    missing = sorted({op.name for op in ops if not has_rule(op.name)})
    assert missing == [], f"{name}: ops without a rule: {missing}"
    for op in ops:  # the factor table (what propagation reads) builds for every op as imported
        factors = bind(op).factors(whole)
        assert len(factors.results) == len(op.results), op.name


@pytest.mark.parametrize("name", ["flax_linen", "optax_clip_adam"])
def test_imported_step_computes_what_jax_computes(name):
    """Dropout's bits, exact gelu and max_pool's grad survive the import (keys as their data)."""
    fn, args, eval_args = STEPS[name]
    program = PROGRAMS[name]
    got = jax.jit(lambda *a: evaluate(program, *a))(*jax.tree_util.tree_leaves(eval_args))
    want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-6)


def test_the_steps_emit_the_primitives_the_issue_names():
    """The zoo really exercises exact gelu (erfc), dropout (threefry2x32 over key data) and
    max_pool's grad (select_and_scatter_add), which had no rule before."""
    seen = {op.name for p in PROGRAMS.values() for op in rule_ops(p)}
    assert {"jax.erfc", "jax.threefry2x32", "jax.iota_2x32_shape", "jax.select_and_scatter_add",
            "jax.shift_right_logical", "jax.bitcast_convert_type", "jax.integer_pow", "jax.conv_general_dilated",
            "jax.gather", "jax.scatter-add", "jax.dot_general", "jax.rsqrt"} <= seen


def test_docs_table_is_current_and_explains_every_primitive():
    names = table.rule_names()
    rows = table.classify(names)
    assert [p for p, (s, _) in rows.items() if s == "unexplained"] == []
    assert len(rows) > 150  # the enumeration found jax.lax's primitives
    assert (ROOT / "docs" / "jax_primitives.md").read_text() == table.render(names), \
        "docs/jax_primitives.md is stale: run python tools/jax_primitive_table.py --write"


def test_no_rule_reasons_name_only_primitives_without_a_rule():
    """A reason left behind for a primitive that has since gained a rule would mislead."""
    names = table.rule_names()
    stale = [p for p in (*table.NO_RULE, *table.IMPORTER) if f"jax.{p}" in names]
    assert stale == []
