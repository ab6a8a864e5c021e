"""spmdkit.ir: programs of ops over values, with Shardy's sharding annotations and compiler API."""
from .core import Block, Function, Op, Program, Region, Value  # noqa: F401
from .types import TensorType, element_type  # noqa: F401
