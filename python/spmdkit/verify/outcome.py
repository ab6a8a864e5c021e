"""Per-(op, function) tallies and the first counterexample, shared by both modes."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Tally:
    op: str
    function: str                   # forward | reverse | grad | exhaustive
    cases: int = 0                  # rule calls answered and executed
    correct: int = 0
    wrong: int = 0
    rejected: int = 0               # the rule refused the call
    missing: int = 0                # correct, but replicated shards it could have kept
    skipped: int = 0                # the backend cannot express the case
    counterexample: str | None = None
    wrong_tags: dict[str, int] = field(default_factory=dict)  # what the wrong cases had in them
    missing_example: str | None = None
    rejected_example: str | None = None
    notes: list[str] = field(default_factory=list)

    _example_rank: tuple = (99, 0)

    def add_rejected(self, text: str) -> None:
        self.rejected += 1
        if self.rejected_example is None:
            self.rejected_example = text

    def add_wrong(self, text: str, tags: frozenset = frozenset()) -> None:
        """Keeps the simplest counterexample: fewest features, then shortest."""
        self.wrong += 1
        for t in tags or {"plain"}:
            self.wrong_tags[t] = self.wrong_tags.get(t, 0) + 1
        rank = (len(tags), len(text))
        if self.counterexample is None or rank < self._example_rank:
            self.counterexample, self._example_rank = text, rank


def fmt_result(ins, outs) -> str:
    def one(p):
        if isinstance(p, list):
            return "(" + "; ".join(map(str, p)) + ")"
        return str(p)
    return "inputs " + ", ".join(map(one, ins)) + " -> outputs " + ", ".join(map(one, outs))


def counterexample(case_text: str, ins, outs, reason: str) -> str:
    return f"{case_text}\n    rule says: {fmt_result(ins, outs)}\n    but: {reason}"


def case_tags(case) -> frozenset:
    """The features of a case that rules most often get wrong, to sort counterexamples by."""
    from .cases import flat_tensors
    from .placement import block_count
    tags = set()
    given = flat_tensors(case.inputs) + [(None, None, t) for t in case.outputs]
    for _, _, t in given:
        if any(len(ms) > 1 for ms in t.placement.dims):
            tags.add("multi-mesh-split")
        if any(ms and n % block_count(ms, case.mesh_shape) for n, ms in zip(t.shape, t.placement.dims)):
            tags.add("uneven-split")
    if any(t.placement.partial for _, _, t in flat_tensors(case.inputs)):
        tags.add("partial-input")
    if any(t.placement.partial for t in case.outputs):
        tags.add("partial-output")
    return frozenset(tags)
