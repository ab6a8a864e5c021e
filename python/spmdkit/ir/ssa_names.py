"""The names a parsed MLIR file gives its values (`%arg0`, `%6`, `%cst`, `%0#1`), for tools that
address values as the file does (`spmdkit explain FILE @main.%6`).

MLIR's parser drops SSA names and its printer derives new ones. Where a value's location points
into the parsed text (`loc("-":LINE:COL)`, what parsing text without explicit locations gives),
the name is read from that line, so hand-written names (`%x`, `%weights`) are kept. Otherwise the
name is the one MLIR's printer gives the value, which is the file's own whenever MLIR printed the
file (`jax.jit(f).lower(...).as_text()`, Shardy's output, spmdkit's printer).
"""
from __future__ import annotations

import re
from typing import Optional

from .errors import location_line_column
from .mlir_context import ir

_ID = r"%[A-Za-z0-9_$.\-]+"
# the result list at the start of an op's line: `%0 =`, `%a, %b =`, `%0:2 =`
_RESULTS = re.compile(rf"^\s*({_ID}(?::\d+)?(?:\s*,\s*{_ID}(?::\d+)?)*)\s*=")
_NAME_AT = re.compile(_ID)


class SsaNamer:
    """Names for the values of one parsed module (`source`: the text it was parsed from, if any)."""

    def __init__(self, module_op, source: Optional[str]):
        self.module_op = module_op
        self.lines = source.splitlines() if source is not None else None
        self._state = None  # MLIR's printer state, made once on first need (it numbers the module)
        self._claimed: set[int] = set()  # lines whose result names an op took (a region's ops share them)

    def _printed(self, value) -> str:
        if self._state is None:
            self._state = ir.AsmState(self.module_op)
        return value.get_name(self._state)

    def _source_line(self, location) -> tuple[Optional[str], int, int]:
        text = str(location)
        if self.lines is None or not text.startswith('loc("-":'):
            return None, 0, 0
        line, column = location_line_column(text)
        if line is None or not 0 < line <= len(self.lines):
            return None, 0, 0
        return self.lines[line - 1], column, line

    def results(self, operation) -> list[Optional[str]]:
        """The names of an op's results, in order ("%0#1" for the second of `%0:2 = ...`); None
        for values the text does not show (the ops of a region printed in short form, such as
        stablehlo.reduce's `applies stablehlo.add`)."""
        results = list(operation.results)
        if not results:
            return []
        line, column, number = self._source_line(operation.location)
        if line is not None:
            m = _RESULTS.match(line)
            if number not in self._claimed and m and m.end() <= column:
                names = []
                for group in re.split(r"\s*,\s*", m.group(1)):
                    name, _, count = group.partition(":")
                    names += [f"{name}#{i}" for i in range(int(count))] if count else [name]
                if len(names) == len(results):
                    self._claimed.add(number)
                    return names
            return [None] * len(results)
        return [self._printed(r) for r in results]

    def argument(self, value) -> Optional[str]:
        """The name of a block argument (its location points at its name in parsed text); None
        when the text does not show it."""
        line, column, _ = self._source_line(value.location)
        if line is not None:
            m = _NAME_AT.match(line, column - 1) if column > 0 else None
            return m.group(0) if m else None
        return self._printed(value)
