"""spmdkit: SPMD sharding-inference rules, written once as YAML and generated into C++.

The API mirrors PaddlePaddle 3.3.1's rule API, so Paddle-style rule tests port by changing
imports::

    from spmdkit import core, ProcessMesh, TensorDistAttr, DistTensorSpec
    rule = core.get_phi_spmd_rule("matmul")
    inputs, outputs = rule.infer_forward(x_spec, y_spec, False, False)
"""
import os as _os

if _os.environ.get("SPMDKIT_CORE_DIR"):  # development: use the extension of another build folder
    import glob as _glob
    import importlib.util as _util
    import sys as _sys

    _found = _glob.glob(_os.path.join(_os.environ["SPMDKIT_CORE_DIR"], "_core*.so"))
    if not _found:
        raise ImportError(f"SPMDKIT_CORE_DIR={_os.environ['SPMDKIT_CORE_DIR']} holds no _core extension")
    _spec = _util.spec_from_file_location(f"{__name__}._core", _found[0])
    _mod = _util.module_from_spec(_spec)
    _sys.modules[_spec.name] = _mod
    _spec.loader.exec_module(_mod)

from . import _core as core  # noqa: E402
from ._core import DistTensorSpec, ProcessMesh, TensorDistAttr  # noqa: E402

# The program layers, in the order of the flow: representation -> program IR -> propagation ->
# reshard planning -> partitioning (the submodules that need jax import it themselves).
from . import sharding  # noqa: E402,F401

__all__ = ["core", "ProcessMesh", "TensorDistAttr", "DistTensorSpec", "sharding", "propagate"]
__version__ = "0.1.0"


def propagate(program, **options):
    """Propagates an `spmdkit.ir.Program`'s shardings in place (Shardy's algorithm over the rules'
    factor tables) and returns the program; `spmdkit.propagation.propagate_program` also returns
    the graph with provenance. Options: aggressive, op_priority, user_priority, factor_table_of."""
    from .propagation.from_ir import propagate_program
    factor_table_of = options.pop("factor_table_of", None)
    propagate_program(program, factor_table_of, **options)
    return program
