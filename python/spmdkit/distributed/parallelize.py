"""`parallelize(fn, mesh, in_placements)`: capture a training step, propagate shardings from the
placements, partition it with our rules and reshard planner, and return a function of global
arrays that runs the per-device program inside one `jax.shard_map`.

Steps (on the first call, or `.trace(*example_args)`): `spmdkit.ir.import_jax` traces `fn`
(calls inlined) with each argument leaf annotated from its placements; `strategy="propagate"`
runs `spmdkit.propagate` (Shardy's algorithm on the rules' factor tables), `"complete"` runs
`spmdkit.partition.complete_forward` (Paddle-style completion) instead; `spmdkit.partition`
picks every collective; `to_jax` runs it. A new call with other shapes traces again.

Placements: `in_placements` has one entry per positional argument: a placements list (one
`Shard`/`Replicate` per mesh dim) for every array leaf of that argument, None (replicated), or
for a dict argument a dict from key to such an entry (keys left out are replicated).
`out_placements` likewise per result of `fn` (a tuple result: one entry per element); None
leaves a result to the strategy (propagate: what propagation decided; complete: replicated).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .errors import DistError
from .mesh import as_process_mesh
from .placements import Replicate, is_placements, placements_of_spec, to_spec
from .tensor import is_placed, put_all

STRATEGIES = ("propagate", "complete", "auto")  # auto: spmdkit.auto searches (docs/auto.md)


def _is_entry(x) -> bool:
    return x is None or is_placements(x)


def _expand(entries, tree, what: str) -> list:
    """One placements list (or None) per leaf of `tree` (a tuple of arguments or results)."""
    if not isinstance(entries, (list, tuple)) or is_placements(entries) or len(entries) != len(tree):
        raise DistError(f"{what} must have one entry per {'argument' if what == 'in_placements' else 'result'} "
                        f"({len(tree)}), got {entries!r}")
    out: list = []
    for i, (entry, sub) in enumerate(zip(entries, tree)):
        _expand_entry(entry, sub, f"{what}[{i}]", out)
    return out


def _expand_entry(entry, sub, where: str, out: list) -> None:
    """An entry applies to every leaf of `sub`; a dict entry maps a dict's keys to entries."""
    import jax
    if _is_entry(entry):
        out.extend([entry] * len(jax.tree_util.tree_leaves(sub)))
    elif isinstance(entry, dict) and isinstance(sub, dict):
        unknown = set(entry) - set(sub)
        if unknown:
            raise DistError(f"{where} names keys {sorted(map(str, unknown))} the value lacks")
        for key in sorted(sub):  # jax flattens dicts in sorted key order
            _expand_entry(entry.get(key), sub[key], f"{where}[{key!r}]", out)
    else:
        raise DistError(f"{where} must be a placements list, None, or a dict of them, got {entry!r}")


def _labels(tree, prefix: str) -> list[str]:
    import jax
    return [prefix + jax.tree_util.keystr(path) for path, _ in jax.tree_util.tree_flatten_with_path(tree)[0]]


class Parallelized:
    """The partitioned form of `fn` (see the module doc). After tracing: `.program` (the
    propagated IR program; print it), `.partitioned` (local ops and reshards), `.plan` (the
    collectives per call, bytes per device, modeled cost), `.shardings` (placements of every
    argument and result leaf, by name)."""

    def __init__(self, fn, mesh, in_placements, out_placements=None, strategy: str = "propagate",
                 memory_limit: float | None = None):
        if not callable(fn):
            raise TypeError(f"parallelize: expected a callable, got {type(fn).__name__}")
        if strategy not in STRATEGIES:
            raise DistError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
        self.fn, self.mesh, self.strategy = fn, as_process_mesh(mesh), strategy
        self.in_placements, self.out_placements = in_placements, out_placements
        self.program = self.partitioned = self._run = self.search_report = None
        self.memory_limit = memory_limit
        self._key = None
        self.in_shardings: dict[str, list] = {}
        self.out_shardings: dict[str, list] = {}

    # -- tracing -------------------------------------------------------------------------------
    def trace(self, *args) -> Parallelized:
        """Import `fn` on these arguments, annotate, propagate (or complete), partition."""
        import jax

        from ..ir import import_jax
        from ..partition import complete_forward, partition, to_jax
        leaves, in_def = jax.tree_util.tree_flatten(args)
        labels = _labels(args, "args")
        entries = _expand(self.in_placements, args, "in_placements")
        arg_shardings = [self._sharding(entry, np.shape(x), label) for label, x, entry in zip(labels, leaves, entries)]
        out_labels, result_shardings = self._result_shardings(args)
        program = import_jax(self.fn, *args, inline_calls=True, meshes={"mesh": self.mesh.sharding_mesh},
                             arg_shardings=arg_shardings)
        program.main.result_shardings = result_shardings
        if self.strategy == "auto":  # every value annotated by the search: nothing left to propagate
            from ..auto import parallelize_hook
            self.search_report = parallelize_hook(program, entries, labels, out_labels, self.memory_limit)
        elif self.strategy == "propagate":
            _propagate(program)
        else:
            complete_forward(program)
        parted = partition(program)
        self.program, self.partitioned = program, parted
        self._run = to_jax(parted, self.mesh.jax_mesh())
        self._arg_named = [self._named(layout) for layout in parted.arg_layouts]
        self.in_shardings = {lab: placements_of_spec(s.spec, self.mesh) for lab, s in zip(labels, self._arg_named)}
        self.out_shardings = {lab: placements_of_spec(self._named(layout).spec, self.mesh)
                              for lab, layout in zip(out_labels, parted.result_layouts)}
        self._key = _key_of(leaves, in_def)
        return self

    def _sharding(self, entry, shape, label: str):
        """The TensorSharding of one leaf's placements (None: replicated), checked against the
        mesh and the shape (DistError naming the leaf)."""
        from ..ir.jax_import import spec_to_sharding
        spec = to_spec(entry or [Replicate()] * self.mesh.ndim, self.mesh, tuple(shape), label)
        return spec_to_sharding("mesh", self.mesh.sharding_mesh, spec, len(shape))

    def _result_shardings(self, args):
        """(labels, TensorSharding or None per result leaf) from out_placements."""
        import jax
        out_shape = jax.eval_shape(self.fn, *args)
        single = not isinstance(out_shape, tuple)
        out_tree = (out_shape,) if single else out_shape
        out_leaves, self._out_def = jax.tree_util.tree_flatten(out_shape)
        labels = _labels(out_tree, "out")
        if self.out_placements is None:
            return labels, [None] * len(out_leaves)
        entries = _expand((self.out_placements,) if single else self.out_placements, out_tree, "out_placements")
        return labels, [None if e is None else self._sharding(e, leaf.shape, label)
                        for label, leaf, e in zip(labels, out_leaves, entries)]

    def _named(self, layout):
        from jax.sharding import NamedSharding

        from ..reshard.execute_jax import partition_spec
        return NamedSharding(self.mesh.jax_mesh(), partition_spec(layout))

    def _ensure(self, args):
        """The argument leaves, traced again when their structure, shapes or dtypes changed."""
        import jax
        leaves, treedef = jax.tree_util.tree_flatten(args)
        if _key_of(leaves, treedef) != self._key:
            self.trace(*args)
        return leaves

    # -- running -------------------------------------------------------------------------------
    def __call__(self, *args):
        import jax
        leaves = self._ensure(args)
        flat = put_all(leaves, self._arg_named)
        outs = jax.tree_util.tree_unflatten(self._out_def, list(self._run(*flat)))
        return outs

    def moved_args(self, *args) -> list[str]:
        """The argument leaves (by label) not already laid out as this program takes them: each
        is copied before a call, a collective outside the plan when it must be resharded (e.g. a
        training step whose outputs come back split another way than its inputs)."""
        leaves = self._ensure(args)
        return [label for label, x, s in zip(self.in_shardings, leaves, self._arg_named) if not is_placed(x, s)]

    def lower(self, *args):
        """The jitted shard_map program lowered for these arguments (`.compile().as_text()`)."""
        leaves = self._ensure(args)
        return self._run.lower(*put_all(leaves, self._arg_named))

    # -- inspection ----------------------------------------------------------------------------
    @property
    def plan(self):
        """spmdkit.partition.Summary: collectives per kind, bytes per device, modeled cost (us)."""
        self._traced()
        return self.partitioned.summary()

    @property
    def shardings(self) -> dict[str, list]:
        self._traced()
        return {**self.in_shardings, **self.out_shardings}

    def _traced(self):
        if self.partitioned is None:
            raise DistError("not traced yet: call it or .trace(*example_args) first")


def _key_of(leaves, treedef):
    # checked on every call: read shape and dtype off arrays directly (np.result_type is slower)
    return treedef, tuple((np.shape(x), x.dtype if hasattr(x, "dtype") else np.result_type(x)) for x in leaves)


def _propagate(program) -> None:
    from .. import core, propagate
    if not hasattr(core, "PropagationGraph"):
        raise DistError("this build of spmdkit._core has no propagation engine; use strategy='complete'")
    propagate(program)


def parallelize(fn, mesh, in_placements, out_placements=None, strategy: str = "propagate",
                example_args: tuple | None = None, memory_limit: float | None = None) -> Parallelized:
    """`fn` partitioned over `mesh` from its arguments' placements (see the module doc); with
    `example_args` it is traced (and checked) now, else at its first call."""
    p = Parallelized(fn, mesh, in_placements, out_placements, strategy, memory_limit)
    if example_args is not None:
        p.trace(*example_args)
    return p


def flat_placements(entries, tree, what: str = "in_placements") -> list[Any]:
    """The placements list (or None) per leaf, as parallelize reads `entries` for `tree`."""
    return _expand(entries, tree, what)
