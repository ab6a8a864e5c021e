"""Rule backends: build the API's specs from a case, call a rule, read back placements.

PaddlePaddle 3.3.1 and spmdkit share one Python API, so one adapter serves both; they differ in
how a partial's reduce type is set and read (Paddle: SUM only, and only visible in str(attr)),
and in one signature (Paddle's reduce_base reverse takes no reduce_type). Both are imported
lazily, so whichever is missing only disables itself.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from math import prod

import numpy as np

from .cases import TensorArg
from .paddle_hazards import paddle_hazard
from .placement import Placement


class RuleRejected(Exception):
    """The rule refused the call (an enforce failure, a TypeError...)."""


@dataclass
class RuleCall:
    rule: str
    function: str                   # "forward" | "reverse" | "grad"
    mesh_shape: tuple[int, ...]
    tensors: list                   # TensorArg | list[TensorArg] | None, positional
    attrs: list
    out_ndims: list[int] = field(default_factory=list)  # known to the simulator; for ReplicateBackend


class ApiBackend:
    """A backend speaking Paddle's rule API through the module objects given."""
    name = "api"
    partial_types: tuple[str, ...] = ("sum",)

    def __init__(self, core, ProcessMesh, TensorDistAttr, DistTensorSpec):
        self.core, self.ProcessMesh, self.TensorDistAttr, self.DistTensorSpec = core, ProcessMesh, TensorDistAttr, DistTensorSpec
        self._meshes: dict = {}

    def has_rule(self, name: str) -> bool:
        try:
            self.core.get_phi_spmd_rule(name)
            return True
        except Exception:  # noqa: BLE001 - "not registered" is an exception in both
            return False

    def mesh(self, shape):
        if shape not in self._meshes:
            ids = np.arange(prod(shape)).reshape(shape).tolist()
            self._meshes[shape] = self.ProcessMesh(ids, dim_names=[f"d{i}" for i in range(len(shape))])
        return self._meshes[shape]

    def set_partial(self, attr, partial) -> None:
        raise NotImplementedError

    def read_partial(self, attr) -> dict[int, str]:
        raise NotImplementedError

    def adapt(self, call: RuleCall) -> tuple[list, list]:
        return call.tensors, call.attrs

    def spec(self, t: TensorArg, mesh):
        attr = self.TensorDistAttr()
        attr.process_mesh = mesh
        attr.multi_dims_mapping = [list(d) for d in t.placement.dims]
        if t.placement.partial:
            self.set_partial(attr, t.placement.partial)
        return self.DistTensorSpec(list(t.shape), attr)

    def to_api(self, arg, mesh):
        if isinstance(arg, list):
            return [self.spec(t, mesh) for t in arg]
        return self.absent(mesh) if arg is None else self.spec(arg, mesh)

    def absent(self, mesh):
        """An absent optional tensor, as the API takes it."""
        return None

    def from_api(self, attr):
        if isinstance(attr, list):
            return [self.from_api(a) for a in attr]
        return Placement.make([list(d) for d in attr.multi_dims_mapping], self.read_partial(attr))

    def infer(self, call: RuleCall) -> tuple[list, list]:
        tensors, attrs = self.adapt(call)
        mesh = self.mesh(tuple(call.mesh_shape))
        args = [self.to_api(t, mesh) for t in tensors] + list(attrs)
        try:
            rule = self.core.get_phi_spmd_rule(call.rule)
            fn = rule.infer_forward if call.function == "forward" else rule.infer_backward
            ins, outs = fn(*args)
        except (ValueError, TypeError, RuntimeError, IndexError, KeyError, NotImplementedError) as e:
            raise RuleRejected(str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__) from e
        return self.from_api(list(ins)), self.from_api(list(outs))


_PADDLE_TYPES = {"SUM": "sum", "AVG": "avg", "MAX": "max", "MIN": "min", "PROD": "prod",
                 "PRODUCT": "prod", "ANY": "any", "ALL": "all"}


class PaddleBackend(ApiBackend):
    name = "paddle"
    partial_types = ("sum",)  # Paddle's Python API sets SUM only

    def __init__(self):
        os.environ.setdefault("GLOG_minloglevel", "2")  # Paddle warns on every multi-mesh split
        import paddle  # noqa: F401 - registers the rules
        from paddle.distributed import ProcessMesh
        from paddle.distributed.auto_parallel.static.dist_attribute import TensorDistAttr
        from paddle.framework import core
        super().__init__(core, ProcessMesh, TensorDistAttr, core.DistTensorSpec)

    def absent(self, mesh):
        attr = self.TensorDistAttr()  # Paddle's "empty" spec: shape [], mapping []
        attr.process_mesh = mesh
        attr.dims_mapping = []
        return self.DistTensorSpec([], attr)

    def set_partial(self, attr, partial) -> None:
        if any(t != "sum" for _, t in partial):
            raise RuleRejected("Paddle's Python API can only set SUM partials")
        attr._set_partial_dims([m for m, _ in partial])

    def read_partial(self, attr) -> dict[int, str]:
        if not attr._is_partial():
            return {}
        found = dict((int(m), _PADDLE_TYPES.get(t, t.lower())) for m, t in re.findall(r"Partial\(dims:(\d+), (\w+)\)", str(attr)))
        return found or {int(m): "sum" for m in attr._partial_dims()}

    def adapt(self, call: RuleCall) -> tuple[list, list]:
        hazard = paddle_hazard(call.rule, call.function, call.attrs, call.tensors)
        if hazard:
            raise RuleRejected(f"not run: it crashes Paddle 3.3.1 ({hazard})")
        if call.rule == "reduce_base" and call.function != "forward":
            return call.tensors, call.attrs[:2]  # ReductionInferSpmdReverse(x, out, axis, keep_dim)
        return call.tensors, call.attrs


class SpmdkitBackend(ApiBackend):
    name = "spmdkit"
    partial_types = ("sum", "avg", "max", "min")

    def __init__(self):
        from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core
        super().__init__(core, ProcessMesh, TensorDistAttr, DistTensorSpec)

    def set_partial(self, attr, partial) -> None:
        for m, t in partial:
            attr._set_partial_dims([m], t)

    def read_partial(self, attr) -> dict[int, str]:
        return {int(m): str(t).lower() for m, t in dict(attr.partial_status).items()}


class ReplicateBackend:
    """Replicates everything: always right, never sharded. Tests the samplers and kernels
    without any rule library."""
    name = "replicate"
    partial_types = ("sum", "avg", "max", "min", "prod")

    def has_rule(self, name: str) -> bool:
        return True

    def infer(self, call: RuleCall) -> tuple[list, list]:
        def rep(a):
            if isinstance(a, list):
                return [Placement.replicated(len(t.shape)) for t in a]
            return None if a is None else Placement.replicated(len(a.shape))
        n_in = len(call.tensors) - (len(call.out_ndims) if call.function == "reverse" else 0)
        return [rep(a) for a in call.tensors[:n_in]], [Placement.replicated(n) for n in call.out_ndims]


_CACHE: dict[str, object] = {}


def get_backend(name: str):
    """'paddle', 'spmdkit' or 'replicate', built once per process (importing Paddle is slow)."""
    if name not in _CACHE:
        _CACHE[name] = {"paddle": PaddleBackend, "spmdkit": SpmdkitBackend, "replicate": ReplicateBackend}[name]()
    return _CACHE[name]
