"""Tokens of Shardy's sharding/mesh text, each with its offset so errors can name the column."""
from __future__ import annotations

from dataclasses import dataclass

from .errors import ShardingParseError

PUNCT = set("<>[]{}(),=?:@")


@dataclass(frozen=True)
class Token:
    kind: str     # "punct", "string", "int", "ident", "end"
    value: object
    offset: int


def tokenize(text: str) -> list[Token]:
    if not isinstance(text, str):
        raise TypeError(f"sharding text must be a str, got {type(text).__name__}")
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "/" and text.startswith("//", i):  # MLIR line comment
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in PUNCT:
            out.append(Token("punct", c, i))
            i += 1
        elif c == '"':
            i = _string(text, i, out)
        elif c.isdigit() or (c == "-" and i + 1 < n and text[i + 1].isdigit()):
            j = i + 1
            while j < n and text[j].isdigit():
                j += 1
            out.append(Token("int", int(text[i:j]), i))
            i = j
        elif c.isalpha() or c in "_#":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] in "_.$"):
                j += 1
            out.append(Token("ident", text[i:j], i))
            i = j
        else:
            raise ShardingParseError(f"unexpected character {c!r}", text, i)
    out.append(Token("end", None, n))
    return out


_ESCAPES = {"n": b"\n", "t": b"\t", '"': b'"', "\\": b"\\"}
_HEX = set("0123456789abcdefABCDEF")


def _string(text: str, start: int, out: list[Token]) -> int:
    """Read an MLIR string literal at `start` (escapes: \\n \\t \\" \\\\ and \\XX hex bytes)."""
    j, buf, n = start + 1, bytearray(), len(text)
    while True:
        if j >= n or text[j] == "\n":
            raise ShardingParseError("unterminated string", text, start)
        c = text[j]
        if c == '"':
            break
        if c == "\\":
            nxt = text[j + 1:j + 2]
            if nxt in _ESCAPES:
                buf += _ESCAPES[nxt]
                j += 2
            elif len(text) >= j + 3 and set(text[j + 1:j + 3]) <= _HEX:
                buf.append(int(text[j + 1:j + 3], 16))
                j += 3
            else:
                raise ShardingParseError(f"unknown escape sequence in string", text, j)
            continue
        buf += c.encode("utf-8")
        j += 1
    try:
        value = buf.decode("utf-8")
    except UnicodeDecodeError:
        raise ShardingParseError("string is not valid UTF-8 after unescaping", text, start) from None
    out.append(Token("string", value, start))
    return j + 1
