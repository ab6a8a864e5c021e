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
            j, chars = i + 1, []
            while True:
                if j >= n or text[j] == "\n":
                    raise ShardingParseError("unterminated string", text, i)
                if text[j] == "\\" and j + 1 < n:
                    chars.append(text[j + 1])
                    j += 2
                    continue
                if text[j] == '"':
                    break
                chars.append(text[j])
                j += 1
            out.append(Token("string", "".join(chars), i))
            i = j + 1
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
