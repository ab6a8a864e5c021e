"""spmdkit: SPMD sharding-inference rules, written once as YAML and generated into C++.

The API mirrors PaddlePaddle 3.3.1's rule API, so Paddle-style rule tests port by changing
imports::

    from spmdkit import core, ProcessMesh, TensorDistAttr, DistTensorSpec
    rule = core.get_phi_spmd_rule("matmul")
    inputs, outputs = rule.infer_forward(x_spec, y_spec, False, False)
"""
from . import _core as core
from ._core import DistTensorSpec, ProcessMesh, TensorDistAttr

__all__ = ["core", "ProcessMesh", "TensorDistAttr", "DistTensorSpec"]
__version__ = "0.1.0"
