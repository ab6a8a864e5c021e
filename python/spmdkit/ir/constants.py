"""Constant data <-> the `value` attribute of `stablehlo.constant` (an MLIR dense elements attribute).

Encoding writes MLIR's raw hex form (`dense<"0x...">`, little-endian bytes), exact for every
numeric dtype (bf16, complex and 0-d arrays included) with no float formatting involved; booleans use
MLIR's own builder. Decoding reads the attribute with MLIR's bindings (any text MLIR printed),
or takes a numpy array as is (programs built in Python may hold one).
"""
from __future__ import annotations

import re

import numpy as np

from .attributes import MLIRAttr
from .errors import AttributeConversionError
from .mlir_context import ir, shared_context
from .types import TensorType, element_type


_HEX = re.compile(r'dense<"0x([0-9A-Fa-f]*)">')


def dense_attr(array) -> MLIRAttr:
    """The exact dense attribute of a numpy-convertible array."""
    array = np.asarray(array)
    mlir_type = str(TensorType(array.shape, element_type(array.dtype.name)))
    if array.dtype == np.bool_:
        with shared_context():
            text = str(ir.DenseElementsAttr.get(np.ascontiguousarray(array), shape=list(array.shape)))
        return MLIRAttr(text)
    if array.dtype.kind not in "iufcV" and array.dtype.name not in ("bfloat16",):  # complex: (re, im) pairs
        if array.dtype.kind != "f":
            raise AttributeConversionError(f"a constant of dtype {array.dtype} has no dense form")
    raw = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
    return MLIRAttr(f'dense<"0x{raw.hex().upper()}"> : {mlir_type}')


def dense_value(value, t: TensorType, dtype) -> np.ndarray:
    """The numpy array of a `value` attribute (MLIRAttr text or an array) of type `t`."""
    raw = _HEX.match(value.text) if isinstance(value, MLIRAttr) else None
    if raw is not None:  # MLIR's raw form (ours, and MLIR's own for large data): read the bytes directly
        data = np.frombuffer(bytes.fromhex(raw.group(1)), dtype=np.dtype(dtype).newbyteorder("<"))
        if data.size == 1:
            data = np.full(t.shape, data[0], dtype=dtype)
    elif isinstance(value, MLIRAttr):
        with shared_context():
            try:
                attr = ir.DenseElementsAttr(ir.Attribute.parse(value.text))
            except Exception as e:
                raise AttributeConversionError(f"constant {value.text[:60]!r} is not a dense attribute: {e}") from None
            if attr.is_splat:  # also the way to read bf16/fp8 scalars, which have no numpy buffer form
                data = np.full(t.shape, _scalar(attr.get_splat_value()), dtype=dtype)
            else:
                try:
                    data = np.array(attr)
                except Exception:  # the bindings raise plain exceptions for unsupported buffers
                    data = None
                if data is None or data.dtype == object:  # MLIR's bindings have no buffer for bf16/fp8
                    raise AttributeConversionError(f"cannot decode the non-splat constant {value.text[:60]!r} of "
                                                   f"type {t}: MLIR's Python bindings cannot read its element type")
    else:
        data = np.asarray(value)
    if data.size != int(np.prod(t.shape, dtype=np.int64)):
        raise AttributeConversionError(f"constant has {data.size} elements, its type {t} has {int(np.prod(t.shape))}")
    return data.astype(dtype).reshape(t.shape)


def _scalar(attr):
    for cls in (ir.FloatAttr, ir.IntegerAttr, ir.BoolAttr):
        try:
            return cls(attr).value
        except (ValueError, TypeError):
            continue
    raise AttributeConversionError(f"cannot read the splat value {attr}")
