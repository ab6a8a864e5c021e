"""The one place that touches jaxlib's MLIR bindings' setup (JAX's private part: spmdkit.jax_compat).

A context registers the func, stablehlo, chlo and sdy dialects and allows unregistered ones, so
that our generic rule ops (`"paddle.matmul"`, `"jax.scatter-add"`) parse next to Shardy's ops.
A jax version change should only ever touch this file.
"""
from __future__ import annotations

import sys
import threading
import types

from jaxlib.mlir import ir  # noqa: F401  (re-exported: the bindings the other modules use)
from jaxlib.mlir.dialects import sdy, stablehlo  # noqa: F401

from .errors import IRError, IRParseError, IRVerifyError, error_from_diagnostic

_local = threading.local()

# The bindings look up a Python module for each op's dialect every time an op is wrapped, and
# for a dialect without one (our "paddle" and "jax") they retry the failing imports for every op:
# a third of the import time of a 10k-op module. An empty module under the first search prefix
# is found at once and cached. (Nothing real lives at these names.)
for _dialect in ("paddle", "jax"):
    _name = f"jaxlib.mlir.dialects.{_dialect}"
    if _name not in sys.modules:
        _stub = types.ModuleType(_name, f"placeholder: spmdkit's unregistered '{_dialect}' MLIR dialect")
        sys.modules[_name] = _stub


def make_context() -> ir.Context:
    """A fresh MLIR context with the StableHLO, Shardy and func dialects loaded."""
    from ..jax_compat import make_ir_context  # JAX's private API, behind a version check

    ctx = make_ir_context()
    ctx.allow_unregistered_dialects = True
    return ctx


def shared_context() -> ir.Context:
    """This thread's context (MLIR contexts are not shared across threads)."""
    ctx = getattr(_local, "ctx", None)
    if ctx is None:
        ctx = _local.ctx = make_context()
    return ctx


def parse_module(text: str, ctx: ir.Context | None = None) -> ir.Module:
    """Parse MLIR text; MLIR's first error diagnostic becomes a typed IRError with line/column."""
    if not isinstance(text, str):
        raise TypeError(f"MLIR text must be a str, got {type(text).__name__}")
    ctx = ctx or shared_context()
    try:
        # Module.parse verifies what it parsed (MLIR's parser config does by default): a verifier's
        # complaint comes back from here, typed IRVerifyError by _typed.
        module = ir.Module.parse(text, ctx)
    except ir.MLIRError as e:
        raise _typed(e, text, IRParseError) from None
    return module


def _typed(e: "ir.MLIRError", text: str, default: type) -> IRError:
    diags = list(getattr(e, "error_diagnostics", []) or [])
    if not diags:
        return default(str(e.message))
    d = diags[0]
    # A verifier's diagnostic ("'op' op ...") is a verify error even when raised while parsing.
    kind = IRVerifyError if "' op " in d.message and default is IRParseError else default
    return error_from_diagnostic(d.message, d.location, source=text, default=kind)


def print_module(module: ir.Module, generic: bool = False, locations: bool = False) -> str:
    """MLIR's own printer: pretty forms for registered ops, generic for `paddle.*`/`jax.*`."""
    return module.operation.get_asm(print_generic_op_form=generic, enable_debug_info=locations)
