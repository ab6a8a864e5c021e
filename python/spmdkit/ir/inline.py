"""Inlining func.call: a function whose calls are replaced by copies of the callees' bodies.

JAX lowers jnp helpers that are jitted themselves (`tril`, `where`, `log_softmax`, ...) to
private functions and `func.call`s. Shardy's import pipeline inlines them before it propagates,
and the partitioner takes one flat block; `inline_calls` gives both that form. A callee's
argument and result shardings are dropped with the call (the copy's values keep their own), as
`import_jax(..., inline_calls=True)` does.
"""
from __future__ import annotations

from .core import Block, Op, Program, Region, Value
from .errors import IRError

CALLS = frozenset({"func.call", "call"})


def inline_calls(program: Program, function: str | None = None) -> Program:
    """Inlines every call in `function` (default: main), nested calls too, in place; private
    functions no longer called anywhere are removed. Returns `program`."""
    fn = program.main if function is None else program.functions.get(function)
    if fn is None:
        raise IRError(f"program has no function @{function}")
    _inline_block(program, fn.body, stack=(fn.name,))
    called = {op.attrs.get("callee") for f in program.functions.values() for op in f.walk() if op.name in CALLS}
    for name in [n for n, f in program.functions.items() if f.visibility == "private" and n not in called]:
        del program.functions[name]
    return program


def _inline_block(program: Program, block: Block, stack: tuple) -> None:
    out: list[Op] = []
    replace: dict[int, Value] = {}
    for op in block.ops:
        op.operands = [replace.get(id(v), v) for v in op.operands]
        for region in op.regions:
            for inner in region.blocks:
                _substitute(inner, replace)
                _inline_block(program, inner, stack)
        if op.name not in CALLS:
            out.append(op)
            continue
        name = op.attrs.get("callee")
        callee = program.functions.get(name)
        if callee is None:
            raise IRError(f"call of unknown function @{name}", op=op.name)
        if name in stack:
            raise IRError(f"recursive call of @{name} cannot be inlined", op=op.name)
        body = _clone_block(callee.body, dict(zip(map(id, callee.args), op.operands)))
        _inline_block(program, body, stack + (name,))
        ret = body.terminator
        if ret is None or len(ret.operands) != len(op.results):
            raise IRError(f"@{name} returns {0 if ret is None else len(ret.operands)} values, the call takes "
                          f"{len(op.results)}", op=op.name)
        for inner in body.ops[:-1]:
            inner.parent = block
            out.append(inner)
        for r, v in zip(op.results, ret.operands):
            if v.sharding is None and r.sharding is not None:
                v.sharding = r.sharding
            replace[id(r)] = v
    block.ops = out


def _substitute(block: Block, replace: dict) -> None:
    """Uses in a nested region of values the enclosing block replaced (a region may capture them)."""
    for op in block.ops:
        op.operands = [replace.get(id(v), v) for v in op.operands]
        for region in op.regions:
            for inner in region.blocks:
                _substitute(inner, replace)


def _clone_block(block: Block, mapping: dict) -> Block:
    """A copy of `block` whose uses of mapped values (by id) read the mapped ones."""
    copy = Block()
    for a in block.args:
        if id(a) not in mapping:
            mapping[id(a)] = copy.add_arg(a.type, a.sharding)
    for op in block.ops:
        new = Op(op.name, [mapping.get(id(v), v) for v in op.operands], [], dict(op.attrs),
                 [], dict(op.attr_types), location=op.location)
        new.regions = [Region([_clone_block(b, mapping) for b in r.blocks]) for r in op.regions]
        new.results = [Value(r.type, owner=new, index=i, sharding=r.sharding) for i, r in enumerate(op.results)]
        for r, n in zip(op.results, new.results):
            mapping[id(r)] = n
        copy.append(new)
    return copy


__all__ = ["inline_calls"]
