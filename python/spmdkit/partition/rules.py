"""Asking an op's registry rule where its operands must be and where its results then are.

`op_layouts(op, desired, pm)` calls the rule's infer_forward on the operands' desired layouts
(the propagated shardings) and returns (required operand layouts, result layouts), results
possibly partial. Ops without tensor inputs (constants, iota) have no layout to infer from: a
constant is whole on every device, an iota is computed in its annotated layout (SOURCE_OPS).
"""
from __future__ import annotations

from ..ir import RuleBindingError
from ..ir.bind_jax import bind as bind_jax
from ..ir.bind_stablehlo import bind as bind_decoded
from .errors import PartitionError
from ..reshard import REDUCE_TYPES
from .layouts import ProgramMesh, from_dist_attr, replicated, to_spec, without_axes

# ops with no operands whose result every device can compute whole; a consumer that needs it
# split slices it locally (a free reshard step)
SOURCE_OPS = frozenset({"stablehlo.constant", "jax.iota"})

CALL_OPS = frozenset({"func.call", "call"})  # refused: calls are inlined before partitioning

# ops that only steer shardings: the result is the operand resharded to the result's annotation
IDENTITY_OPS = frozenset({"sdy.sharding_constraint", "sdy.reshard", "sdy.propagation_barrier",
                          "stablehlo.optimization_barrier"})

def _has_rule(name: str) -> bool:
    return bool(_registry().contains_spmd_rule(name))


def _registry():
    """spmdkit.core (the rule registry), imported on first use (spmdkit imports this package)."""
    global _REGISTRY
    if _REGISTRY is None:
        from .. import core
        _REGISTRY = core
    return _REGISTRY


_REGISTRY = None


def _bound(op, pm: ProgramMesh | None = None):
    """(rule name, RuleCall) of a rule op, its operands checked to bind in order; with `pm`, bound
    once per op and partition (an op asked about several layouts binds once)."""
    if pm is not None:
        hit = pm.bound.get(id(op))
        if hit is None:
            hit = pm.bound[id(op)] = (op, *_bound(op))  # the op is kept so that its id is not reused
        return hit[1], hit[2]
    name = op.name
    if not _has_rule(name):
        raise PartitionError("no sharding rule in the registry for this op", op=name)
    try:
        # jax.* ops carry the rules' own attributes; a StableHLO op's are decoded first (its
        # dot_dimension_numbers, ...): a program parsed from MLIR text (spmdkit auto FILE)
        call = (bind_jax if name.startswith("jax.") else bind_decoded)(op)
    except RuleBindingError as e:
        raise PartitionError(e.reason, op=name) from None
    results = {id(v) for v in op.results}  # a rule with no tensor input is handed its results (iota)
    flat = [v for item in call.inputs if item is not None for v in (item if isinstance(item, list) else [item])
            if id(v) not in results]
    if [id(v) for v in flat] != [id(v) for v in op.operands]:
        raise PartitionError(f"rule {name!r} binds the operands out of order", op=name)
    return name, call


def factor_table(op, spec_of, pm: ProgramMesh | None = None):
    """The FactorTable of the op's rule (aliases included) for the operands' specs `spec_of(value)`."""
    _, call = _bound(op, pm)
    return call.factors(spec_of)


def _flatten(groups) -> list:
    return [a for item in groups if item is not None for a in (item if isinstance(item, list) else [item])]


def backward_layouts(op, layouts: dict, pm: ProgramMesh):
    """The operand layouts the rule's infer_backward asks for, given the current layouts of the
    operands and results (`layouts`: id(value) -> Layout); None where the rule has no backward."""
    name, call = _bound(op)
    rule = call.rule()
    n_in = sum(1 for _, k, _ in rule.forward_params if k in ("tensor", "tensor_list", "optional_tensor"))
    out_params = [k for _, k, _ in rule.backward_params if k in ("tensor", "tensor_list", "output_tensor")][n_in:]
    outs = [to_spec(layouts[id(v)], v.type.shape, pm) for v in op.results]
    if out_params == ["tensor_list"]:
        out_args = [outs]
    elif len(out_params) == len(outs):
        out_args = outs
    else:
        return None
    args = call.args(lambda v: to_spec(layouts[id(v)], v.type.shape, pm))
    try:
        ins, _ = rule.infer_backward(*args, *out_args, **call.attrs)
    except Exception:  # a rule without a backward inference: no refinement through this op
        return None
    flat = _flatten(ins)
    if len(flat) != len(op.operands):
        return None
    return [from_dist_attr(a, pm, v.type.rank, op.name) for v, a in zip(op.operands, flat)]


def signature_of(op, pm: ProgramMesh):
    """A small int per op_signature(op) (cheap to hash in keys), once per op; None for an op whose
    attributes cannot be keyed."""
    number = pm.signatures.get(id(op))
    if number is None:
        number = pm.signed.number(op)
    return number if number >= 0 else None


def op_layouts(op, desired: dict, pm: ProgramMesh):
    """(required layout per operand, layout per result) from the op's rule; asked once per op
    signature and layouts (the layers of a model repeat the same questions)."""
    sig = signature_of(op, pm)
    if sig is None:
        return _op_layouts(op, desired, pm)
    get = desired.get
    key = (sig, tuple([get(id(v)) for v in op.operands]), tuple([get(id(v)) for v in op.results]))
    hit = pm.answers.get(key)
    if hit is None:
        hit = pm.answers[key] = _op_layouts(op, desired, pm)
    return list(hit[0]), list(hit[1])


def _op_layouts(op, desired: dict, pm: ProgramMesh, _retried: bool = False):
    name, call = _bound(op, pm)
    original = op.name

    def spec_of(value):  # a result handed to the rule (no tensor input) proposes nothing: whole
        layout = desired[id(value)] if id(value) in desired else replicated(value.type.rank)
        return to_spec(layout, value.type.shape, pm)

    try:
        ins, outs = call.infer_forward(spec_of)
    except Exception as e:  # the rule refused these layouts or attributes
        raise PartitionError(f"rule {name!r} failed: {type(e).__name__}: {e}", op=original) from None
    flat_ins, flat_outs = _flatten(ins), _flatten(outs)
    if len(flat_ins) != len(op.operands) or len(flat_outs) != len(op.results):
        raise PartitionError(f"rule {name!r} gave {len(flat_ins)} input and {len(flat_outs)} output layouts for "
                             f"{len(op.operands)} operands and {len(op.results)} results", op=original)
    # A result left partial under a reduction no collective runs (a product: reduce_prod over a
    # split dim): ask again with those axes gathered away from the operands, so the op reduces whole.
    pending = {pm.axis_names[m] for a in flat_outs for m, kind in (a.partial_status or {}).items()
               if kind not in REDUCE_TYPES}
    if pending and not _retried:
        fewer = {id(v): without_axes(desired[id(v)], pending, pm) for v in op.operands if id(v) in desired}
        return _op_layouts(op, {**desired, **fewer}, pm, _retried=True)
    operand_layouts = [from_dist_attr(a, pm, v.type.rank, original) for v, a in zip(op.operands, flat_ins)]
    result_layouts = [from_dist_attr(a, pm, v.type.rank, original) for v, a in zip(op.results, flat_outs)]
    return operand_layouts, result_layouts
