"""Conditions of `when:` variants, compiled to C++ boolean expressions over a call's arguments.

    cond   := term (('|' | 'or') term)*
    term   := factor (('&' | 'and') factor)*
    factor := ('!' | 'not') factor | '(' cond ')' | atom
    atom   := 'len(' LIST ')' CMP INT          a list input's length
            | NAME ('absent' | 'present')      an optional input
            | NAME CMP VALUE                   a number or string attribute
            | NAME 'in' '[' VALUE, ... ']'
            | NAME                             a bool attribute, or an optional input (present)
    CMP    := == != < > <= >=;  VALUE := a number, inf, -inf, or a word (string attributes)

A YAML list of conditions means all of them. Errors name the spec entry and the condition.
"""
from __future__ import annotations

import re

from .errors import SpecError

_TOKEN = re.compile(r"\s*(len\(|==|!=|<=|>=|<|>|[!&|()\[\],]|-?inf\b|-?\d+(?:\.\d*)?(?:[eE]-?\d+)?|'[^']*'|\"[^\"]*\"|"
                    r"[A-Za-z_][A-Za-z0-9_.\-]*)")
_WORDS = {"not": "!", "and": "&", "or": "|"}


def compile_condition(spec, cond) -> str:
    """The C++ expression for `cond` (a string, or a list of strings that must all hold)."""
    if isinstance(cond, list):
        return " && ".join(f"({compile_condition(spec, c)})" for c in cond) or "true"
    return _Parser(spec, str(cond)).parse()


class _Parser:
    def __init__(self, spec, text: str):
        self.spec, self.text, self.pos, self.tokens = spec, text, 0, []
        i = 0
        while i < len(text):
            if not text[i:].strip():
                break
            m = _TOKEN.match(text, i)
            if not m:
                raise self.err(f"cannot read '{text[i:]}'")
            tok = m.group(1)
            self.tokens.append(_WORDS.get(tok, tok))
            i = m.end()

    def err(self, msg: str):
        return SpecError(f"{self.spec.where}: when: '{self.text}': {msg}")

    def peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, want=None):
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise self.err(f"expected {want or 'more'}, got {tok or 'the end'}")
        self.pos += 1
        return tok

    def parse(self) -> str:
        expr = self.cond()
        if self.peek() is not None:
            raise self.err(f"unexpected '{self.peek()}'")
        return expr

    def cond(self) -> str:
        parts = [self.term()]
        while self.peek() == "|":
            self.take()
            parts.append(self.term())
        return " || ".join(f"({p})" if "&&" in p and len(parts) > 1 else p for p in parts)

    def term(self) -> str:
        parts = [self.factor()]
        while self.peek() == "&":
            self.take()
            parts.append(self.factor())
        return " && ".join(f"({p})" if "||" in p and len(parts) > 1 else p for p in parts)

    def factor(self) -> str:
        tok = self.peek()
        if tok == "!":
            self.take()
            inner = self.factor()
            if re.fullmatch(r"![\w.]+(\([\w.]*\))?", inner):  # !!x is x
                return inner[1:]
            return f"!{inner}" if re.fullmatch(r"[\w.]+(\([\w.]*\))?", inner) else f"!({inner})"
        if tok == "(":
            self.take()
            inner = self.cond()
            self.take(")")
            return inner
        return self.atom()

    def atom(self) -> str:
        spec = self.spec
        tok = self.take()
        if tok == "len(":
            name = self.take()
            self.take(")")
            i = spec.input_index(name)
            if i is None or not spec.inputs[i].is_list:
                raise self.err(f"len() takes a list input, got '{name}'")
            op = self.take()
            if op not in ("==", "!=", "<", ">", "<=", ">="):
                raise self.err(f"len({name}) needs a comparison, got '{op}'")
            n = self.take()
            if not re.fullmatch(r"\d+", n):
                raise self.err(f"len({name}) compares with a count, got '{n}'")
            return f"{name}.size() {op} {n}u"
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", tok):
            raise self.err(f"expected a name, got '{tok}'")
        nxt = self.peek()
        if nxt in ("absent", "present"):
            self.take()
            i = spec.input_index(tok)
            if i is None or not spec.inputs[i].optional:
                raise self.err(f"'{tok}' is not an optional input")
            return f"{'!' if nxt == 'present' else ''}is_absent({tok})"
        if nxt in ("==", "!=", "<", ">", "<=", ">=", "in"):
            a = self._number_or_string_attr(tok)
            op = self.take()
            if op != "in":
                return f"{tok} {op} {self._literal(self.take(), a.type)}"
            self.take("[")
            values = []
            while True:
                values.append(self._literal(self.take(), a.type))
                sep = self.take()
                if sep == "]":
                    break
                if sep != ",":
                    raise self.err(f"expected ',' or ']' in the list, got '{sep}'")
            return " || ".join(f"{tok} == {v}" for v in values) or "false"
        a = spec.attr(tok)
        if a is not None:
            if a.type != "bool":
                raise self.err(f"'{tok}' is a {a.type} attribute; a bare name must be a bool")
            return tok
        i = spec.input_index(tok)
        if i is not None and spec.inputs[i].optional:
            return f"!is_absent({tok})"
        raise self.err(f"'{tok}' is neither a bool attribute nor an optional input")

    def _number_or_string_attr(self, name: str):
        a = self.spec.attr(name)
        if a is None:
            raise self.err(f"'{name}' is not an attribute")
        if a.type not in ("int", "int64", "float", "str", "dtype"):
            raise self.err(f"'{name}' is a {a.type}, not a number or a string")
        return a

    def _literal(self, text: str, type_: str) -> str:
        t = text.strip()
        if type_ in ("str", "dtype"):  # a bare word or a quoted string: data_format == NHWC
            if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
                t = t[1:-1]
            if not re.fullmatch(r"[A-Za-z0-9_.\-]+", t):
                raise self.err(f"'{t}' is not a word to compare a {type_} attribute with")
            return f'"{t}"'
        if t in ("inf", "-inf"):
            if type_ != "float":
                raise self.err(f"'{t}' compares with a {type_} attribute")
            return ("-" if t.startswith("-") else "") + "kInf"
        try:
            v = float(t)
        except ValueError:
            raise self.err(f"'{t}' is not a number") from None
        return f"{v!r}f" if type_ == "float" else str(int(v))
