"""The collectives in compiled HLO text, with the bytes one device receives for each.

Used to check that what XLA runs is what a plan says, and to put a plan's bytes beside those of
XLA's own partitioner for the same reshard. Bytes follow the planner's formulas (ring
algorithms): all-gather (n-1)/n of its result, reduce-scatter (n-1)/n of its operand, all-reduce
2(n-1)/n, all-to-all (n-1)/n, collective-permute its whole result when it moves anything.
Replica groups are read in their three printed forms: {{0,1},{2,3}}, [2,4]<=[8] and
mesh['a'=2,'b'=4] {'a'} (sub-axes 'a':(1)2 included).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

_KINDS = {"all-gather": "all_gather", "reduce-scatter": "reduce_scatter", "all-reduce": "all_reduce",
          "all-to-all": "all_to_all", "collective-permute": "collective_permute"}
_BYTES = {"pred": 1, "s8": 1, "u8": 1, "f16": 2, "bf16": 2, "s16": 2, "u16": 2, "f32": 4, "s32": 4, "u32": 4,
          "f64": 8, "s64": 8, "u64": 8, "c64": 8, "c128": 16}
_INSTR = re.compile(r"^\s*(?:ROOT\s+)?%(?P<name>[\w.\-]+)\s*=\s*(?P<type>.+?)\s+"
                    r"(?P<op>[\w\-]+)\((?P<args>[^)]*)\)(?P<rest>.*)$")
_ARRAY = re.compile(r"\b(?P<dt>[a-z]+\d*)\[(?P<dims>[\d,]*)\]")


@dataclass(frozen=True)
class HloCollective:
    kind: str
    group_size: int
    bytes: float


def _type_bytes(text: str) -> int:
    total = 0
    for m in _ARRAY.finditer(text):
        if m.group("dt") in _BYTES:
            total += _BYTES[m.group("dt")] * math.prod(int(d) for d in m.group("dims").split(",") if d)
    return total


def _group_size(rest: str) -> int | None:
    m = re.search(r"replica_groups=\{\{([^}]*)\}", rest)
    if m:
        return len([t for t in m.group(1).split(",") if t.strip()])
    m = re.search(r"replica_groups=\[(\d+),(\d+)\]<=", rest)
    if m:
        return int(m.group(2))
    m = re.search(r"replica_groups=mesh\[([^\]]*)\][^{]*\{([^}]*)\}", rest)
    if m:
        sizes = {k: int(v) for k, v in re.findall(r"'([^']+)'=(\d+)", m.group(1))}
        n = 1
        for item in filter(None, (t.strip() for t in m.group(2).split(","))):
            sub = re.match(r"'([^']+)':\(\d+\)(\d+)", item)
            n *= int(sub.group(2)) if sub else sizes[item.strip("'")]
        return n
    return None


def read_collectives(hlo_text: str) -> list[HloCollective]:
    """Every collective instruction (an async -start counts, its -done does not)."""
    shapes, found = {}, []
    for line in hlo_text.splitlines():
        m = _INSTR.match(line)
        if not m:
            continue
        shapes[m.group("name")] = m.group("type")
        op = m.group("op")
        base = op[:-6] if op.endswith("-start") else op
        if base not in _KINDS:
            continue
        kind, rest = _KINDS[base], m.group("rest")
        out_type = m.group("type")
        if op.endswith("-start") and out_type.startswith("("):
            out_type = out_type.rsplit(", ", 1)[-1].rstrip(")")   # async: (operand, result): the result
        out_bytes = _type_bytes(out_type)
        in_bytes = sum(_type_bytes(shapes.get(a.strip().lstrip("%"), "")) for a in m.group("args").split(","))
        if kind == "collective_permute":
            pairs = re.findall(r"\{(\d+),(\d+)\}", rest)
            moves = any(a != b for a, b in pairs)
            found.append(HloCollective(kind, 2, float(out_bytes) if moves else 0.0))
            continue
        n = _group_size(rest)
        if kind == "all_to_all" and out_bytes and out_type.startswith("("):
            n = n or out_type.count("[")
        if n is None:
            if kind == "all_gather" and in_bytes:
                n = out_bytes // in_bytes
            elif kind == "reduce_scatter" and out_bytes:
                n = in_bytes // out_bytes
            else:
                raise ValueError(f"cannot read the replica groups of: {line.strip()[:200]}")
        frac = (n - 1) / n
        nbytes = {"all_gather": frac * out_bytes, "reduce_scatter": frac * (in_bytes or out_bytes * n),
                  "all_reduce": 2 * frac * out_bytes, "all_to_all": frac * out_bytes}[kind]
        found.append(HloCollective(kind, n, float(nbytes)))
    return found


def count_collectives(hlo_text: str) -> dict[str, int]:
    counts = dict.fromkeys(_KINDS.values(), 0)
    for c in read_collectives(hlo_text):
        counts[c.kind] += 1
    return counts


def collective_bytes(hlo_text: str) -> float:
    return sum(c.bytes for c in read_collectives(hlo_text))
