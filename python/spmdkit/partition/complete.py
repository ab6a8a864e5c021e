"""A simple stand-in for whole-program propagation: Paddle-style completion.

Forward: walk the ops in order and give each result the layout its rule's infer_forward produces
from the operands' shardings (partial results stay partial, as unreduced axes). Values without a
sharding count as replicated. Backward (`backward=True`): walk the ops in reverse and let each
rule's infer_backward refine the operands it produced from its results' layouts, starting from
the declared result shardings; a refinement only adds axes to a dim (never moves or drops one),
so e.g. a weight gradient that the update consumes as `[{"z"}, {"y"}]` is annotated so, and the
partitioner reduces its slice instead of reducing it whole and slicing after. Annotations already
present (arguments, user annotations) are kept unless `overwrite`. The partitioner does not
depend on this: any engine that writes `value.sharding` will do.
"""
from __future__ import annotations

from ..reshard import Layout
from .errors import PartitionError
from .layouts import ProgramMesh, layout_of_sharding, layout_of_value, replicated, to_sharding
from .partitioner import check_function
from .rules import IDENTITY_OPS, SOURCE_OPS, backward_layouts, op_layouts


def complete_forward(program, function: str | None = None, overwrite: bool = False, backward: bool = True):
    """Fill in every op result's sharding of `function` (default main); returns the program."""
    pm = ProgramMesh.of(program)
    fn = program.main if function is None else program.functions.get(function)
    if fn is None:
        raise PartitionError(f"program has no function @{function}")
    check_function(fn)
    ours = set()  # values whose sharding completion chose (the ones backward may refine)
    for op in fn.body.ops:
        if op.is_terminator:
            break
        if op.name in SOURCE_OPS:
            layouts = [replicated(v.type.rank) for v in op.results]
        elif op.name in IDENTITY_OPS:
            steer = op.attrs.get("sharding")  # a constraint's or reshard's sharding is its attribute
            layouts = [layout_of_sharding(steer, op.result.type.rank, pm, f"result of '{op.name}'") if steer is not None
                       else layout_of_value(op.result if op.result.sharding is not None else op.operands[0], pm)]
        else:
            _, layouts = op_layouts(op, {id(v): layout_of_value(v, pm) for v in op.operands}, pm)
        for value, layout in zip(op.results, layouts):
            if value.sharding is None or overwrite:
                value.sharding = to_sharding(layout, pm)
                ours.add(id(value))
    if backward:
        _refine_backward(fn, pm, ours)
    return program


def _refine_backward(fn, pm: ProgramMesh, ours: set) -> None:
    """Reverse walk: every consumer of a value says which layout it wants (its rule's
    infer_backward; a function result its declared sharding); before the value's producer is
    visited, the value takes the axes that ALL its consumers want (per dim the common prefix), so
    a refinement never makes one consumer gather what another wanted split."""
    layouts, wants = {}, {}

    def current(v):
        if id(v) not in layouts:
            layouts[id(v)] = layout_of_value(v, pm)
        return layouts[id(v)]

    def settle(v) -> None:
        if id(v) not in ours or not wants.get(id(v)):
            return
        have = current(v)
        dims = []
        for d, cur in enumerate(have.dims):
            options = [w.dims[d] if tuple(w.dims[d][:len(cur)]) == tuple(cur) else cur for w in wants[id(v)]]
            common = list(options[0])
            for o in options[1:]:
                n = 0
                while n < min(len(common), len(o)) and common[n] == o[n]:
                    n += 1
                common = common[:n]
            dims.append(tuple(common))
        new = refined(have, Layout(tuple(dims), (), None), v.type.shape, pm)
        if new is not None:
            layouts[id(v)] = new
            v.sharding = to_sharding(new, pm)

    ret = fn.body.terminator
    if ret is not None:
        shardings = list(fn.result_shardings) + [None] * len(ret.operands)
        for v, s in zip(ret.operands, shardings):
            wants.setdefault(id(v), []).append(layout_of_sharding(s, v.type.rank, pm, f"result of @{fn.name}"))
    for op in reversed(fn.body.ops):
        if op.is_terminator:
            continue
        for v in op.results:
            settle(v)
        if op.name in SOURCE_OPS or op.name in IDENTITY_OPS:
            for v in op.operands:  # consumers the refinement does not see through want what is there
                wants.setdefault(id(v), []).append(current(v))
            continue
        for v in list(op.operands) + list(op.results):
            current(v)
        wanted = backward_layouts(op, layouts, pm)
        for i, v in enumerate(op.operands):
            wants.setdefault(id(v), []).append(wanted[i] if wanted else current(v))


def refined(have: Layout, wanted: Layout, shape, pm: ProgramMesh):
    """`have` with the axes `wanted` adds (each dim's axes kept as a prefix), or None when
    `wanted` adds nothing, disagrees, reuses a partial axis or does not divide the shape."""
    dims, grew = [], False
    for d, (cur, want) in enumerate(zip(have.dims, wanted.dims)):
        if tuple(want[:len(cur)]) != tuple(cur):
            return None
        parts = 1
        for a in want:
            parts *= pm.spec.size(a)
        if shape[d] % parts:
            return None
        dims.append(tuple(want))
        grew |= len(want) > len(cur)
    used = [a for axes in dims for a in axes]
    if not grew or len(used) != len(set(used)) or set(used) & set(have.partial):
        return None
    return Layout.make(pm.spec, dims, have.partial, have.reduce)
