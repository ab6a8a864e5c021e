"""What every `spmdkit` subcommand shares: a bad argument is one line on stderr and exit status 2.

`ArgumentParser` reports argparse's own errors (missing or unknown arguments, invalid choices)
as `PROG: error: MESSAGE` without the usage block; `report(error)` prints a typed error the
command raised the same way; `guarded(fn, *args)` runs a command's body and turns the errors
that bad input raises (ValueError and TypeError subclasses of every layer, a missing file) into
that line, so a user never sees a traceback for a mistake of theirs.
"""
from __future__ import annotations

import argparse
import sys

INPUT_ERRORS = (ValueError, TypeError, KeyError, OSError, NotImplementedError)
USAGE = 2


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str):
        self.exit(USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def message_of(error: BaseException) -> str:
    if isinstance(error, KeyError) and error.args:  # str(KeyError) adds quotes
        return str(error.args[0])
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error) or type(error).__name__


def report(error: BaseException, prog: str = "spmdkit") -> int:
    print(f"{prog}: error: {message_of(error)}", file=sys.stderr)
    return USAGE


def guarded(fn, *args, prog: str = "spmdkit") -> int:
    """fn(*args), with bad input reported as one line and exit status 2. A handler that stops
    with `SystemExit("message")` (a check of its own arguments) is reported the same way."""
    try:
        return fn(*args)
    except INPUT_ERRORS as e:
        return report(e, prog)
    except SystemExit as e:
        if isinstance(e.code, str):
            print(f"{prog}: error: {e.code}", file=sys.stderr)
            return USAGE
        raise


def mesh_argument(text: str):
    """argparse `type=` for a mesh option: a `spmdkit.sharding.mesh_text.MeshText` (2x2 or dp=2,mp=2)."""
    from .sharding.mesh_text import MeshTextError, parse_mesh_text
    try:
        return parse_mesh_text(text)
    except MeshTextError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def mesh_sizes_argument(text: str) -> str:
    """argparse `type=` for a mesh given by its sizes: the canonical `2x2` text of what was
    written (2x2, 2X2 or dp=2,mp=2), to compare with a command's `choices`."""
    return "x".join(map(str, mesh_argument(text).sizes))


def positive_int(text: str) -> int:
    """argparse `type=` for a count: an integer >= 1."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return int(text)
