"""`variants[].when`: a condition over the call's arguments, compiled to a C++ expression.

    cond   := term ('|' term)*
    term   := factor ('&' factor)*
    factor := '!' factor | '(' cond ')' | 'len(' LIST ')' OP INT | NAME
NAME is a bool attribute (true) or an optional tensor input (present); LIST a list input; OP one
of == != < > <= >=.
"""
from __future__ import annotations

import re

_TOKEN = re.compile(r"\s*(len\(\s*[a-z_][a-z0-9_]*\s*\)\s*(?:==|!=|<=|>=|<|>)\s*\d+|[a-z_][a-z0-9_]*|[!&|()])")


def compile_condition(spec, text: str) -> str:
    from .spec import SpecError

    def err(msg):
        return SpecError(f"{spec.where}: variants: when {text!r}: {msg}")

    tokens, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m:
            raise err(f"cannot read {text[pos:]!r}")
        tokens.append(m.group(1))
        pos = m.end()
    pos = [0]

    def peek():
        return tokens[pos[0]] if pos[0] < len(tokens) else None

    def take():
        tok = peek()
        pos[0] += 1
        return tok

    def name(tok):
        m = re.fullmatch(r"len\(\s*([a-z_][a-z0-9_]*)\s*\)\s*(==|!=|<=|>=|<|>)\s*(\d+)", tok)
        if m:
            i = spec.input_index(m.group(1))
            if i is None or not spec.inputs[i].is_list:
                raise err(f"len() needs a list input, got {m.group(1)!r}")
            return f"{m.group(1)}.size() {m.group(2)} {int(m.group(3))}u"
        a = spec.attr(tok)
        if a is not None:
            if a.type != "bool":
                raise err(f"attribute {tok!r} is {a.type}, a condition needs a bool")
            return tok
        i = spec.input_index(tok)
        if i is not None and spec.inputs[i].optional:
            return f"!{tok}.absent()"
        raise err(f"{tok!r} is neither a bool attribute nor an optional input")

    def factor():
        tok = take()
        if tok == "!":
            return f"!({factor()})"
        if tok == "(":
            inner = cond()
            if take() != ")":
                raise err("a '(' is not closed")
            return f"({inner})"
        if tok is None or tok in "&|)":
            raise err(f"unexpected {tok!r}")
        return name(tok)

    def term():
        out = factor()
        while peek() == "&":
            take()
            out = f"{out} && {factor()}"
        return out

    def cond():
        out = term()
        while peek() == "|":
            take()
            out = f"({out} || {term()})"
        return out

    result = cond()
    if peek() is not None:
        raise err(f"unexpected {peek()!r}")
    return result
