"""Reading the collectives out of compiled programs, ours and XLA's automatic partitioning of the
same step, in the plan's units: one collective per tensor (XLA combines collectives of one kind
and group into one instruction over a tuple; that counts once per tensor in it) and the bytes one
device receives (spmdkit.reshard.hlo_collectives' ring formulas)."""
from __future__ import annotations

import re

from ..reshard.hlo_collectives import _group_size, collective_bytes, count_collectives

_KINDS = {"all-gather": "all_gather", "reduce-scatter": "reduce_scatter", "all-reduce": "all_reduce",
          "all-to-all": "all_to_all", "collective-permute": "collective_permute"}
_INSTR = re.compile(r"^\s*(?:ROOT\s+)?%[\w.\-]+\s*=\s*(?P<type>.+?)\s+(?P<op>[\w\-]+)\((?P<rest>.*)$")


def tensor_collectives(hlo_text: str) -> dict[str, int]:
    """Collectives per kind in compiled HLO text, a tuple collective counted per tensor."""
    counts = dict.fromkeys(_KINDS.values(), 0)
    for line in hlo_text.splitlines():
        m = _INSTR.match(line)
        if not m:
            continue
        op = m.group("op").removesuffix("-start")
        if op not in _KINDS:
            continue
        t = m.group("type")
        n = len(re.findall(r"[a-z]+\d*\[", t)) if t.startswith("(") else 1
        if m.group("op").endswith("-start") and t.startswith("("):
            n = max(1, n // 2)  # an async start's type is (operands, results)
        if op == "all-to-all" and t.startswith("("):
            n = max(1, n // (_group_size(m.group("rest")) or n))  # a tuple all-to-all: one piece per device
        counts[_KINDS[op]] += n
    return counts


def compiled_report(hlo_text: str) -> dict:
    """{"counts": per kind (per tensor), "bytes": bytes per device (each instruction once),
    "looped_bytes": bytes per call (loop bodies times their trip counts, see looped_bytes),
    "instructions": collective instructions after XLA combined them} of compiled HLO text."""
    return {"counts": tensor_collectives(hlo_text), "bytes": collective_bytes(hlo_text),
            "looped_bytes": looped_bytes(hlo_text), "instructions": sum(count_collectives(hlo_text).values())}


def xla_auto_report(fn, args, in_shardings, out_shardings) -> tuple[dict, object]:
    """XLA's own partitioning of `fn` (jax.jit with these NamedShardings): (its report, the jitted fn)."""
    import jax
    auto = jax.jit(fn, in_shardings=in_shardings, out_shardings=out_shardings)
    return compiled_report(auto.lower(*args).compile().as_text()), auto


def counts_text(counts: dict) -> str:
    return ", ".join(f"{k} {n}" for k, n in counts.items() if n) or "none"


_COMPUTATION = re.compile(r"^\s*(?:ENTRY\s+)?%(?P<name>[\w.\-]+)\s.*\{\s*$")
_TRIP = re.compile(r'"known_trip_count":\{"n":"(\d+)"\}')


def looped_bytes(hlo_text: str) -> float:
    """Bytes one device receives per call, a collective in a while body counted once per
    iteration (XLA's known_trip_count; once when unknown) and of a conditional's branches the
    one moving the most (the static count, collective_bytes, counts each instruction once)."""
    own: dict[str, list[str]] = {}
    entry, current = None, None
    for line in hlo_text.splitlines():
        m = _COMPUTATION.match(line)
        if m and "=" not in line.split("{", 1)[0].split("(", 1)[0]:
            current = m.group("name")
            own[current] = []
            if line.lstrip().startswith("ENTRY"):
                entry = current
        elif current is not None:
            own[current].append(line)
    memo: dict[str, float] = {}

    def total(name: str, depth: int = 0) -> float:
        if name in memo or name not in own or depth > 64:
            return memo.get(name, 0.0)
        lines = own[name]
        out = collective_bytes("\n".join(lines))
        for line in lines:
            body = re.search(r"\bbody=%([\w.\-]+)", line)
            if body and " while(" in line:
                trip = _TRIP.search(line)
                n = int(trip.group(1)) if trip else 1
                out += n * total(body.group(1), depth + 1)
                continue
            branches = re.search(r"branch_computations=\{([^}]*)\}", line)
            if branches:
                out += max((total(b.strip().lstrip("%"), depth + 1) for b in branches.group(1).split(",")), default=0.0)
                continue
            for callee in re.findall(r"\b(?:calls|to_apply|true_computation|false_computation)=%([\w.\-]+)", line):
                out += total(callee, depth + 1)
        memo[name] = out
        return out

    return total(entry) if entry is not None else collective_bytes(hlo_text)
