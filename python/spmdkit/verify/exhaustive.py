"""Exhaustive mode: every placement combination of a few small inputs on a 2-D mesh.

Reports *wrong* answers (execution disagrees with the claimed outputs) and *missing* shardings:
the answer is right but drops a split that the inputs had, although every rank could have
computed its output shards from its input shards as they were (no communication).
"""
from __future__ import annotations

from itertools import product

import numpy as np

from .backends import RuleRejected
from .cases import Case, TensorArg, fill_attrs
from .outcome import Tally, case_tags, counterexample, fmt_result
from .placement import Placement, block_count
from .random_mode import check_call
from .samplers import SAMPLERS, Options
from .simulate import BadCase, Execution, candidate_placements, placements_by_key, runs_without_communication
from .specs import OpSpec


def input_candidates(t, mesh_shape, types, multi=True, even=False) -> list[Placement]:
    cands = candidate_placements(len(t.shape), mesh_shape, () if t.int_high is not None else types)
    return [p for p in cands  # never split a size-1 dim, nor a dim into more blocks than elements
            if all(not ms or (n > 1 and n >= block_count(ms, mesh_shape)) for n, ms in zip(t.shape, p.dims))
            and (multi or all(len(ms) <= 1 for ms in p.dims))
            and (not even or all(n % block_count(ms, mesh_shape) == 0 for n, ms in zip(t.shape, p.dims)))]


def dropped_split(given: Placement, inferred: Placement) -> bool:
    return any(m not in b for a, b in zip(given.dims, inferred.dims) for m in a)


def _nest(inputs, flat_placements):
    """Placements nested like `inputs`, from one per present tensor (in flat order)."""
    it = iter(flat_placements)
    return [[next(it) for _ in a] if isinstance(a, list) else (None if a is None else next(it)) for a in inputs]


def _with(inputs, nested):
    return [[t.with_placement(q) for t, q in zip(a, p)] if isinstance(a, list) else
            (None if a is None else a.with_placement(p)) for a, p in zip(inputs, nested)]


def run_exhaustive(backend, spec: OpSpec, mesh_shape=(2, 2), draws: int = 2, seed: int = 0,
                   max_combos: int = 400, multi: bool = True, even: bool = False) -> Tally:
    types = tuple(t for t in ("sum",) if t in backend.partial_types)
    opts = Options(partial_types=types)
    tally = Tally(spec.name, "exhaustive")
    for draw in range(draws):
        rng = np.random.default_rng([seed, draw, 7])
        sample = SAMPLERS[spec.sampler](rng, mesh_shape, opts)
        attrs = fill_attrs(spec, sample.attrs, rng)
        try:
            ex = Execution(spec, mesh_shape, sample.inputs, attrs, rng)
        except BadCase as e:
            tally.notes.append(str(e))
            continue
        per_tensor = [input_candidates(t, mesh_shape, types, multi, even) for _, _, t in ex.tensors]
        total = 1
        for c in per_tensor:
            total *= len(c)
        if total <= max_combos:
            combos = list(product(*per_tensor))
        else:  # too many to list (8 tensors: ~40^8): draw distinct combinations by index
            picks = set()
            while len(picks) < max_combos:
                picks.add(int(rng.integers(total)) if total < 2 ** 63 else tuple(int(rng.integers(len(c))) for c in per_tensor))
            combos = []
            for k in sorted(picks, key=str):
                if isinstance(k, tuple):
                    combos.append(tuple(c[i] for c, i in zip(per_tensor, k)))
                    continue
                combo = []
                for c in reversed(per_tensor):  # mixed radix, last tensor fastest (as product orders them)
                    k, i = divmod(k, len(c))
                    combo.append(c[i])
                combos.append(tuple(reversed(combo)))
        for combo in combos:
            given = _nest(sample.inputs, combo)
            outs = [TensorArg(s, Placement.replicated(len(s))) for s in ex.output_shapes] if spec.forward_outputs else []
            case = Case(spec.name, spec.name, "forward", tuple(mesh_shape), _with(sample.inputs, given), outs, attrs)
            try:
                ins, outs, verdict = check_call(backend, case, ex)
            except RuleRejected as e:
                tally.add_rejected(f"{case.describe(ex.spec)}\n    {e}")
                continue
            tally.cases += 1
            if not verdict:
                tally.add_wrong(counterexample(case.describe(spec), ins, outs, verdict.reason), case_tags(case))
                continue
            tally.correct += 1
            inferred = placements_by_key(sample.inputs, ins)
            given_by_key = placements_by_key(sample.inputs, given)
            if any(dropped_split(given_by_key[k], inferred[k]) for k in given_by_key) and \
                    runs_without_communication(ex, given_by_key, types):
                tally.missing += 1
                if tally.missing_example is None:
                    tally.missing_example = f"{case.describe(spec)}\n    rule says: {fmt_result(ins, outs)}"
    return tally
