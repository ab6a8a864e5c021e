"""An IR op -> the registry rule that shards it and that rule's arguments.

`bind(op)` gives the rule's name, the operands grouped as the rule's tensor parameters (a list
for a `T[]` parameter, None for an absent optional one) with their shapes ready for
DistTensorSpec, and the attributes under the rule's names (docs/jax_stablehlo_rules.md of the
jax-rules branch): StableHLO's structured attributes are decoded (dot_general's
`#stablehlo.dot<...>` into its four dimension lists, compare's direction into "GT", gather and
scatter dimension numbers into lists), values StableHLO keeps in types are read from them
(broadcast_in_dim/reshape/iota `shape`, convert `new_dtype`), and reduce's body becomes the
name of its reduction. Attributes the rule does not take are dropped, as the contract says.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .attributes import MLIRAttr
from .core import Op
from .errors import IRError, UnknownOpError
from .mlir_context import ir, shared_context, stablehlo

# reduce's region as the rule names it: the one op its body applies
REDUCTIONS = {"stablehlo.add": "sum", "stablehlo.maximum": "max", "stablehlo.minimum": "min",
              "stablehlo.multiply": "prod", "stablehlo.and": "and", "stablehlo.or": "or"}
_RESULT_SHAPE_ATTR = {"stablehlo.broadcast_in_dim": "shape", "stablehlo.reshape": "shape", "stablehlo.iota": "shape"}


@dataclass
class BoundRule:
    """A rule call for one op: `inputs[i]` is a Value, a list of Values (T[]) or None (absent)."""
    op: Op
    rule: str
    inputs: list = field(default_factory=list)
    attrs: dict = field(default_factory=dict)

    @property
    def input_shapes(self) -> list:
        """The inputs' shapes, grouped like `inputs` (lists of ints, ready for DistTensorSpec)."""
        def shape(v):
            if v is None:
                return None
            if isinstance(v, list):
                return [list(x.type.shape) for x in v]
            return list(v.type.shape)
        return [shape(v) for v in self.inputs]

    @property
    def output_shapes(self) -> list:
        return [list(r.type.shape) for r in self.op.results]

    def call_args(self, spec_of) -> tuple[list, dict]:
        """(positional args, keyword attrs) for `rule.infer_forward`; `spec_of(value)` builds a spec."""
        def conv(v):
            if v is None:
                return None
            return [spec_of(x) for x in v] if isinstance(v, list) else spec_of(v)
        return [conv(v) for v in self.inputs], dict(self.attrs)


def _rules():
    from .. import core
    return core


def has_rule(op: Op) -> bool:
    from .mlir_import import rule_names
    return op.name in rule_names()


def bind(op: Op) -> BoundRule:
    """The rule call for `op`; UnknownOpError when no rule has its name, IRError when it cannot fit."""
    if not has_rule(op):
        raise UnknownOpError(f"no sharding rule is registered under '{op.name}'", op=op.name)
    params = _rules().get_phi_spmd_rule(op.name).forward_params
    tensor_params = [(n, kind) for n, kind, _ in params if kind in ("tensor", "tensor_list", "optional_tensor")]
    attr_names = [n for n, kind, _ in params if kind not in ("tensor", "tensor_list", "optional_tensor")]
    inputs = group_operands(op, tensor_params)
    decoded = decode_attributes(op)
    attrs = {k: decoded[k] for k in attr_names if k in decoded}
    return BoundRule(op, op.name, inputs, attrs)


def group_operands(op: Op, tensor_params: list[tuple[str, str]]) -> list:
    """Split an op's operands over the rule's tensor parameters.

    `operand_segment_sizes` (a list of ints, one per parameter) says it explicitly; otherwise one
    `T[]` parameter takes what the others leave, and missing optional tensors are the last ones.
    """
    operands = list(op.operands)
    kinds = [k for _, k in tensor_params]
    sizes = op.attrs.get("operand_segment_sizes")
    if sizes is None:
        lists = kinds.count("tensor_list")
        if lists > 1:
            raise IRError(f"rule takes {lists} tensor lists; give operand_segment_sizes", op=op.name)
        fixed = len(kinds) - lists
        if lists:
            n = len(operands) - fixed
            if n < 0:
                raise IRError(f"{len(operands)} operands for {fixed} tensor parameters and a list", op=op.name)
            sizes = [n if k == "tensor_list" else 1 for k in kinds]
        else:
            required = kinds.count("tensor")
            if not required <= len(operands) <= len(kinds):
                raise IRError(f"rule takes {required} to {len(kinds)} tensors, the op has {len(operands)} operands",
                              op=op.name)
            sizes = [1] * len(operands) + [0] * (len(kinds) - len(operands))
    if len(sizes) != len(kinds) or sum(sizes) != len(operands) or any(s < 0 for s in sizes):
        raise IRError(f"operand_segment_sizes {list(sizes)} does not split {len(operands)} operands "
                      f"over {len(kinds)} parameters", op=op.name)
    out, pos = [], 0
    for (name, kind), n in zip(tensor_params, sizes):
        chunk = operands[pos:pos + n]
        pos += n
        if kind == "tensor_list":
            out.append(chunk)
        elif n == 1:
            out.append(chunk[0])
        elif n == 0 and kind == "optional_tensor":
            out.append(None)
        else:
            raise IRError(f"tensor parameter {name!r} needs exactly one operand, got {n}", op=op.name)
    return out


def decode_attributes(op: Op) -> dict[str, Any]:
    """The op's attributes under the rule contract's names (StableHLO's decoded; others as they are)."""
    attrs = {k: v for k, v in op.attrs.items() if not isinstance(v, MLIRAttr)}
    name = op.name
    if not name.startswith("stablehlo."):
        return dict(op.attrs)
    if name in _RESULT_SHAPE_ATTR and op.results:
        attrs[_RESULT_SHAPE_ATTR[name]] = list(op.results[0].type.shape)
    if name == "stablehlo.convert" and op.results:
        attrs["new_dtype"] = op.results[0].type.dtype
    if name == "stablehlo.reduce":
        attrs["body"] = reduction_name(op)
    with shared_context():
        if name == "stablehlo.dot_general":
            d = stablehlo.DotDimensionNumbers(_attr(op, "dot_dimension_numbers"))
            attrs.update(lhs_batching_dimensions=list(d.lhs_batching_dimensions),
                         rhs_batching_dimensions=list(d.rhs_batching_dimensions),
                         lhs_contracting_dimensions=list(d.lhs_contracting_dimensions),
                         rhs_contracting_dimensions=list(d.rhs_contracting_dimensions))
        elif name == "stablehlo.compare":
            attrs["comparison_direction"] = stablehlo.ComparisonDirectionAttr(
                _attr(op, "comparison_direction")).value
            attrs["compare_type"] = (stablehlo.ComparisonTypeAttr(_attr(op, "compare_type")).value
                                     if "compare_type" in op.attrs else "")
        elif name == "stablehlo.gather":
            g = stablehlo.GatherDimensionNumbers(_attr(op, "dimension_numbers"))
            attrs.update(offset_dims=list(g.offset_dims), collapsed_slice_dims=list(g.collapsed_slice_dims),
                         start_index_map=list(g.start_index_map), operand_batching_dims=list(g.operand_batching_dims),
                         start_indices_batching_dims=list(g.start_indices_batching_dims),
                         index_vector_dim=int(g.index_vector_dim))
        elif name == "stablehlo.scatter":
            s = stablehlo.ScatterDimensionNumbers(_attr(op, "scatter_dimension_numbers"))
            attrs.update(update_window_dims=list(s.update_window_dims),
                         inserted_window_dims=list(s.inserted_window_dims),
                         scatter_dims_to_operand_dims=list(s.scattered_dims_to_operand_dims),
                         input_batching_dims=list(s.input_batching_dims),
                         scatter_indices_batching_dims=list(s.scatter_indices_batching_dims),
                         index_vector_dim=int(s.index_vector_dim))
    return attrs


def _attr(op: Op, key: str):
    value = op.attrs.get(key)
    if not isinstance(value, MLIRAttr):
        raise IRError(f"attribute {key!r} is missing or not an MLIR attribute (got {value!r})", op=op.name)
    return ir.Attribute.parse(value.text)


def reduction_name(op: Op) -> str:
    """sum/max/min/prod/and/or for a reduce whose body applies one such op to its two arguments."""
    if len(op.operands) != 2 or len(op.regions) != 1:
        raise IRError("a reduce rule takes one operand and one init value", op=op.name)
    block = op.regions[0].block
    body = [o for o in block.ops if not o.is_terminator]
    if len(body) != 1 or body[0].name not in REDUCTIONS:
        raise IRError(f"reduce body {[o.name for o in body]} is not one of {sorted(REDUCTIONS)}", op=op.name)
    if sorted(map(id, body[0].operands)) != sorted(map(id, block.args)):
        raise IRError("reduce body does not combine its two arguments", op=op.name)
    return REDUCTIONS[body[0].name]


def bind_all(program) -> tuple[list[BoundRule], list[Op]]:
    """Every op of a program with a rule bound, and the ops that have none (constants, returns...)."""
    bound, unbound = [], []
    for op in program.walk():
        (bound.append(bind(op)) if has_rule(op) else unbound.append(op))
    return bound, unbound


__all__ = ["BoundRule", "bind", "bind_all", "decode_attributes", "group_operands", "has_rule", "reduction_name"]
