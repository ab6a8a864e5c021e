"""Documented differences from Paddle 3.3.1: where spmdkit answers otherwise on purpose.

Each entry is (predicate, reason); a predicate gets the case and Paddle's failed verdict (its
`.reason` is the simulator's finding, or "rejected: MESSAGE" when Paddle refused the call). A
disagreement is excused only when a predicate holds AND the simulator proves spmdkit's answer
right and Paddle's wrong (or Paddle rejected a call that has a right answer). Op "*" applies to
every op.
"""
import re
from spmdkit.verify.outcome import case_tags
from spmdkit.verify.paddle_hazards import paddle_hazard


def _tag(name):
    return lambda case, paddle: name in case_tags(case)


def rejected(pattern: str):
    """Paddle refused the call with a message matching `pattern` (a regex)."""
    return lambda case, paddle: paddle.reason.startswith("rejected:") and re.search(pattern, paddle.reason) is not None


def wrong(pattern: str):
    """Paddle answered, and the simulator's finding matches `pattern`."""
    return lambda case, paddle: not paddle.reason.startswith("rejected:") and re.search(pattern, paddle.reason) is not None


# Paddle's 1-D merge (ShardingMergeForAxis) raises on one dim split over two different mesh dims.
MERGE_CONFLICT = rejected(r"is Sharded by two different mesh dimension")


DOCUMENTED = {
    "*": [
        (lambda case, paddle: paddle_hazard(case.rule, case.function, case.attrs,
                                            case.inputs + case.outputs) is not None,
         "the call crashes Paddle 3.3.1 or corrupts its heap (spmdkit/verify/paddle_hazards.py), so it is not run"),
        (_tag("uneven-split"), "Paddle unshards non-divisible input dims but keeps the split on the outputs"),
        (lambda case, paddle: case.function == "reverse" and "partial-output" in case_tags(case),
         "Paddle's reverse rules echo a given partial output although the inputs they infer do not produce it"),
        (_tag("partial-input"), "Paddle keeps partial inputs where the op cannot run on addends"),
        (lambda case, paddle: case.function == "reverse" and "multi-mesh-split" in case_tags(case),
         "Paddle's 1-D reverse rules read a dim split over several mesh dims as one but echo the output unchanged"),
    ],
    "embedding": [(lambda case, paddle: True, "Paddle rejects ids and table split over one mesh dim; spmdkit resolves it")],
    "elementwise_binary": [(lambda case, paddle: True, "Paddle rejects a broadcast dim split over two mesh dims; spmdkit resolves it")],
    "max": [(lambda case, paddle: True, "Paddle marks max reductions partial SUM; the reduce type is max")],
    "min": [(lambda case, paddle: True, "Paddle marks min reductions partial SUM; the reduce type is min")],
    "layer_norm": [(lambda case, paddle: case.function == "reverse",
                    "Paddle's layer_norm reverse merges a given partial into a split mesh dim")],
    "reshape": [(lambda case, paddle: case.function == "reverse",
                 "Paddle's reshape reverse joins splits onto a flattened dim without checking that they divide")],
    "matmul": [(lambda case, paddle: case.function == "reverse",
                "Paddle's matmul reverse keeps output splits its inferred inputs cannot produce"),
               (lambda case, paddle: case.function == "forward",
                "Paddle's batch merge raises vector::_M_fill_insert when the more split operand has fewer batch dims")],
}


def _merge_family_files() -> None:
    """Families add their own documented differences in documented_<family>.py (DOCUMENTED dict)."""
    import importlib
    import pkgutil
    from pathlib import Path
    for m in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if m.name.startswith("documented_"):
            mod = importlib.import_module(f"{__package__}.{m.name}")
            for op, entries in mod.DOCUMENTED.items():
                DOCUMENTED.setdefault(op, []).extend(entries)


_merge_family_files()


def excuse(case, paddle) -> str | None:
    """The first documented reason whose predicate holds for `case` and Paddle's failed verdict."""
    for pred, reason in DOCUMENTED.get(case.rule, []) + DOCUMENTED["*"]:
        if pred(case, paddle):
            return reason
    return None
