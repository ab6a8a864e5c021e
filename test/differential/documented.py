"""Documented differences from Paddle 3.3.1: where spmdkit answers otherwise on purpose.

Each entry is (predicate over the case, reason). A disagreement is excused only when a
predicate holds AND the simulator proves spmdkit's answer right and Paddle's wrong (or Paddle
rejected a call that has a right answer). Op "*" applies to every op.
"""
from spmdkit.verify.outcome import case_tags


def _tag(name):
    return lambda case: name in case_tags(case)


DOCUMENTED = {
    "*": [
        (_tag("uneven-split"), "Paddle unshards non-divisible input dims but keeps the split on the outputs"),
        (lambda case: case.function == "reverse" and "partial-output" in case_tags(case),
         "Paddle's reverse rules echo a given partial output although the inputs they infer do not produce it"),
        (_tag("partial-input"), "Paddle keeps partial inputs where the op cannot run on addends"),
        (lambda case: case.function == "reverse" and "multi-mesh-split" in case_tags(case),
         "Paddle's 1-D reverse rules read a dim split over several mesh dims as one but echo the output unchanged"),
    ],
    "embedding": [(lambda case: True, "Paddle rejects ids and table split over one mesh dim; spmdkit resolves it")],
    "elementwise_binary": [(lambda case: True, "Paddle rejects a broadcast dim split over two mesh dims; spmdkit resolves it")],
    "max": [(lambda case: True, "Paddle marks max reductions partial SUM; the reduce type is max")],
    "min": [(lambda case: True, "Paddle marks min reductions partial SUM; the reduce type is min")],
    "layer_norm": [(lambda case: case.function == "reverse",
                    "Paddle's layer_norm reverse merges a given partial into a split mesh dim")],
    "reshape": [(lambda case: case.function == "reverse",
                 "Paddle's reshape reverse joins splits onto a flattened dim without checking that they divide")],
    "matmul": [(lambda case: case.function == "reverse",
                "Paddle's matmul reverse keeps output splits its inferred inputs cannot produce"),
               (lambda case: case.function == "forward",
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


def excuse(case) -> str | None:
    """The first documented reason whose predicate holds for `case`, or None."""
    for pred, reason in DOCUMENTED.get(case.rule, []) + DOCUMENTED["*"]:
        if pred(case):
            return reason
    return None
