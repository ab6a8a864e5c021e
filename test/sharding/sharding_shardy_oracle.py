"""Shardy itself (the sdy dialect inside jaxlib) as an oracle for our printer and verifier."""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def _context():
    from jax._src.interpreters.mlir import make_ir_context
    return make_ir_context()


def shardy_print(attr_text: str) -> str:
    """Shardy's own printing of an attribute (`#sdy.sharding<...>`, `#sdy.mesh<...>`, ...)."""
    from jaxlib.mlir import ir
    with _context():
        return str(ir.Attribute.parse(attr_text))


def shardy_verify(meshes: dict, sharding_text: str, shape) -> str | None:
    """None when Shardy accepts `sharding_text` on a function argument of `shape`, else its error."""
    from jaxlib.mlir import ir
    ty = "tensor<" + "".join(f"{n}x" for n in shape) + "f32>"
    decls = "\n".join(f"sdy.mesh @{name} = {mesh}" for name, mesh in meshes.items())
    text = (f"{decls}\nfunc.func @main(%arg0: {ty} {{sdy.sharding = {sharding_text}}}) -> {ty} {{\n"
            f"  return %arg0 : {ty}\n}}")
    with _context():
        try:
            ir.Module.parse(text).operation.verify()
        except Exception as e:  # MLIRError: the message carries Shardy's reason
            return str(e)
    return None
