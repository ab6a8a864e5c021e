"""Shardy's printed form of an op sharding rule, read back for comparing tables up to factor
renumbering: `([i, k], [k, j])->([i, j]) {i=8, j=16, k=32} reduction={k}`."""
from __future__ import annotations

import re

_NAME = re.compile(r"z_\d+|[a-z]")
_KINDS = ("reduction", "need_replication", "permutation")


def _tensors(text: str) -> list[list[list[str]]]:
    out = []
    for t in re.findall(r"\[([^\]]*)\]", text):
        dims = [d.strip() for d in t.split(",")] if t.strip() else []
        out.append([_NAME.findall(d) for d in dims])
    return out


def parse(text: str) -> dict:
    """{'operands', 'results' (factor names per dim), 'sizes' {name: size}, 'kinds' {name: kind}}."""
    m = re.fullmatch(r"\s*\((.*?)\)->\((.*?)\)\s*(\{[^}]*\})?(.*)", text)
    if not m:
        raise ValueError(f"not a factor table: {text!r}")
    sizes = {k: int(v) for k, v in re.findall(r"(z_\d+|[a-z])=(-?\d+)", m.group(3) or "")}
    kinds, blocked = {}, set()
    for kind, names in re.findall(r"(\w+)=\{([^}]*)\}", m.group(4)):
        for n in _NAME.findall(names):
            if kind == "blocked_propagation":  # orthogonal to the kind
                blocked.add(n)
            else:
                kinds[n] = kind
    return {"operands": _tensors(m.group(1)), "results": _tensors(m.group(2)), "sizes": sizes, "kinds": kinds,
            "blocked": blocked}


def canonical(table: dict) -> tuple:
    """Renames factors in order of first use (operands, then results): equal up to renumbering
    <=> equal canonical forms."""
    rename: dict[str, int] = {}
    def walk(tensors):
        return tuple(tuple(tuple(rename.setdefault(f, len(rename)) for f in dim) for dim in t) for t in tensors)
    ops, res = walk(table["operands"]), walk(table["results"])
    sizes = tuple(table["sizes"][f] for f in sorted(rename, key=rename.get))
    kinds = tuple(table["kinds"].get(f, "pass_through") for f in sorted(rename, key=rename.get))
    blocked = tuple(f in table["blocked"] for f in sorted(rename, key=rename.get))
    return ops, res, sizes, kinds, blocked


def of_table(t) -> dict:
    """The same dict for a spmdkit FactorTable."""
    name = [str(i) for i in range(t.num_factors)]
    return {"operands": [[[name[f] for f in d] for d in x] for x in t.operands],
            "results": [[[name[f] for f in d] for d in x] for x in t.results],
            "sizes": {name[f]: s for f, s in enumerate(t.sizes)},
            "kinds": {name[f]: k for f, k in enumerate(t.kinds) if k != "pass_through"},
            "blocked": {name[f] for f in t.blocked}}


def same_up_to_renumbering(table, text: str) -> bool:
    return canonical(of_table(table)) == canonical(parse(text))
