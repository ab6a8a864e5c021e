"""The one error codegen raises: every module that checks a spec imports it from here, so the
modules depend on each other one way (spec -> notation, when -> conditions -> errors)."""
from __future__ import annotations


class SpecError(ValueError):
    """A spec that cannot be generated; the message starts with 'FILE: entry NAME'."""
