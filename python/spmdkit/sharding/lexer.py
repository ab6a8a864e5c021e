"""Tokens of Shardy's sharding/mesh text, each with its offset so errors can name the column."""
from __future__ import annotations

import re
from typing import NamedTuple

from .errors import ShardingParseError


class Token(NamedTuple):
    kind: str     # "punct", "string", "int", "ident", "end"
    value: object
    offset: int


_TOKEN = re.compile(r"""
    (?P<skip>\s+|//[^\n]*)
  | (?P<punct>[<>\[\]{}(),=?:@])
  | (?P<plain>"[^"\\\n]*")
  | (?P<int>-?[0-9]+)
  | (?P<ident>[A-Za-z_#][A-Za-z0-9_.$]*)
""", re.VERBOSE)


def tokenize(text: str) -> list[Token]:
    if not isinstance(text, str):
        raise TypeError(f"sharding text must be a str, got {type(text).__name__}")
    out, i, n = [], 0, len(text)
    match = _TOKEN.match
    while i < n:
        m = match(text, i)
        if m is None:
            if text[i] == '"':  # a string with escapes, or an unterminated one
                i = _string(text, i, out)
                continue
            raise ShardingParseError(f"unexpected character {text[i]!r}", text, i)
        kind = m.lastgroup
        if kind == "punct":
            out.append(Token("punct", m.group(), i))
        elif kind == "plain":
            out.append(Token("string", m.group()[1:-1], i))
        elif kind == "int":
            out.append(Token("int", int(m.group()), i))
        elif kind == "ident":
            out.append(Token("ident", m.group(), i))
        i = m.end()
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
                raise ShardingParseError("unknown escape sequence in string", text, j)
            continue
        buf += c.encode("utf-8")
        j += 1
    try:
        value = buf.decode("utf-8")
    except UnicodeDecodeError:
        raise ShardingParseError("string is not valid UTF-8 after unescaping", text, start) from None
    out.append(Token("string", value, start))
    return j + 1
