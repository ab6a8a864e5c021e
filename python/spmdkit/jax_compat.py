"""Every use of JAX's private API (`jax._src`) by spmdkit, in one module, with a version check.

spmdkit supports jax >= 0.10.2, < 0.12 (pyproject.toml): the CPU 0.10.2 of CI and the 0.11.x of
GPU images. The private names it needs:
- `make_ir_context()`: an MLIR context with JAX's dialects registered
  (`jax._src.interpreters.mlir.make_ir_context`); used by spmdkit.ir.mlir_context.
- `user_frame(traceback)`: the user's frame of an equation's traceback, for readable error
  locations (`jax._src.source_info_util.user_frame`); best effort, None when it fails.
- `PRIMITIVE_MODULES` / `primitive_modules()`: the modules that define `jax.lax`'s primitives, to
  find a primitive by name when re-binding an imported program.
- `convolution`, `slicing`, `lax`: the dimension-number classes and enums the IR's params need,
  taken from public `jax.lax` (they are the same classes) so no private import is left for them.
A JAX release that moves one of these should need changes here only. Importing this module
imports JAX.
"""
from __future__ import annotations

import importlib
import re
import types
import warnings

import jax

SUPPORTED = ((0, 10, 2), (0, 12, 0))   # [lowest, first unsupported)


class JaxVersionError(ImportError):
    """A private JAX API spmdkit needs is missing from this JAX version."""


def parse_version(text: str) -> tuple[int, int, int]:
    """(major, minor, patch) of a version string such as '0.11.2' or '0.10.2.dev20260101'."""
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not m:
        raise ValueError(f"not a JAX version: {text!r}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


JAX_VERSION = parse_version(jax.__version__)


def check_version(version: tuple[int, int, int] = JAX_VERSION) -> bool:
    """True inside SUPPORTED; else a warning naming the version (the private names may differ)."""
    low, high = SUPPORTED
    if low <= version < high:
        return True
    warnings.warn(f"spmdkit is tested with jax >= {'.'.join(map(str, low))}, < {'.'.join(map(str, high))}; "
                  f"this is jax {'.'.join(map(str, version))}: its private APIs (spmdkit.jax_compat) may differ",
                  RuntimeWarning, stacklevel=2)
    return False


check_version()


def _private(module: str):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise JaxVersionError(f"jax {jax.__version__} has no {module} (spmdkit.jax_compat supports jax "
                              f"{'.'.join(map(str, SUPPORTED[0]))} to <{'.'.join(map(str, SUPPORTED[1]))})") from e


def make_ir_context():
    """A fresh MLIR context with JAX's dialects (StableHLO, Shardy, func, ...) registered."""
    return _private("jax._src.interpreters.mlir").make_ir_context()


def user_frame(traceback):
    """The user's frame (`.file_name`, `.start_line`) of a jaxpr equation's traceback, or None."""
    try:
        return _private("jax._src.source_info_util").user_frame(traceback)
    except Exception:  # a readable location is best effort
        return None


# the modules that define primitives (jax.lax's and the transformations'); missing ones are skipped
PRIMITIVE_MODULES = ("jax._src.lax.lax", "jax._src.lax.slicing", "jax._src.lax.special", "jax._src.lax.parallel",
                     "jax._src.lax.control_flow", "jax._src.lax.convolution", "jax._src.lax.windowed_reductions",
                     "jax._src.ad_util", "jax._src.ad_checkpoint", "jax._src.pjit", "jax._src.shard_map",
                     "jax._src.custom_derivatives", "jax._src.lax.ann", "jax._src.lax.linalg",
                     "jax._src.random.prng", "jax._src.random.threefry2x32")


def primitive_modules() -> list:
    """The PRIMITIVE_MODULES this JAX has, imported."""
    out = []
    for name in PRIMITIVE_MODULES:
        try:
            out.append(importlib.import_module(name))
        except ImportError:
            continue
    return out


# Public stand-ins for the private modules the IR's param codec named (the same classes).
slicing = types.SimpleNamespace(GatherDimensionNumbers=jax.lax.GatherDimensionNumbers,
                                ScatterDimensionNumbers=jax.lax.ScatterDimensionNumbers,
                                GatherScatterMode=jax.lax.GatherScatterMode)
convolution = types.SimpleNamespace(ConvDimensionNumbers=jax.lax.ConvDimensionNumbers)
lax = types.SimpleNamespace(Precision=jax.lax.Precision, RoundingMethod=jax.lax.RoundingMethod, FftType=jax.lax.FftType)


def prng_internals():
    """(dtypes, core, prng): the private modules behind PRNG key arrays (spmdkit.ir.jax_keys
    replaces key values by their uint32 data as JAX's own lowering does)."""
    from jax._src import core, dtypes
    from jax._src.random import prng
    return dtypes, core, prng
