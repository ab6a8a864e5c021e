"""MLIR attribute -> Python value -> MLIR attribute is exact, on the corner cases of each kind:
signed zeros, NaN payloads, denormals, the largest f16/bf16, non-UTF-8 and non-ASCII strings,
extreme i64s, unsigned and signless widths, nested and empty arrays, symbols that need quotes,
empty shardings, types, dense constants and dialect attributes that stay text."""
import pytest

from spmdkit.ir import MLIRAttr, TensorType
from spmdkit.ir.attributes import from_mlir, quote_string, to_text
from spmdkit.ir.mlir_context import ir, shared_context

CASES = [
    # (MLIR text, the Python value it must read as, its pin)
    ("-0.0 : f32", -0.0, "f32"),
    ("1.0e-45 : f32", 1.401298464324817e-45, "f32"),       # the smallest f32 denormal
    ("65504.0 : f16", 65504.0, "f16"),                     # the largest f16
    ("9223372036854775807 : i64", 2 ** 63 - 1, None),
    ("array<i64: -9223372036854775808>", [-2 ** 63], None),
    ("255 : ui8", 255, "ui8"),
    ("-5 : si8", -5, "si8"),
    ("5 : index", 5, "index"),
    ("1 : i1", True, None),                                # MLIR's bool
    ('"é"', "é", None),
    ("[array<i64: 1>, array<i64>]", [[1], []], None),
    ("[]", [], "array"),
    ("array<i64>", [], None),
    ("array<i1>", [], "array<i1>"),
    ("#sdy.sharding_per_value<[]>", [], "sharding_per_value"),
    ("#sdy<manual_axes{}>", [], "manual_axes"),
    ('@"sym with space"', "sym with space", "symbol"),
    ("tensor<2x3xcomplex<f32>>", TensorType((2, 3), "complex<f32>"), None),
    ("tensor<i1>", TensorType((), "i1"), None),
    ('[true, "a", 1.5]', [True, "a", 1.5], None),
]
TEXT_ONLY = ['"\\00\\FF"', "[[1, 2], [3]]", "[1 : i32]", "i32", "{}", "dense<[[1, 2]]> : tensor<1x2xi8>",
             "#stablehlo<precision HIGHEST>", "affine_map<(d0) -> (d0)>", "unit", "0x7FF8000000000001 : f64"]


def mlir(text):
    with shared_context():
        return ir.Attribute.parse(text)


def round_trip(text):
    a = mlir(text)
    value, pin = from_mlir(a)
    assert str(mlir(to_text(value, pin))) == str(a)
    return value, pin


@pytest.mark.parametrize("text, value, pin", CASES, ids=[c[0] for c in CASES])
def test_plain_values(text, value, pin):
    got, got_pin = round_trip(text)
    assert got == value and type(got) is type(value) and got_pin == pin


@pytest.mark.parametrize("text", TEXT_ONLY)
def test_attributes_kept_as_text(text):
    got, _ = round_trip(text)
    if text.startswith("0x7FF8"):  # a NaN keeps its payload bits as a Python float
        assert got != got
    else:
        assert isinstance(got, MLIRAttr) and got.text == str(mlir(text))


def test_nan_and_infinities_print_as_hex():
    assert to_text(float("inf"), "f32") == "0x7F800000 : f32"
    assert to_text(float("-inf")) == "0xFFF0000000000000 : f64"
    assert to_text(float("inf"), "bf16") == "0x7F80 : bf16"
    assert to_text(float("inf"), "f16") == "0x7C00 : f16"
    assert str(mlir(to_text(float("nan"), "f32"))).startswith("0x7FC")


def test_strings_escape_every_byte_mlir_would_misread():
    assert quote_string('a"b\\c\n') == '"a\\22b\\5Cc\\0A"'
    for s in ['"', "\\", "\x00", "\n\t", "ü∑", "}{><,"]:
        value, _ = from_mlir(mlir(quote_string(s)))
        assert value == s
