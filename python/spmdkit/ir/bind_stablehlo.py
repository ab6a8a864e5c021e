"""An IR op -> the registry rule that shards it and that rule's arguments.

`bind(op)` gives bind_jax's RuleCall (the rule's name, the operands grouped as the rule's tensor
parameters, the attributes under the rule's names per docs/jax_stablehlo_rules.md of the
jax-rules branch) for ops read from MLIR text: StableHLO's structured attributes are decoded (dot_general's
`#stablehlo.dot<...>` into its four dimension lists, compare's direction into "GT", gather and
scatter dimension numbers into lists), values StableHLO keeps in types are read from them
(broadcast_in_dim/reshape/iota `shape`, convert `new_dtype`), and reduce's body becomes the
name of its reduction. Attributes the rule does not take are dropped, as the contract says.
"""
from __future__ import annotations

from typing import Any

from .attributes import MLIRAttr
from .core import Op
from .bind_jax import TENSOR_KINDS, RuleBindingError, RuleCall, has_rule
from .bind_jax import bind as bind_by_signature
from .errors import IRError
from .mlir_context import ir, shared_context, stablehlo

# reduce's region as the rule names it: the one op its body applies
REDUCTIONS = {"stablehlo.add": "sum", "stablehlo.maximum": "max", "stablehlo.minimum": "min",
              "stablehlo.multiply": "prod", "stablehlo.and": "and", "stablehlo.or": "or"}
# jaxpr params `padding` as (low, high) pairs; the rules take them flat
_JAX_PAIRED_PADDING = {"jax.reduce_window_sum", "jax.reduce_window_max", "jax.reduce_window_min",
                       "jax.conv_general_dilated"}
_FFT_TYPES = {"FFT": 0, "IFFT": 1, "RFFT": 2, "IRFFT": 3}  # lax.FftType's values, as jaxprs hold them
_RESULT_SHAPE_ATTR = {"stablehlo.broadcast_in_dim": "shape", "stablehlo.reshape": "shape", "stablehlo.iota": "shape",
                     "stablehlo.constant": "shape"}


def bind(op: Op) -> RuleCall:
    """The rule call for `op`: bind_jax's binding, with StableHLO's attributes decoded first.

    An op may give `operand_segment_sizes` (one count per tensor parameter of the rule) to say
    which operands go where, e.g. which optional tensors are absent.
    """
    if not isinstance(op, Op):
        raise TypeError(f"bind: expected an Op, got {type(op).__name__}")
    if not has_rule(op.name):
        raise RuleBindingError(f"no rule named {op.name!r} in the registry", op=op.name)
    if op.name == "stablehlo.reduce" and len(op.operands) > 2:
        return _bind_variadic_reduce(op)
    if op.name == "stablehlo.reduce_window":
        return _bind_reduce_window(op)
    if op.name == "stablehlo.select_and_scatter":
        return _bind_select_and_scatter(op)
    decoded = decode_attributes(op)
    if "operand_segment_sizes" in op.attrs:
        from .. import core
        params = core.get_phi_spmd_rule(op.name).forward_params
        inputs = group_operands(op, [(n, k) for n, k, _ in params if k in TENSOR_KINDS])
        attrs = {}
        for name, kind, has_default in params:
            if kind in TENSOR_KINDS:
                continue
            if name in decoded:
                attrs[name] = decoded[name]
            elif not has_default:
                raise RuleBindingError(f"rule {op.name!r} needs attribute {name!r}, which the op lacks", op=op.name)
        return RuleCall(op.name, inputs, attrs, op)
    view = Op(op.name, list(op.operands), list(op.results), decoded, list(op.regions), dict(op.attr_types),
              location=op.location)
    call = bind_by_signature(view)
    call.op = op
    return call


VARIADIC_REDUCE = "stablehlo.reduce-variadic"


def _bind_variadic_reduce(op: Op) -> RuleCall:
    """A reduce of N > 1 operands (and N init values) binds to its own rule: the body combines
    the operands jointly, so the rule keeps reduced dims whole whatever the body is."""
    n = _halves(op)
    if "dimensions" not in op.attrs:
        raise RuleBindingError("reduce needs attribute 'dimensions', which the op lacks", op=op.name)
    attrs = {"dimensions": list(op.attrs["dimensions"]), "body": variadic_body_name(op)}
    return RuleCall(VARIADIC_REDUCE, [list(op.operands[:n]), list(op.operands[n:])], attrs, op)


def _halves(op: Op) -> int:
    """N, for an op of N operands then N init values (variadic reduce and reduce_window)."""
    n, rest = divmod(len(op.operands), 2)
    if rest or not n or len(op.regions) != 1:
        raise IRError(f"takes as many init values as operands and one region, got {len(op.operands)} operands "
                      f"and {len(op.regions)} regions", op=op.name)
    return n


def _bind_reduce_window(op: Op) -> RuleCall:
    n = _halves(op)
    if "window_dimensions" not in op.attrs:
        raise RuleBindingError("reduce_window needs attribute 'window_dimensions', which the op lacks", op=op.name)
    attrs = _window_attrs(op, ("window_dimensions", "window_strides", "base_dilations", "window_dilations"))
    try:
        attrs["body"] = reduction_name(op) if n == 1 else "other"
    except IRError:  # a region that is not one elementwise reduction: sharded alike
        attrs["body"] = "other"
    return RuleCall("stablehlo.reduce_window", [list(op.operands[:n]), list(op.operands[n:])], attrs, op)


def _bind_select_and_scatter(op: Op) -> RuleCall:
    if len(op.operands) != 3 or len(op.regions) != 2:
        raise IRError(f"takes an operand, a source and an init value and two regions (select, scatter), got "
                      f"{len(op.operands)} operands and {len(op.regions)} regions", op=op.name)
    if "window_dimensions" not in op.attrs:
        raise RuleBindingError("select_and_scatter needs attribute 'window_dimensions', which the op lacks", op=op.name)
    attrs = _window_attrs(op, ("window_dimensions", "window_strides"))
    # the select region, one compare of its two arguments: the window's max (GE, GT) or min (LE, LT);
    # only verify's kernel reads it
    body = [o for o in op.regions[0].block.ops if not o.is_terminator]
    direction = _first_compare(op.regions[0]) if len(body) == 1 else None
    attrs["select"] = {"GE": "ge", "GT": "ge", "LE": "le", "LT": "le"}.get(direction, "other")
    return RuleCall("stablehlo.select_and_scatter", list(op.operands), attrs, op)


def _window_attrs(op: Op, names) -> dict:
    """The op's attributes among `names` as lists, and `padding` (a dense Nx2 tensor) flattened to
    (low, high) per dim."""
    attrs = {k: list(op.attrs[k]) for k in names if k in op.attrs}
    if "padding" in op.attrs:
        with shared_context():
            attrs["padding"] = [int(v) for v in ir.DenseIntElementsAttr(_attr(op, "padding"))]
    return attrs


def _first_compare(region):
    """The direction (GT, GE, ...) of the region's first op when it is a compare, else None."""
    body = [o for o in region.block.ops if not o.is_terminator]
    if not body or body[0].name != "stablehlo.compare":
        return None
    try:
        with shared_context():
            return stablehlo.ComparisonDirectionAttr(_attr(body[0], "comparison_direction")).value
    except IRError:
        return None


def variadic_body_name(op: Op) -> str:
    """argmax / argmin for the (value, index) body JAX writes (its first compare of the two
    values is GT / LT); `other` for any other body. Only `spmdkit verify`'s kernel reads it: the
    rule shards every body alike."""
    direction = _first_compare(op.regions[0]) if len(op.operands) == 4 else None
    return {"GT": "argmax", "GE": "argmax", "LT": "argmin", "LE": "argmin"}.get(direction, "other")


def bind_all(program) -> tuple[list[RuleCall], list[Op]]:
    """Every op of a program that has a rule, bound; and the ops that have none (constants, returns...)."""
    bound, unbound = [], []
    for op in program.walk():
        (bound.append(bind(op)) if has_rule(op.name) else unbound.append(op))
    return bound, unbound


def group_operands(op: Op, tensor_params: list[tuple[str, str]]) -> list:
    """Split an op's operands over the rule's tensor parameters as `operand_segment_sizes` says."""
    operands = list(op.operands)
    kinds = [k for _, k in tensor_params]
    sizes = op.attrs["operand_segment_sizes"]
    if (not isinstance(sizes, list) or len(sizes) != len(kinds) or sum(sizes) != len(operands)
            or any(not isinstance(n, int) or n < 0 for n in sizes)):
        raise RuleBindingError(f"operand_segment_sizes {sizes!r} does not split {len(operands)} operands "
                               f"over {len(kinds)} tensor parameters", op=op.name)
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
            raise RuleBindingError(f"tensor parameter {name!r} needs exactly one operand, got {n}", op=op.name)
    return out


def decode_attributes(op: Op) -> dict[str, Any]:
    """The op's attributes under the rule contract's names (StableHLO's decoded; others as they are)."""
    attrs = {k: v for k, v in op.attrs.items() if not isinstance(v, MLIRAttr)}
    name = op.name
    if not name.startswith("stablehlo."):
        attrs = dict(op.attrs)
        padding = attrs.get("padding")
        if name in _JAX_PAIRED_PADDING and isinstance(padding, list) and padding and isinstance(padding[0], list):
            attrs["padding"] = [int(v) for pair in padding for v in pair]  # (lo, hi) pairs; the import stores them flat
        return attrs
    if name in _RESULT_SHAPE_ATTR and op.results:
        attrs[_RESULT_SHAPE_ATTR[name]] = list(op.results[0].type.shape)
    if name == "stablehlo.convert" and op.results:
        attrs["new_dtype"] = op.results[0].type.dtype
    if name == "stablehlo.reduce":
        attrs["body"] = reduction_name(op)
    if name == "stablehlo.iota" and "iota_dimension" in attrs:  # the rule contract calls it `dimension`
        attrs["dimension"] = attrs.pop("iota_dimension")
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
        elif name == "stablehlo.convolution":  # JAX's ConvDimensionNumbers; padding flat
            c = stablehlo.ConvDimensionNumbers(_attr(op, "dimension_numbers"))
            attrs.update(lhs_spec=[int(c.input_batch_dimension), int(c.input_feature_dimension),
                                   *map(int, c.input_spatial_dimensions)],
                         rhs_spec=[int(c.kernel_output_feature_dimension), int(c.kernel_input_feature_dimension),
                                   *map(int, c.kernel_spatial_dimensions)],
                         out_spec=[int(c.output_batch_dimension), int(c.output_feature_dimension),
                                   *map(int, c.output_spatial_dimensions)])
            if "padding" in op.attrs:
                attrs["padding"] = [int(v) for v in ir.DenseIntElementsAttr(_attr(op, "padding"))]
        elif name == "stablehlo.fft":  # jax.fft's names: the type as lax.FftType's number, fft_lengths
            attrs["fft_type"] = _FFT_TYPES[stablehlo.FftTypeAttr(_attr(op, "fft_type")).value]
            attrs["fft_lengths"] = attrs.pop("fft_length", [])
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


__all__ = ["bind", "bind_all", "decode_attributes", "group_operands", "reduction_name"]
