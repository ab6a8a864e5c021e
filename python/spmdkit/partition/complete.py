"""A simple stand-in for whole-program propagation: Paddle-style forward completion.

Walk the ops in order and give each result the layout its rule's infer_forward produces from the
operands' shardings (partial results stay partial, as unreduced axes). Values without a sharding
count as replicated. Annotations already present are kept unless `overwrite`. The partitioner
does not depend on this: any engine that writes `value.sharding` will do.
"""
from __future__ import annotations

from .errors import PartitionError
from .layouts import ProgramMesh, layout_of_value, replicated, to_sharding
from .partitioner import check_function
from .rules import IDENTITY_OPS, SOURCE_OPS, op_layouts


def complete_forward(program, function: str | None = None, overwrite: bool = False):
    """Fill in every op result's sharding of `function` (default main); returns the program."""
    pm = ProgramMesh.of(program)
    fn = program.main if function is None else program.functions.get(function)
    if fn is None:
        raise PartitionError(f"program has no function @{function}")
    check_function(fn)
    for op in fn.body.ops:
        if op.is_terminator:
            break
        if op.name in SOURCE_OPS:
            layouts = [replicated(v.type.rank) for v in op.results]
        elif op.name in IDENTITY_OPS:
            layouts = [layout_of_value(op.result if op.result.sharding is not None else op.operands[0], pm)]
        else:
            _, layouts = op_layouts(op, {id(v): layout_of_value(v, pm) for v in op.operands}, pm)
        for value, layout in zip(op.results, layouts):
            if value.sharding is None or overwrite:
                value.sharding = to_sharding(layout, pm)
    return program
