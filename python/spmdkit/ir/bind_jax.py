"""An IR rule op -> its registry rule and arguments, for `rule.factors(...)` / `infer_forward(...)`.

An op's name is its registry name (`jax.dot_general`, `stablehlo.add`, Paddle's `matmul`). The
binding reads the rule's own signature (`rule.forward_params`: name, kind, has-default) instead of
a table per op, so every rule that lands in the registry binds with no change here:
- tensor params take operands in order; a `tensor_list` param (`cases[]`, `operands[]`,
  `start_indices[]`) takes every operand the tensor params after it leave; `optional_tensor`
  params take an operand while there are more than the required ones left, else None;
- `output_tensor` params (iota: no tensor input, the given result supplies the mesh) take the
  op's results in order;
- attribute params take the op's attribute of the same name (the importer already wrote jaxpr
  params under the registry's names); an absent attribute keeps the rule's default, and one with
  no default is an error naming the op and the attribute. Attributes the rule does not take
  (precision, weak_type, `jax.none_params`, ...) do not matter to sharding and are not passed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

from .core import Op, Value
from .errors import IRError

TENSOR_KINDS = ("tensor", "tensor_list", "optional_tensor")
OUTPUT_KINDS = ("output_tensor",)  # a result passed in (ops with no tensor input: its layout names the mesh)


class RuleBindingError(IRError):
    """An op that does not fit its rule: no such rule, wrong operand count, a missing attribute."""


@dataclass
class RuleCall:
    """One op's rule call: `inputs` per tensor param (a Value, a list of Values, or None)."""
    rule_name: str
    inputs: list[Union[Value, list, None]]
    attrs: dict[str, Any] = field(default_factory=dict)
    op: Optional[Op] = None

    def args(self, spec_of: Callable[[Value], Any]) -> list:
        """Positional arguments: `spec_of(value)` (a DistTensorSpec) per tensor, lists for lists."""
        out = []
        for item in self.inputs:
            if item is None:
                out.append(None)
            elif isinstance(item, list):
                out.append([spec_of(v) for v in item])
            else:
                out.append(spec_of(item))
        return out

    def rule(self):
        from .. import core
        return core.get_phi_spmd_rule(self.rule_name)

    def infer_forward(self, spec_of: Callable[[Value], Any]):
        return self.rule().infer_forward(*self.args(spec_of), **self.attrs)

    def factors(self, spec_of: Callable[[Value], Any]):
        rule = self.rule()
        if not hasattr(rule, "factors"):
            raise RuleBindingError(f"rule {self.rule_name!r} has no factors() in this build", op=self.rule_name)
        return rule.factors(*self.args(spec_of), **self.attrs)


def has_rule(name: str) -> bool:
    from .. import core
    return bool(core.contains_spmd_rule(name))


def bind(op: Op) -> RuleCall:
    """The rule call of `op` (named by its registry name)."""
    from .. import core
    if not isinstance(op, Op):
        raise TypeError(f"bind: expected an Op, got {type(op).__name__}")
    if not has_rule(op.name):
        raise RuleBindingError(f"no rule named {op.name!r} in the registry", op=op.name)
    params = list(core.get_phi_spmd_rule(op.name).forward_params)
    tensor_params = [(n, k) for n, k, _ in params if k in TENSOR_KINDS]
    operands = list(op.operands)
    required = sum(1 for _, k in tensor_params if k == "tensor")
    has_list = any(k == "tensor_list" for _, k in tensor_params)
    optional = sum(1 for _, k in tensor_params if k == "optional_tensor")
    if len(operands) < required or (not has_list and len(operands) > required + optional):
        want = f"{required}" + (" or more" if has_list else f" to {required + optional}" if optional else "")
        raise RuleBindingError(f"has {len(operands)} operands; rule {op.name!r} takes {want} "
                               f"({', '.join(n for n, _ in tensor_params)})", op=op.name)
    inputs: list = []
    pos = 0
    results = iter(op.results)
    kinds = [k for _, k, _ in params if k in TENSOR_KINDS]
    seen = 0
    for name, kind, _ in params:  # in the rule's order, so positions match its signature
        if kind in OUTPUT_KINDS:
            inputs.append(next(results, None))
            continue
        if kind not in TENSOR_KINDS:
            continue
        seen += 1
        after = sum(1 for k in kinds[seen:] if k == "tensor")
        if kind == "tensor":
            inputs.append(operands[pos])
            pos += 1
        elif kind == "tensor_list":
            take = len(operands) - pos - after
            inputs.append(operands[pos:pos + take])
            pos += take
        else:  # optional: present while operands remain beyond the required ones still to come
            if len(operands) - pos > after:
                inputs.append(operands[pos])
                pos += 1
            else:
                inputs.append(None)
    attrs = {}
    for name, kind, has_default in params:
        if kind in TENSOR_KINDS or kind in OUTPUT_KINDS:
            continue
        if name in op.attrs:
            attrs[name] = op.attrs[name]
        elif not has_default:
            raise RuleBindingError(f"rule {op.name!r} needs attribute {name!r}, which the op lacks "
                                   f"(it has: {', '.join(sorted(op.attrs)) or 'none'})", op=op.name)
    return RuleCall(op.name, inputs, attrs, op)
