"""Tensor types of program values: a static shape and an element type, printed as MLIR prints them."""
from __future__ import annotations

from dataclasses import dataclass

# Element types as MLIR spells them (f32, bf16, i64, i1, ui8, ...); JAX dtypes map onto these.
_NUMPY_TO_MLIR = {
    "float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16",
    "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "bool": "i1",
    "uint64": "ui64", "uint32": "ui32", "uint16": "ui16", "uint8": "ui8",
    "complex64": "complex<f32>", "complex128": "complex<f64>",
}


def element_type(dtype) -> str:
    """MLIR element type of a numpy/JAX dtype (or an MLIR name, returned as is)."""
    name = str(dtype)
    return _NUMPY_TO_MLIR.get(name, name)


@dataclass(frozen=True)
class TensorType:
    shape: tuple[int, ...]
    dtype: str = "f32"  # MLIR element type

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        for d in self.shape:
            if d < 0:
                raise ValueError(f"tensor type: dim sizes must be static and >= 0, got {list(self.shape)}")
        # hashed once: propagation keys its factor-table cache by the types of every op
        object.__setattr__(self, "_hash", hash((self.shape, self.dtype)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):  # rebuilt through __init__: a str hash differs between processes
        return (TensorType, (self.shape, self.dtype))

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        dims = "".join(f"{d}x" for d in self.shape)
        return f"tensor<{dims}{self.dtype}>"


class OpaqueType(TensorType):
    """A value type other than a static ranked tensor: `!stablehlo.token` or a dynamically shaped
    tensor (`tensor<?x?xf32>`). Shardy gives such values no sharding and propagates around them;
    so do we: to propagation it is a rank-0 value (no factors), and it prints as its MLIR text."""

    def __init__(self, text: str):
        super().__init__((), text)

    def __reduce__(self):
        return (OpaqueType, (self.dtype,))

    def __str__(self) -> str:
        return self.dtype


def is_opaque(t) -> bool:
    return isinstance(t, OpaqueType)
