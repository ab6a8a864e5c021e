"""Shardy itself, as shipped in jaxlib: the `sdy-populate-op-sharding-rules` pass writes the
OpShardingRule of each StableHLO op, which we read back as text. One op per call, written in
MLIR's generic form. (jax._src is private: this module is the one place that touches it.)"""
from __future__ import annotations

import re

_CTX = None


def _context():
    global _CTX
    if _CTX is None:
        from jax._src.interpreters import mlir as jax_mlir
        _CTX = jax_mlir.make_ir_context()
    return _CTX


def ttype(shape, dtype="f32") -> str:
    return "tensor<" + "".join(f"{n}x" for n in shape) + dtype + ">"


def i64s(values) -> str:
    return "array<i64" + (": " + ", ".join(str(int(v)) for v in values) if len(values) else "") + ">"


def ints(values) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def region(op: str, dtype="f32") -> str:
    t = ttype((), dtype)
    return (f'({{\n  ^bb0(%a: {t}, %b: {t}):\n    %s = "{op}"(%a, %b) : ({t}, {t}) -> {t}\n'
            f'    "stablehlo.return"(%s) : ({t}) -> ()\n  }})')


def rule_of(op: str, operand_types: list[str], result_types: list[str], attrs: str = "", regions: str = "") -> str | None:
    """Shardy's rule for `op` applied to arguments of these types, printed; None if Shardy gives none."""
    from jaxlib.mlir import ir, passmanager
    args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(operand_types))
    uses = ", ".join(f"%arg{i}" for i in range(len(operand_types)))
    res = ", ".join(result_types)
    outs = ", ".join(f"%0#{i}" if len(result_types) > 1 else "%0" for i in range(len(result_types)))
    n = f":{len(result_types)}" if len(result_types) > 1 else ""
    text = (f"func.func @f({args}) -> ({res}) {{\n"
            f'  %0{n} = "{op}"({uses}) {regions} {{{attrs}}} : ({", ".join(operand_types)}) -> ({res})\n'
            f"  return {outs} : {res}\n}}")
    with _context():
        module = ir.Module.parse(text)
        passmanager.PassManager.parse("builtin.module(func.func(sdy-populate-op-sharding-rules))").run(module.operation)
        printed = str(module)
    # ops inside a region (sort's comparator, reduce_window's body) get rules of their own: read
    # the one of the op under test, whose line starts with its result (%0) or closes its regions
    for line in printed.splitlines():
        m = re.search(r"sdy\.sharding_rule = #sdy\.op_sharding_rule<(.*)>\}", line)
        if m and line.strip().startswith(("%0", "})")):
            return m.group(1)
    return None


# Shardy's propagation as its import pipeline would run it on a lowered JAX program: data-flow
# edges for while/case/optimization_barrier, the user-priority -> op-priority -> aggressive
# hierarchy, the edges sunk back. func.call bodies are not inlined here, so calls stay opaque.
PROPAGATION = "builtin.module(sdy-add-data-flow-edges,sdy-user-priority-propagate,func.func(sdy-sink-data-flow-edges))"


def propagate(text: str) -> str:
    """The program `text` (StableHLO + sdy) as Shardy propagates it, printed."""
    from jaxlib.mlir import ir, passmanager
    with _context():
        module = ir.Module.parse(text)
        passmanager.PassManager.parse(PROPAGATION).run(module.operation)
        return str(module)
