"""Op attributes: MLIR attribute <-> Python value, exact both ways.

Plain attributes become Python values (bool, int, float, str, lists, TensorSharding,
TensorType) so that rules and passes can read them; an `attr_types` pin (a short string kept in
`Op.attr_types`) records the MLIR form when Python's type alone would print a different one:

    pin                     MLIR form                       Python value
    (none)                  true / 5 : i64 / 1.5 : f64      bool / int / float
    "i32", "i1", "index"... 5 : i32                         int
    "f32", "bf16", ...      1.5 : f32                       float
    (none)                  array<i64: 1, 2>                list[int] (an empty list too)
    "array<i32>", ...       array<i32: 1, 2>                list[int | bool | float]
    "array"                 [1, "a", [2]]                   list (elements print with no pin)
    (none)                  #sdy.sharding<...>              TensorSharding
    (none)                  #sdy.sharding_per_value<[...]>  non-empty list[TensorSharding]
    "sharding_per_value"    #sdy.sharding_per_value<[]>     []
    "manual_axes"           #sdy<manual_axes{"a"}>          list[str]
    "symbol"                @callee                         str
    (none)                  tensor<2x3xf32> (a type)        TensorType

Everything else -- StableHLO's structured attributes (`#stablehlo.dot<...>`,
`#stablehlo<comparison_direction GT>`), dense constants, dictionaries, `unit` -- is kept as an
`MLIRAttr` holding its exact text, so it prints back unchanged; bind_stablehlo decodes the ones
rules need.
"""
from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Optional

import numpy as np

from ..sharding import TensorSharding, parse_sharding, parse_sharding_per_value
from .errors import AttributeConversionError
from .mlir_context import ir
from .types import OpaqueType, TensorType


@dataclass(frozen=True)
class MLIRAttr:
    """An attribute kept as its exact MLIR text."""
    text: str

    def __post_init__(self):
        if not isinstance(self.text, str) or not self.text.strip():
            raise AttributeConversionError(f"an MLIR attribute needs its text, got {self.text!r}")

    def __str__(self) -> str:
        return self.text


_INT_TYPES = {"i1", "i8", "i16", "i32", "i64", "si8", "si16", "si32", "si64",
              "ui8", "ui16", "ui32", "ui64", "index"}
_FLOAT_TYPES = {"f16", "bf16", "f32", "f64"}
_ARRAY_PINS = {"array<i1>", "array<i8>", "array<i16>", "array<i32>", "array<i64>", "array<f32>", "array<f64>"}
_BARE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")


# Attributes whose MLIR form the op fixes: a Python value for them needs no pin in attr_types.
OP_ATTR_PINS = {
    ("sdy.manual_computation", "in_shardings"): "sharding_per_value",
    ("sdy.manual_computation", "out_shardings"): "sharding_per_value",
    ("sdy.manual_computation", "manual_axes"): "manual_axes",
    ("func.call", "callee"): "symbol",
}


def default_pin(op_name: str, key: str) -> Optional[str]:
    return OP_ATTR_PINS.get((op_name, key))


# ---------------------------------------------------------------------------------------
# Python -> MLIR text
# ---------------------------------------------------------------------------------------
def quote_string(s: str) -> str:
    """An MLIR string literal: printable ASCII as is, everything else as \\XX bytes."""
    out = []
    for byte in s.encode("utf-8"):
        c = chr(byte)
        if c in '"\\' or byte < 0x20 or byte >= 0x7F:
            out.append("\\%02X" % byte)
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def attr_name(name: str) -> str:
    """An attribute's name in a dictionary: bare when MLIR allows it, quoted otherwise."""
    return name if _BARE_NAME.match(name) else quote_string(name)


def symbol_ref(name: str) -> str:
    return "@" + (name if _BARE_NAME.match(name) else quote_string(name))


def float_literal(value: float, type_name: str = "f64") -> str:
    """A float MLIR reads back bit for bit (hex for inf/nan, which have no decimal form)."""
    value = float(value)
    if math.isfinite(value):
        text = repr(value)
        if "e" in text and "." not in text.split("e")[0]:
            mant, exp = text.split("e")
            text = f"{mant}.0e{exp}"
        elif "." not in text and "e" not in text:
            text += ".0"
        return text
    if type_name == "f64":
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]
    if type_name == "f32":
        return "0x%08X" % struct.unpack("<I", struct.pack("<f", value))[0]
    if type_name == "f16":
        return "0x%04X" % int(np.array(value, dtype=np.float16).view(np.uint16))
    if type_name == "bf16":
        return "0x%04X" % (struct.unpack("<I", struct.pack("<f", value))[0] >> 16)
    raise AttributeConversionError(f"no hex form for a non-finite {type_name} float")


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _scalar(v):
    """numpy scalars as Python scalars."""
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    return v


def to_text(value: Any, pin: Optional[str] = None, name: str = "attribute") -> str:
    """The MLIR text of a Python attribute value (with its `attr_types` pin, if any)."""
    value = _scalar(value)
    if isinstance(value, MLIRAttr):
        return value.text
    if isinstance(value, TensorSharding):
        return value.to_text()
    if isinstance(value, TensorType):
        return str(value)
    if isinstance(value, bool):
        if pin not in (None, "i1"):
            raise AttributeConversionError(f"attribute {name!r}: a bool cannot be pinned to {pin!r}")
        return "true" if value else "false"
    if isinstance(value, int):
        if pin is None:
            return f"{value} : i64"
        if pin in _INT_TYPES:
            return f"{value} : {pin}"
        if pin in _FLOAT_TYPES:
            return f"{float_literal(value, pin)} : {pin}"
        raise AttributeConversionError(f"attribute {name!r}: an int cannot be pinned to {pin!r}")
    if isinstance(value, float):
        ftype = pin or "f64"
        if ftype not in _FLOAT_TYPES:
            raise AttributeConversionError(f"attribute {name!r}: a float cannot be pinned to {pin!r}")
        return f"{float_literal(value, ftype)} : {ftype}"
    if isinstance(value, str):
        if pin == "symbol":
            return symbol_ref(value)
        if pin is not None:
            raise AttributeConversionError(f"attribute {name!r}: a str cannot be pinned to {pin!r}")
        return quote_string(value)
    if isinstance(value, np.ndarray):
        return _dense_text(value, name)
    if isinstance(value, dict):
        # MLIR keeps a dictionary sorted by name; print it so, and the text is already canonical.
        inner = ", ".join(f"{attr_name(k)} = {to_text(value[k], None, f'{name}.{k}')}" for k in sorted(value))
        return "{" + inner + "}"
    if isinstance(value, (list, tuple)):
        return _list_text([_scalar(v) for v in value], pin, name)
    raise AttributeConversionError(
        f"attribute {name!r}: {type(value).__name__} value {value!r} has no MLIR form")


def _list_text(items: list, pin: Optional[str], name: str) -> str:
    if pin is None:
        if all(_is_int(v) for v in items):
            pin = "array<i64>"
        elif all(isinstance(v, TensorSharding) for v in items):
            pin = "sharding_per_value"
        else:
            pin = "array"
    if pin in _ARRAY_PINS:
        elem = pin[len("array<"):-1]
        if elem == "i1":
            body = ", ".join("true" if v else "false" for v in items)
        elif elem in ("f32", "f64"):
            body = ", ".join(float_literal(v, elem) for v in items)
        else:
            if not all(_is_int(v) for v in items):
                raise AttributeConversionError(f"attribute {name!r}: {pin} needs integers, got {items!r}")
            body = ", ".join(str(int(v)) for v in items)
        return f"array<{elem}" + (f": {body}" if items else "") + ">"
    if pin == "array":
        return "[" + ", ".join(to_text(v, None, f"{name}[{i}]") for i, v in enumerate(items)) + "]"
    if pin == "sharding_per_value":
        if not all(isinstance(v, TensorSharding) for v in items):
            raise AttributeConversionError(f"attribute {name!r}: sharding_per_value needs TensorShardings")
        return "#sdy.sharding_per_value<[" + ", ".join(v.to_text(prefix=False) for v in items) + "]>"
    if pin == "manual_axes":
        if not all(isinstance(v, str) for v in items):
            raise AttributeConversionError(f"attribute {name!r}: manual_axes needs axis names, got {items!r}")
        return "#sdy<manual_axes{" + ", ".join(quote_string(v) for v in items) + "}>"
    raise AttributeConversionError(f"attribute {name!r}: a list cannot be pinned to {pin!r}")


def _dense_text(array: np.ndarray, name: str) -> str:
    from .mlir_context import shared_context
    try:
        with shared_context():
            return str(ir.DenseElementsAttr.get(np.ascontiguousarray(array)))
    except Exception as e:  # the bindings refuse some dtypes (object, strings)
        raise AttributeConversionError(f"attribute {name!r}: array of {array.dtype} has no dense form: {e}")


# ---------------------------------------------------------------------------------------
# MLIR -> Python
# ---------------------------------------------------------------------------------------
@lru_cache(maxsize=4096)
def _sharding(text: str) -> TensorSharding:
    return parse_sharding(text)


@lru_cache(maxsize=4096)
def _per_value(text: str) -> tuple:
    return parse_sharding_per_value(text)


@lru_cache(maxsize=1024)
def _manual_axes(text: str) -> tuple:
    body = text[len("#sdy<manual_axes{"):-2]
    return tuple(re.findall(r'"((?:[^"\\]|\\.)*)"', body))


def from_mlir(attr) -> tuple[Any, Optional[str]]:
    """(value, pin) for an MLIR attribute; to_text(value, pin) == str(attr) for what it accepts."""
    a = attr.maybe_downcast()
    kind = type(a)
    if kind is ir.BoolAttr:
        return bool(a.value), None
    if kind is ir.IntegerAttr:
        t = str(a.type)
        return int(a.value), (None if t == "i64" else t)
    if kind is ir.FloatAttr:
        t = str(a.type)
        if t in _FLOAT_TYPES:
            return float(a.value), (None if t == "f64" else t)
        return MLIRAttr(str(a)), None
    if kind is ir.StringAttr:
        try:
            return a.value, None
        except (UnicodeDecodeError, RuntimeError):  # bytes that are not UTF-8: keep the exact text
            return MLIRAttr(str(a)), None
    if kind is ir.FlatSymbolRefAttr:
        return a.value, "symbol"
    if kind is ir.DenseI64ArrayAttr:
        return [int(v) for v in a], None
    if kind in _DENSE_ARRAYS:
        pin = _DENSE_ARRAYS[kind]
        conv = bool if pin == "array<i1>" else float if pin in ("array<f32>", "array<f64>") else int
        return [conv(v) for v in a], pin
    if kind is ir.ArrayAttr:
        return _from_array(a)
    if kind is ir.TypeAttr:
        t = tensor_type_or_none(a.value)
        return (t, None) if t is not None else (MLIRAttr(str(a)), None)
    text = str(a)
    if text.startswith("#sdy.sharding<"):
        return _sharding(text), None
    if text.startswith("#sdy.sharding_per_value<"):
        shardings = list(_per_value(text))
        return shardings, (None if shardings else "sharding_per_value")
    if text.startswith("#sdy<manual_axes{"):
        return list(_manual_axes(text)), "manual_axes"
    return MLIRAttr(text), None


_DENSE_ARRAYS = {
    ir.DenseBoolArrayAttr: "array<i1>", ir.DenseI8ArrayAttr: "array<i8>", ir.DenseI16ArrayAttr: "array<i16>",
    ir.DenseI32ArrayAttr: "array<i32>", ir.DenseF32ArrayAttr: "array<f32>", ir.DenseF64ArrayAttr: "array<f64>",
}


def _from_array(a) -> tuple[Any, Optional[str]]:
    items = []
    for element in a:
        v, pin = from_mlir(element)
        if pin is not None:  # an element that needs its own pin: keep the whole array as text
            return MLIRAttr(str(a)), None
        items.append(v)
    # Only a list whose default form would not be an ArrayAttr needs the "array" pin.
    default_is_array = items and not all(_is_int(v) for v in items) and not all(
        isinstance(v, TensorSharding) for v in items)
    return items, (None if default_is_array else "array")


# token and dynamically shaped tensor types: values Shardy leaves without a sharding
_OPAQUE = re.compile(r"!stablehlo\.token\Z|tensor<(?:(?:\d+|\?)x)+[A-Za-z][A-Za-z0-9_]*>\Z")
_TENSOR = re.compile(r"tensor<((?:\d+x)*)([A-Za-z][A-Za-z0-9_]*|complex<[A-Za-z][A-Za-z0-9_]*>)>\Z")


@lru_cache(maxsize=8192)
def parse_tensor_type(text: str) -> Optional[TensorType]:
    """A static ranked tensor type from its MLIR text, else None."""
    m = _TENSOR.match(text)
    if not m:
        return OpaqueType(text) if _OPAQUE.match(text) and ("?" in text or "token" in text) else None
    dims = tuple(int(d) for d in m.group(1).split("x") if d)
    return TensorType(dims, m.group(2))


def tensor_type_or_none(t) -> Optional[TensorType]:
    return parse_tensor_type(str(t))
