"""`auto_shard(program, ...)`: search, solve, annotate (see docs/auto.md).

    report = auto_shard(program, pinned_args=[False, False, True], memory_limit=2e9)
    print(program)          # every value annotated; partition(program) runs the plan
"""
from __future__ import annotations

import time
from typing import Optional, Sequence

from .annotate import annotate
from .cost import DEFAULT_AUTO_COST, AutoCostModel, build_costs
from .errors import AutoShardingError
from .memory import add_activation_memory
from .report import SearchReport, build_report
from .solve import solve
from .strategies import build_space


def tie_results(arg_labels: Sequence[str], out_labels: Sequence[str], program) -> dict[int, int]:
    """Results that come back in an argument's layout: a result labelled like an argument
    (`out[0]['w1']` and `args[0]['w1']`, same shape and type) is that argument's new value (a
    training step's params and optimizer state), and the next step must take it as it took the
    argument."""
    def key(label, prefix):
        return label[len(prefix):] if label.startswith(prefix) else None
    by_key = {key(l, "args"): i for i, l in enumerate(arg_labels)}
    fn = program.main
    ret = fn.body.terminator
    ties = {}
    for r, label in enumerate(out_labels):
        a = by_key.get(key(label, "out"))
        if a is not None and ret is not None and ret.operands[r].type == fn.args[a].type:
            ties[r] = a
    return ties


def auto_shard(program, pinned_args: Optional[Sequence[bool]] = None, ties: Optional[dict[int, int]] = None,
               memory_limit: Optional[float] = None, cost: AutoCostModel = DEFAULT_AUTO_COST,
               time_limit_s: float = 30.0, arg_labels: Optional[Sequence[str]] = None,
               out_labels: Optional[Sequence[str]] = None, loss_result: Optional[int] = None) -> SearchReport:
    """Chooses a layout for every free argument, op and free result of `program`'s main
    function (one mesh; the regions of its while and case ops included), annotates the program
    in place, and returns the report. `pinned_args[i]`: argument i keeps its annotation (default: annotated args are
    pinned); results with a declared sharding keep it; `ties`: result -> argument whose layout
    it comes back in. Memory counts arguments, results and the activations the backward pass
    reads (`loss_result`: which result is the loss; default the first rank-0 float one;
    auto/memory.py)."""
    if memory_limit is not None and (isinstance(memory_limit, bool) or not isinstance(memory_limit, (int, float))
                                     or memory_limit <= 0):
        raise AutoShardingError(f"memory_limit must be a positive number of bytes per device, got {memory_limit!r}")
    if not isinstance(cost, AutoCostModel):
        raise TypeError(f"cost must be an spmdkit.auto.AutoCostModel, not {type(cost).__name__}")
    fn = program.main
    if pinned_args is None:
        pinned_args = [a.sharding is not None for a in fn.args]
    if len(pinned_args) != len(fn.args):
        raise AutoShardingError(f"pinned_args has {len(pinned_args)} entries for {len(fn.args)} arguments")
    t0 = time.perf_counter()
    space = build_space(program, list(pinned_args), dict(ties or {}))
    costs = build_costs(space, cost)
    add_activation_memory(space, costs, fn, loss_result)
    sol = solve(costs, memory_limit, time_limit_s)
    added = annotate(program, space, sol.choice)
    search_s = time.perf_counter() - t0
    labels = list(arg_labels) if arg_labels is not None else [f"%arg{i}" for i in range(len(fn.args))]
    outs = list(out_labels) if out_labels is not None else [f"result {i}" for i in range(len(fn.result_types))]
    return build_report(space, costs, sol, labels, outs, memory_limit, search_s, added)


_PARALLELIZE_COST: list[Optional[AutoCostModel]] = [None]


def set_default_cost(cost: Optional[AutoCostModel]) -> Optional[AutoCostModel]:
    """The cost model `parallelize(..., strategy="auto")` searches with (returns the previous
    one), e.g. `AutoCostModel.calibrated(mesh)`. None (the start): `default_cost` of the mesh
    and platform (fixed CPU figures on CPU devices, `DEFAULT_AUTO_COST` elsewhere)."""
    if cost is not None and not isinstance(cost, AutoCostModel):
        raise TypeError(f"cost must be an spmdkit.auto.AutoCostModel, not {type(cost).__name__}")
    previous, _PARALLELIZE_COST[0] = _PARALLELIZE_COST[0], cost
    return previous


def cost_for(program) -> AutoCostModel:
    """The model set by `set_default_cost`, else the default for the program's mesh here."""
    if _PARALLELIZE_COST[0] is not None:
        return _PARALLELIZE_COST[0]
    import jax

    from ..partition.layouts import ProgramMesh
    from .calibrate import default_cost
    spec = ProgramMesh.of(program).spec
    return default_cost({a: spec.size(a) for a in spec.names}, jax.devices()[0].platform)


def parallelize_hook(program, arg_entries, labels, out_labels, memory_limit) -> SearchReport:
    """What `parallelize(..., strategy="auto")` calls after tracing: leaves whose placements entry
    is None are free, results tie to the argument they are labelled like."""
    pinned = [e is not None for e in arg_entries]
    declared = program.main.result_shardings
    ties = {r: a for r, a in tie_results(labels, out_labels, program).items()
            if r >= len(declared) or declared[r] is None}
    return auto_shard(program, pinned, ties, memory_limit, cost_for(program), arg_labels=labels,
                      out_labels=out_labels)
