"""spmdkit.ir: programs of ops over values, with Shardy's sharding annotations and compiler API."""
from .core import Block, Function, Op, Program, Region, Value  # noqa: F401
from .types import TensorType, element_type  # noqa: F401
from .errors import (IRError, IRParseError, IRVerifyError, ShardingRankError, UnknownAxisError,  # noqa: F401
                     UnknownMeshError, UnknownOpError, UnsupportedIRError)
from .attributes import MLIRAttr  # noqa: F401
from .mlir_import import load, parse  # noqa: F401
from .printer import print_program, to_mlir_module  # noqa: F401
Program.__str__ = print_program  # str(program) prints it; core does not import the printer (one way)
from .jax_import import JaxImportError, import_jax  # noqa: F401
from .evaluate import EvaluateError, evaluate  # noqa: F401
from .builder import BlockBuilder, FunctionBuilder, ProgramBuilder  # noqa: F401
from .verify import verify_program  # noqa: F401
from .inline import inline_calls  # noqa: F401
# `bind` decodes StableHLO attributes first, then binds as bind_jax does: one binder for every op.
from .bind_jax import RuleBindingError, RuleCall  # noqa: F401
from .bind_stablehlo import bind, bind_all, decode_attributes  # noqa: F401
