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
    """{"counts": per kind (per tensor), "bytes": bytes per device, "instructions": collective
    instructions after XLA combined them} of compiled HLO text."""
    return {"counts": tensor_collectives(hlo_text), "bytes": collective_bytes(hlo_text),
            "instructions": sum(count_collectives(hlo_text).values())}


def xla_auto_report(fn, args, in_shardings, out_shardings) -> tuple[dict, object]:
    """XLA's own partitioning of `fn` (jax.jit with these NamedShardings): (its report, the jitted fn)."""
    import jax
    auto = jax.jit(fn, in_shardings=in_shardings, out_shardings=out_shardings)
    return compiled_report(auto.lower(*args).compile().as_text()), auto


def counts_text(counts: dict) -> str:
    return ", ".join(f"{k} {n}" for k, n in counts.items() if n) or "none"
