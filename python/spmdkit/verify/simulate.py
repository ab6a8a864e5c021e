"""The SPMD simulator: execute an op on every rank's shards and check the rule's claim.

A rule's result claims: if every rank holds its shard of each input as the inferred input
placements say and runs the op's kernel on it, its local result is its shard of the true output
under the inferred output placements (after reducing the partial mesh dims with their reduce
types). `Execution` builds random global inputs once; `verify_result` cuts them per the inferred
input placements (partial inputs become random addends), runs the kernel per rank and checks
every rank's output shape and value.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from itertools import product

import numpy as np

from . import kernels
from .cases import Case, TensorArg, flat_tensors
from .context import RankContext
from .partial import partial_addends, reduce_parts
from .placement import Placement, local_bounds, local_shape, local_slices, problem
from .specs import OpSpec


class BadCase(Exception):
    """The case itself is invalid (the kernel rejects the global inputs): a sampler bug."""


class RankFailure(Exception):
    """A rank could not run the kernel on its shards."""


@dataclass
class Verdict:
    ok: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok


RTOL, ATOL = 1e-6, 1e-8


class Execution:
    """One op on fixed random global inputs."""

    def __init__(self, spec: OpSpec, mesh_shape, inputs: list, attrs: list, rng: np.random.Generator):
        if not spec.kernel:
            raise BadCase(f"{spec.name} has no verify.kernel")
        self.spec, self.mesh_shape, self.inputs, self.rng = spec, tuple(mesh_shape), inputs, rng
        self.attrs = dict(zip(spec.attr_names, attrs))
        self.code = compile(spec.kernel, f"<{spec.source} verify.kernel>", "eval")
        self.tensors = flat_tensors(inputs)
        self._draws: list[tuple[dict, tuple]] = []
        self.use_draw(0)

    def use_draw(self, k: int) -> None:
        """Switch to the k-th independent set of random global inputs (drawn on first use)."""
        while len(self._draws) <= k:
            values = {(pos, i): self._random_value(t) for pos, i, t in self.tensors}
            try:
                dense = self._run(values, RankContext(
                    (), {self._key_name(p, i): (0,) * len(t.shape) for p, i, t in self.tensors},
                    self._global_shapes()), self.attrs)
            except Exception as e:  # noqa: BLE001 - any kernel error means the sample is unusable
                raise BadCase(f"{self.spec.name}: the kernel rejects the global inputs: {e}") from e
            self._draws.append((values, dense))
        self.values, self.dense = self._draws[k]

    def _random_value(self, t: TensorArg) -> np.ndarray:
        if t.int_high is not None:
            return self.rng.integers(0, t.int_high, size=t.shape)
        return self.rng.normal(size=t.shape)

    def _key_name(self, pos: int, i: int | None) -> str:
        name = self.spec.inputs[pos].name
        return name if i is None else f"{name}[{i}]"

    def _global_shapes(self) -> dict[str, tuple[int, ...]]:
        return {self._key_name(p, i): tuple(t.shape) for p, i, t in self.tensors}

    def _run(self, values: dict, ctx: RankContext, attrs: dict) -> tuple[np.ndarray, ...]:
        env: dict = {"ctx": ctx, **attrs}
        for pos, decl in enumerate(self.spec.inputs):
            arg = self.inputs[pos] if pos < len(self.inputs) else None
            if isinstance(arg, list):
                env[decl.name] = [values[(pos, i)] for i in range(len(arg))]
            else:
                env[decl.name] = values.get((pos, None))
        with np.errstate(all="ignore"), warnings.catch_warnings():  # empty shards: judged, not warned
            warnings.simplefilter("ignore", RuntimeWarning)
            out = eval(self.code, {"np": np, "K": kernels}, env)  # noqa: S307 - spec-authored kernels
        outs = out if isinstance(out, tuple) else (out,)
        return tuple(np.asarray(o) for o in outs)

    def output_name(self, k: int) -> str:
        """Output k's name; the kernel's results past the spec's outputs are the elements of a
        list output (the last one, einsum_grad's x_grad[])."""
        names = self.spec.outputs
        if len(self.dense) == len(names) or k < len(names) - 1:
            return names[k]
        return f"{names[-1].rstrip('[]')}[{k - len(names) + 1}]"

    @property
    def output_shapes(self) -> list[tuple[int, ...]]:
        return [o.shape for o in self.dense]

    def run_ranks(self, in_placements: dict, out_placements: list[Placement]) -> dict:
        """coords -> that rank's outputs, its inputs cut per `in_placements` ({(pos, i): P})."""
        addends = {key: partial_addends(self.values[key], p.partial, self.mesh_shape, self.rng)
                   for key, p in in_placements.items()}
        results, shards = {}, {}
        for c in np.ndindex(*self.mesh_shape):  # every rank's shards first: ctx.gather reads its peers'
            local, offsets = {}, {}
            for (pos, i, t) in self.tensors:
                p = in_placements[(pos, i)]
                value = addends[(pos, i)][tuple(c[m] for m, _ in p.partial)]
                bounds = local_bounds(t.shape, p, self.mesh_shape, c)
                local[(pos, i)] = value[tuple(slice(a, b) for a, b in bounds)]
                offsets[self._key_name(pos, i)] = tuple(a for a, _ in bounds)
            shards[c] = (local, offsets)
        by_name = {self._key_name(pos, i): (pos, i) for pos, i, _ in self.tensors}
        for c in np.ndindex(*self.mesh_shape):
            local, offsets = shards[c]
            attrs = dict(self.attrs)
            for attr, out_name in self.spec.local_attrs.items():
                k = self.spec.outputs.index(out_name)
                attrs[attr] = list(local_shape(self.dense[k].shape, out_placements[k], self.mesh_shape, c))
            try:
                ctx = RankContext(c, offsets, self._global_shapes(), self.mesh_shape,
                                  {n: in_placements[k] for n, k in by_name.items()},
                                  {n: (lambda d, k=k: shards[d][0][k]) for n, k in by_name.items()})
                results[c] = self._run(local, ctx, attrs)
            except Exception as e:  # noqa: BLE001 - a rank that cannot compute disproves the rule
                raise RankFailure(f"rank {c}: the kernel fails on its shards: {e}") from e
            if len(results[c]) != len(self.dense):
                raise RankFailure(f"rank {c}: the kernel returned {len(results[c])} outputs")
        return results

    def check_output(self, k: int, results: dict, p: Placement) -> str | None:
        """Why output k's local values are not its shards under `p`, or None."""
        dense, name = self.dense[k], self.spec.output_name(k)
        for c, outs in results.items():
            want = local_shape(dense.shape, p, self.mesh_shape, c)
            if outs[k].shape != want:
                return f"rank {c}: local {name} has shape {list(outs[k].shape)}, {p} says {list(want)}"
        partial = list(p.partial)

        def reduced(c, pending):
            if not pending:
                return results[c][k]
            m, t = pending[-1]  # the last (highest) mesh dim reduces last
            parts = [reduced(c[:m] + (j,) + c[m + 1:], pending[:-1]) for j in range(self.mesh_shape[m])]
            return reduce_parts(parts, t)

        for c in results:
            with np.errstate(all="ignore"):
                got = reduced(c, partial)
            want = dense[local_slices(dense.shape, p, self.mesh_shape, c)]
            # Tolerance relative to the output's scale: a product of many values can be tiny, and a
            # doubled tiny value must still count as wrong.
            scale = float(np.max(np.abs(dense))) if dense.size and np.issubdtype(dense.dtype, np.number) else 1.0
            atol = ATOL * min(1.0, scale) if np.isfinite(scale) else ATOL
            if not np.allclose(got, want, rtol=RTOL, atol=atol, equal_nan=True):
                err = float(np.max(np.abs(np.asarray(got, float) - want))) if want.size else 0.0
                how = f" after reducing {dict(partial)}" if partial else ""
                return f"rank {c}: local {name}{how} is not its shard of the true {name} (max error {err:.3g})"
        return None


def placements_by_key(inputs: list, placements: list) -> dict:
    """{(pos, i): Placement} for the tensors present, from placements nested like `inputs`."""
    out = {}
    for pos, i, _ in flat_tensors(inputs):
        p = placements[pos]
        out[(pos, i)] = p[i] if i is not None else p
    return out


def structural_problem(ex: Execution, in_p: dict, out_p: list[Placement]) -> str | None:
    for pos, i, t in ex.tensors:
        name = ex._key_name(pos, i)
        why = problem(in_p[(pos, i)], len(t.shape), ex.mesh_shape)
        if why:
            return f"input {name}: {why}"
        if t.int_high is not None and in_p[(pos, i)].partial:
            return f"input {name} holds integer ids but is inferred partial {in_p[(pos, i)]}"
    if len(out_p) != len(ex.dense):
        return f"the rule gives {len(out_p)} output placements, the op has {len(ex.dense)} outputs"
    for k, (p, o) in enumerate(zip(out_p, ex.dense)):
        why = problem(p, o.ndim, ex.mesh_shape)
        if why:
            return f"output {ex.spec.output_name(k)}: {why}"
    return None


def verify_placements(ex: Execution, in_placements: list, out_placements: list) -> Verdict:
    """Is executing with these input placements right with these output placements?"""
    if len(in_placements) != len(ex.inputs):
        return Verdict(False, f"the rule gives {len(in_placements)} input placements, the op has {len(ex.inputs)} inputs")
    in_p = placements_by_key(ex.inputs, in_placements)
    why = structural_problem(ex, in_p, out_placements)
    if why:
        return Verdict(False, why)
    try:
        # Some claims (a SUM where the reduce type is ANY) hold by coincidence on one input:
        # the spec's `verify.draws` asks for several independent ones.
        for draw in range(max(ex.spec.draws, 1)):
            ex.use_draw(draw)
            try:
                results = ex.run_ranks(in_p, out_placements)
            except RankFailure as e:
                return Verdict(False, str(e))
            for k, p in enumerate(out_placements):
                why = ex.check_output(k, results, p)
                if why:
                    return Verdict(False, why + (f" (input draw {draw + 1})" if draw else ""))
    finally:
        ex.use_draw(0)
    return Verdict(True)


def verify_case(spec: OpSpec, case: Case, in_placements: list, out_placements: list,
                rng: np.random.Generator) -> Verdict:
    """The check of one rule result: `case` gave the rule's arguments, the placements are its answer."""
    ex = Execution(spec, case.mesh_shape, case.inputs, case.attrs, rng)
    return verify_placements(ex, in_placements, out_placements)


def candidate_placements(ndim: int, mesh_shape, types=("sum",)) -> list[Placement]:
    """Every placement of an ndim tensor on the mesh (size-1 mesh dims left replicated)."""
    options = [[None] + ([("s", d) for d in range(ndim)] + [("p", t) for t in types] if n > 1 else [])
               for n in mesh_shape]
    out = set()
    for choice in product(*options):
        split = [[m for m, c in enumerate(choice) if c == ("s", d)] for d in range(ndim)]
        partial = {m: c[1] for m, c in enumerate(choice) if c and c[0] == "p"}
        for orders in product(*[_orders(s) for s in split]):
            out.add(Placement(tuple(tuple(o) for o in orders), tuple(sorted(partial.items()))))
    return sorted(out, key=str)


def _orders(mesh_dims: list[int]) -> list[list[int]]:
    if len(mesh_dims) <= 1:
        return [mesh_dims]
    from itertools import permutations
    return [list(p) for p in permutations(mesh_dims)]


def runs_without_communication(ex: Execution, in_placements: dict, types=("sum",)) -> bool:
    """Could each rank compute its output shards from these input shards as they are, for some
    output placements? (The output placements are searched exhaustively.)"""
    if any(problem(p, len(t.shape), ex.mesh_shape) for (pos, i, t) in ex.tensors
           for p in [in_placements[(pos, i)]]):
        return False
    cands = [candidate_placements(o.ndim, ex.mesh_shape, types) for o in ex.dense]
    if ex.spec.local_attrs:  # the local attribute values depend on the output placement
        if len(cands) != 1:
            return False
        for q in cands[0]:
            try:
                if ex.check_output(0, ex.run_ranks(in_placements, [q]), q) is None:
                    return True
            except RankFailure:
                continue
        return False
    try:
        results = ex.run_ranks(in_placements, [Placement.replicated(o.ndim) for o in ex.dense])
    except RankFailure:
        return False
    return all(any(ex.check_output(k, results, q) is None for q in cands[k]) for k in range(len(cands)))
