"""`parallelize(fn, mesh, in_placements)`: capture a training step, propagate shardings from the
placements, partition it with our rules and reshard planner, and return a function of global
arrays that runs the per-device program inside one `jax.shard_map`.

Steps (on the first call, or `.trace(*example_args)`): `spmdkit.ir.import_jax` traces `fn`
(calls inlined) with each argument leaf annotated from its placements; `strategy="propagate"`
runs `spmdkit.propagate` (Shardy's algorithm on the rules' factor tables), `"complete"` runs
`spmdkit.partition.complete_forward` (Paddle-style completion) instead; `spmdkit.partition`
picks every collective; `to_jax` runs it. A new call with other shapes (or other values of the
`static_argnums` arguments) traces again; the last 8 traces are kept, as jax.jit's cache keeps
its programs (a train/eval flag, a last smaller batch).

Placements: `in_placements` has one entry per positional argument, each a pytree prefix of
that argument as JAX reads `in_shardings` (placement_trees.py): a placements list (one
`Shard`/`Replicate` per mesh dim) or None applies to every array leaf below it; above them any
container of the argument's own structure (dicts, lists, tuples, namedtuples, dataclasses,
flax/equinox/optax trees; a dict may leave keys out). A leaf whose entry is None takes the
placements of the array itself when it is a jax.Array (or ShapeDtypeStruct) laid out by a
NamedSharding over this mesh's devices and axes (from `shard_tensor`, `jax.device_put`, a previous
step's outputs), else it is replicated. `out_placements` likewise per result of `fn` (a tuple
result: one entry per element); None leaves a result to the strategy (propagate: what
propagation decided; complete: replicated). `donate_argnums` (jax.jit's): the positional
arguments whose buffers the results may reuse; the arrays passed are deleted by the call.
`static_argnums` (jax.jit's) and leaves that are no array nor number reach `fn` as they are
(static_args.py).

Called inside jax.jit / grad / vmap / scan (tracers for arguments), it runs as a nested jitted
shard_map and its reverse pass is its partitioned VJP (under_transforms.py).

The step is traced on abstract values (shapes and dtypes), so how the arguments happen to be laid
out never enters the program. Once traced, a call whose arrays are laid out otherwise (host
arrays, other placements, another mesh) has them moved once, before the call, to the traced
placements (`moved_args` names them); arrays already in place are passed as they are.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ir.jax_keys import is_key, key_impl
from .errors import DistError
from .mesh import as_process_mesh
from .placement_trees import is_entry, leaf_entries
from .placements import Replicate, placements_of_spec, to_spec
from .static_args import StaticArgs
from .tensor import is_placed, put_all
from .under_transforms import Differentiable

STRATEGIES = ("propagate", "complete", "auto")  # auto: spmdkit.auto searches (docs/auto.md)
_NEVER = object()  # no leaf's aval is this


def _expand(entries, tree, what: str, positions=None, n_static: int = 0) -> list:
    """One placements list (or None) per leaf of `tree` (a tuple of arguments or results);
    `positions`: each argument's position in the call, `n_static` arguments (static) left out."""
    kind = "argument" if what == "in_placements" else "result"
    if is_entry(entries):  # one entry for everything, as jit(in_shardings=sharding)
        entries = (entries,) * len(tree)
    if not isinstance(entries, (list, tuple)) or len(entries) != len(tree):
        counts = (f"{len(tree)} traced, or {len(tree) + n_static} with None at the static ones" if n_static
                  else str(len(tree)))
        raise DistError(f"{what} must have one entry per {kind} ({counts}), got {entries!r:.200}")
    out: list = []
    for i, (entry, sub) in enumerate(zip(entries, tree)):
        out.extend(leaf_entries(entry, sub, f"{what}[{positions[i] if positions is not None else i}]"))
    return out


def _labels(tree, prefix: str) -> list[str]:
    import jax
    return [prefix + jax.tree_util.keystr(path) for path, _ in jax.tree_util.tree_flatten_with_path(tree)[0]]


def _abstract(x):
    """A leaf as the tracer should see it: jax arrays (and ShapeDtypeStructs) as shape, dtype and
    weak type only, so their shardings stay out of the trace; numpy arrays and Python numbers
    carry none and are traced as they are (Python numbers stay weakly typed)."""
    import jax
    if isinstance(x, (jax.Array, jax.ShapeDtypeStruct)):
        return jax.ShapeDtypeStruct(x.shape, x.dtype, weak_type=bool(getattr(x, "weak_type", False)))
    return x


class Parallelized:
    """The partitioned form of `fn` (see the module doc). After tracing: `.program` (the
    propagated IR program; print it), `.partitioned` (local ops and reshards), `.plan` (the
    collectives per call, bytes per device, modeled cost), `.shardings` (placements of every
    argument and result leaf, by name)."""

    def __init__(self, fn, mesh, in_placements, out_placements=None, strategy: str = "propagate",
                 memory_limit: float | None = None, donate_argnums=(), static_argnums=()):
        if not callable(fn):
            raise TypeError(f"parallelize: expected a callable, got {type(fn).__name__}")
        if strategy not in STRATEGIES:
            raise DistError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
        self.donate_argnums = _argnums(donate_argnums, "donate_argnums")
        self.static_argnums = _argnums(static_argnums, "static_argnums")
        self._statics = StaticArgs(self.static_argnums)
        if set(self.donate_argnums) & set(self.static_argnums):
            raise DistError(f"argument {sorted(set(self.donate_argnums) & set(self.static_argnums))[0]} is both "
                            "static and donated")
        self._static = None  # the static part's key (static_args.Split.key) the program was traced with
        self._out_static = None  # the results' static leaves (static_args.StaticArgs.bind)
        self._fast = None  # (the call's treedef, its static leaves by index, its traced leaves' indices)
        self._donated: tuple = ()  # the traced leaves donate_argnums gives up
        self.fn, self.mesh, self.strategy = fn, as_process_mesh(mesh), strategy
        self.in_placements, self.out_placements = in_placements, out_placements
        self.program = self.partitioned = self._run = self.search_report = None
        self.memory_limit = memory_limit
        self._key = self._treedef = None
        self._known: list = []
        self.in_shardings: dict[str, list] = {}
        self.out_shardings: dict[str, list] = {}
        self._bound = self._differentiable = None  # the traced fn; its form under transforms (under_transforms.py)
        self._traces: dict = {}  # (static values, leaf key) -> a trace's state (_TRACE_STATE), newest last

    # -- tracing -------------------------------------------------------------------------------
    def trace(self, *args) -> Parallelized:
        """Import `fn` on these arguments, annotate, propagate (or complete), partition. The
        arguments may be arrays of any placement or `jax.ShapeDtypeStruct`s. The last
        _KEPT_TRACES traces are kept: arguments of shapes (and static values) seen before take
        their program again, as jax.jit's cache would (a train/eval flag, a last smaller batch)."""
        import jax

        from ..ir import import_jax
        from ..partition import complete_forward, partition, to_jax
        call = args
        args, static = self._statics.split(call)
        leaves, in_def = jax.tree_util.tree_flatten(args)
        labels = self._leaf_labels(args)
        if self._switch_to((static, _key_of(leaves, in_def))):
            return self
        fn = self._statics.bind(self.fn, static)
        positions = self._statics.positions(len(args))
        entries = [e if e is not None else self._own_placements(x, label) for label, x, e in
                   zip(labels, leaves, _expand(self._statics.entries(self.in_placements, len(args)), args,
                                               "in_placements", positions, len(self.static_argnums)))]
        arg_shardings = [self._sharding(entry, np.shape(x), label) for label, x, entry in zip(labels, leaves, entries)]
        abstract = jax.tree_util.tree_unflatten(in_def, [_abstract(x) for x in leaves])
        out_labels, result_shardings = self._result_shardings(fn, abstract)
        limit, least_peak = self.memory_limit, float("inf")
        for attempt in range(_MEMORY_ATTEMPTS):
            program = import_jax(fn, *abstract, inline_calls=True, meshes={"mesh": self.mesh.sharding_mesh},
                                 arg_shardings=arg_shardings)
            program.main.result_shardings = result_shardings
            signatures = None  # the ops' signature numbers, when propagation made them
            if self.strategy == "auto":  # every value annotated by the search: nothing left to propagate
                self.search_report = self._search(program, entries, labels, out_labels, limit)
            elif self.strategy == "propagate":
                signatures = _propagate(program)
            else:
                complete_forward(program)
            # results leave on the user's mesh: a sub-axis propagation gave one is left out (replicated)
            program.main.result_shardings = [whole_axes_only(r) for r in program.main.result_shardings]
            parted = partition(program, signatures=signatures)
            self.program, self.partitioned = program, parted
            # on a fine mesh (sub-axes: partition/fine_mesh.py) the results are laid out on the
            # user's mesh as they leave (the same devices and blocks: no data moves)
            out_named = tuple(self._named(l, leaf) for l, leaf in zip(parted.result_layouts, self._out_leaves)) \
                if parted.mesh.pieces is not None else None
            self._donated = _donated_leaves(self._statics.traced_positions(self.donate_argnums), args)
            self._arg_named = [self._named(layout, x) for layout, x in zip(parted.arg_layouts, leaves)]
            self._run = _with_keys(lambda mesh, parted=parted: to_jax(parted, mesh, jit=False), self.mesh.jax_mesh(),
                                   leaves, self._out_leaves, out_named, self._donated,
                                   [s.spec for s in self._arg_named])
            if self.strategy != "auto" or self.memory_limit is None:
                break
            # The model counts arguments, results and activations; the compiler's temporaries
            # come on top. Check the compiled program itself and search again with the limit
            # lowered by what it went over (at most to the least any plan needs, modeled).
            report = self.search_report
            searched = report.memory_limit
            peak = compiled_peak_bytes(self._run, leaves, self._arg_named)
            report.compiled_memory, report.searched_limit, report.memory_limit = peak, searched, self.memory_limit
            if peak <= self.memory_limit:
                break
            least_peak = min(least_peak, peak)
            if searched != limit or attempt == _MEMORY_ATTEMPTS - 1:   # already the least-memory plan, or tried enough
                from ..auto.errors import AutoShardingError
                raise AutoShardingError(
                    f"no plan fits memory_limit={self.memory_limit:.0f} bytes per device once compiled: the plans "
                    f"searched under lowered limits down to {searched:.0f} compile to {least_peak:.0f} bytes per "
                    f"device or more, temporaries included (the least of them fits a limit of {least_peak:.0f})",
                    smallest_feasible=least_peak)
            limit = max(searched - (peak - self.memory_limit), 1.0)
        self._labels = labels
        self._treedef, self._known = in_def, [(_NEVER, _NEVER)] * len(labels)  # see __call__'s fast path
        self.in_shardings = {lab: placements_of_spec(s.spec, self.mesh) for lab, s in zip(labels, self._arg_named)}
        self.out_shardings = {lab: placements_of_spec(self._named(layout, leaf).spec, self.mesh)
                              for lab, layout, leaf in zip(out_labels, parted.result_layouts, self._out_leaves)}
        self._key = _key_of(leaves, in_def)
        self._bound, self._differentiable = fn, None
        self._static, self._out_static = static, fn.static_out[0]
        self._fast = (jax.tree_util.tree_structure(call), *self._statics.call_slots(call))  # __call__'s view
        self._traces[(static, self._key)] = {name: getattr(self, name) for name in _TRACE_STATE}
        while len(self._traces) > _KEPT_TRACES:
            del self._traces[next(iter(self._traces))]
        return self

    def _switch_to(self, key) -> bool:
        """Make the kept trace of `key` the current one (False: none kept)."""
        state = self._traces.pop(key, None)
        if state is None:
            return False
        if self._key is not None:  # the current trace's state as it is now (its fast-path entries)
            current = (self._static, self._key)
            if current in self._traces:
                self._traces[current] = {name: getattr(self, name) for name in _TRACE_STATE}
        for name, value in state.items():
            setattr(self, name, value)
        self._traces[key] = state  # newest last
        return True

    def _search(self, program, entries, labels, out_labels, limit):
        """The search under `limit`; a lowered limit (see trace) that no plan meets becomes the
        least any plan needs under the model (`searched_limit` then says so)."""
        from ..auto import parallelize_hook
        from ..auto.errors import AutoShardingError
        try:
            return parallelize_hook(program, entries, labels, out_labels, limit)
        except AutoShardingError as e:
            if limit == self.memory_limit or e.smallest_feasible is None:
                raise
            return parallelize_hook(program, entries, labels, out_labels, e.smallest_feasible * (1 + 1e-9))

    def _leaf_labels(self, dynamic) -> list[str]:
        """The traced arguments' leaves by name (args[i] with i the position in the call)."""
        positions = self._statics.positions(len(dynamic))
        return [lab for i, a in zip(positions, dynamic) for lab in _labels(a, f"args[{i}]")]

    def _own_placements(self, x, label: str):
        """The placements `x` carries when it is laid out by a NamedSharding over this mesh
        (same axes, same devices; a mesh without devices matches by axes); else None."""
        from jax.sharding import NamedSharding, PartitionSpec

        from ..ir.jax_params import jax_mesh_axes
        sharding = getattr(x, "sharding", None)
        if not isinstance(sharding, NamedSharding):
            return None
        axes, ids = jax_mesh_axes(sharding.mesh)
        same_devices = ids is None or ids == self.mesh.process_ids
        if axes != list(zip(self.mesh.dim_names, self.mesh.shape)) or not same_devices:
            return None
        if any(e is PartitionSpec.UNCONSTRAINED for e in sharding.spec):
            raise DistError(f"its sharding {sharding.spec} leaves dims unconstrained; give placements", value=label)
        return placements_of_spec(sharding.spec, self.mesh)

    def _sharding(self, entry, shape, label: str):
        """The TensorSharding of one leaf's placements (None: replicated), checked against the
        mesh and the shape (DistError naming the leaf)."""
        from ..ir.jax_import import spec_to_sharding
        spec = to_spec(entry or [Replicate()] * self.mesh.ndim, self.mesh, tuple(shape), label)
        return spec_to_sharding("mesh", self.mesh.sharding_mesh, spec, len(shape))

    def _result_shardings(self, fn, abstract_args):
        """(labels, TensorSharding or None per result leaf) from out_placements."""
        import jax
        out_shape = jax.eval_shape(fn, *abstract_args)
        single = not isinstance(out_shape, tuple)
        out_tree = (out_shape,) if single else out_shape
        out_leaves, self._out_def = jax.tree_util.tree_flatten(out_shape)
        self._out_leaves = out_leaves
        labels = _labels(out_tree, "out")
        if self.out_placements is None:
            return labels, [None] * len(out_leaves)
        entries = _expand((self.out_placements,) if single else self.out_placements, out_tree, "out_placements")
        return labels, [None if e is None else self._sharding(e, leaf.shape, label)
                        for label, leaf, e in zip(labels, out_leaves, entries)]

    def _named(self, layout, leaf=None):
        """The NamedSharding of a program argument or result laid out by `layout`; for a PRNG key
        array `leaf`, of the key array itself (its key-data dims, never split, left out)."""
        from jax.sharding import NamedSharding
        from jax.sharding import PartitionSpec as P

        from ..partition.execute import user_partition_spec
        spec = user_partition_spec(layout, self.partitioned.mesh)
        if leaf is not None and is_key(leaf):
            spec = P(*tuple(spec)[:len(leaf.shape)])
        return NamedSharding(self.mesh.jax_mesh(), spec)

    def _ensure(self, args):
        """The traced arguments' leaves, traced again when their structure, shapes or dtypes (or
        the static arguments) changed."""
        import jax
        dynamic, static = self._statics.split(args)
        leaves, treedef = jax.tree_util.tree_flatten(dynamic)
        if static != self._static or _key_of(leaves, treedef) != self._key:
            self.trace(*args)
        return leaves

    def _place(self, leaves) -> list:
        """The leaves laid out as the program takes them: those already in place as they are,
        the rest moved together (a DistError naming the leaf when one cannot be moved). Every
        array passed on is remembered by its (aval, sharding) objects for the fast path."""
        named = self._arg_named
        todo = [i for i, (x, s) in enumerate(zip(leaves, named)) if not is_placed(x, s)]
        placed = leaves
        if todo and self._donated:
            # a donated leaf that must move is copied first: moving may keep the caller's buffer on
            # a device (jax.device_put aliases where it can), and the call would delete it
            import jax
            donated = set(self._donated)
            leaves = [_own_copy(x) if i in donated and i in todo and isinstance(x, jax.Array) else x
                      for i, x in enumerate(leaves)]
        if todo:
            try:
                placed = put_all(leaves, named)
            except Exception as e:  # noqa: BLE001 - name the leaf that could not be moved
                for i in todo:
                    try:
                        put_all([leaves[i]], [named[i]])
                    except Exception as inner:  # noqa: BLE001
                        raise DistError(f"cannot lay it out as {named[i].spec} on {self.mesh}: "
                                        f"{type(inner).__name__}: {inner}", value=self._labels[i]) from inner
                raise DistError(f"cannot lay the arguments out as traced: {type(e).__name__}: {e}") from e
        self._known = [(x.aval, x.sharding) for x in placed]
        return placed

    # -- running -------------------------------------------------------------------------------
    def __call__(self, *args):
        import jax
        leaves, treedef = jax.tree_util.tree_flatten(args)
        fast = self._fast
        if fast is not None and treedef == fast[0]:
            # Fast path: the same structure and static values, and every traced leaf carries the
            # very aval and sharding objects of an array passed before (a jitted program's outputs
            # share them from call to call), so its shape, dtype and layout are those already
            # checked: no check, no copy.
            _, fixed, traced = fast
            if all(leaves[k] is v or (type(leaves[k]) is type(v) and leaves[k] == v) for k, v in fixed):
                if fixed:
                    leaves = [leaves[k] for k in traced]
                for x, (aval, sharding) in zip(leaves, self._known):
                    if getattr(x, "aval", None) is not aval or x.sharding is not sharding:
                        break
                else:
                    return self._results(self._run(*leaves))
        leaves = self._ensure(args)  # may trace: self._run is read after it
        if any(isinstance(x, jax.core.Tracer) for x in leaves):
            # called inside jax.jit / grad / vmap / scan (under_transforms.py)
            if self._differentiable is None:
                self._differentiable = Differentiable(self)
            return self._results(self._differentiable(*leaves))
        return self._results(self._run(*self._place(leaves)))

    def _results(self, outs):
        import jax
        return self._statics.restore(jax.tree_util.tree_unflatten(self._out_def, list(outs)), self._out_static)

    def moved_args(self, *args) -> list[str]:
        """The argument leaves (by label) not already laid out as this program takes them: each
        is copied before a call, a collective outside the plan when it must be resharded (e.g. a
        training step whose outputs come back split another way than its inputs)."""
        leaves = self._ensure(args)
        return [label for label, x, s in zip(self._labels, leaves, self._arg_named) if not is_placed(x, s)]

    def lower(self, *args):
        """The jitted shard_map program lowered for these arguments (`.compile().as_text()`)."""
        leaves = self._ensure(args)
        return self._run.lower(*self._place(leaves))

    # -- inspection ----------------------------------------------------------------------------
    @property
    def plan(self):
        """spmdkit.partition.Summary: collectives per kind, bytes per device, modeled cost (us)."""
        self._traced()
        return self.partitioned.summary()

    @property
    def backward(self) -> Parallelized | None:
        """The partitioned VJP of the current trace (under_transforms.py): made by the first
        reverse-mode derivative taken of this step inside jax.grad / jax.vjp; None before."""
        return None if self._differentiable is None else self._differentiable.backward_step

    @property
    def shardings(self) -> dict[str, list]:
        self._traced()
        return {**self.in_shardings, **self.out_shardings}

    def _traced(self):
        if self.partitioned is None:
            raise DistError("not traced yet: call it or .trace(*example_args) first")


_MEMORY_ATTEMPTS = 4
# what one trace sets (Parallelized.trace), kept per trace for the next call of its shapes
_TRACE_STATE = ("program", "partitioned", "search_report", "_run", "_arg_named", "_labels", "_treedef", "_known",
                "in_shardings", "out_shardings", "_key", "_static", "_out_def", "_out_leaves", "_out_static", "_fast",
                "_donated", "_bound", "_differentiable")
_KEPT_TRACES = 8


def _with_keys(run_on, jax_mesh, in_leaves, out_leaves, out_shardings=None, donated: tuple = (), in_specs=()):
    """The jitted program of `run_on(mesh)` (the partitioned program's shard_map over `mesh`),
    over `jax_mesh`. The partitioned one holds a PRNG key array as its uint32 key data
    (spmdkit.ir.jax_keys); key arrays passed in are unwrapped and key results wrapped again inside
    the jit, so the step takes and returns keys as `jax.jit(fn)` does. `out_shardings`: the
    results' layouts to leave in (None: as the shard_map gives them; given for a program on a
    finer mesh than the user's); `donated`: the argument leaves whose buffers the results may
    reuse (jax.jit's donate_argnums, by leaf); `in_specs`: the arguments' PartitionSpecs (for a
    call inside the caller's jit under an explicit-axes context: _OutsideContextMesh)."""
    import jax
    keys_in = [is_key(x) for x in in_leaves]
    keys_out = [key_impl(x) if is_key(x) else None for x in out_leaves]
    kw = {} if out_shardings is None else {"out_shardings": out_shardings}
    if donated:
        kw["donate_argnums"] = donated

    def jitted(mesh, **kw):
        run = run_on(mesh)
        if not any(keys_in) and not any(keys_out):
            return jax.jit(run, **kw)

        def boundary(*leaves):
            outs = run(*[jax.random.key_data(x) if k else x for x, k in zip(leaves, keys_in)])
            return tuple(y if impl is None else jax.random.wrap_key_data(y, impl=impl) for y, impl in zip(outs, keys_out))
        return jax.jit(boundary, **kw)

    def in_context(context):
        """The program over the caller's context mesh (its axis types; the same axes and devices)."""
        if out_shardings is not None or context.axis_names != jax_mesh.axis_names or \
                tuple(context.axis_sizes) != tuple(jax_mesh.axis_sizes):
            return None
        return jitted(jax.sharding.Mesh(jax_mesh.devices, jax_mesh.axis_names, axis_types=context.axis_types))
    return _OutsideContextMesh(jitted(jax_mesh, **kw), in_context, in_specs)


class _OutsideContextMesh:
    """A jitted program called and lowered outside the mesh context the caller may have set
    (`with jax.set_mesh(mesh)`, as code written for explicit sharding runs): its shard_map names
    its own mesh, which JAX refuses under a context mesh of other axis types. Inside the caller's
    jit under an explicit-axes context (no way out of it there) the program runs over the
    context's mesh instead, its arguments resharded to the specs it takes (`in_specs`), so the
    values it gives back are typed by that mesh as the code around expects."""

    __slots__ = ("jitted", "in_context", "in_specs", "_by_context")

    def __init__(self, jitted, in_context, in_specs):
        self.jitted, self.in_context, self.in_specs, self._by_context = jitted, in_context, in_specs, {}

    def __call__(self, *args):
        from jax.sharding import get_abstract_mesh
        if get_abstract_mesh().empty:
            return self.jitted(*args)
        import jax
        if any(isinstance(x, jax.core.Tracer) for x in args):
            context = get_abstract_mesh()
            if any(t == jax.sharding.AxisType.Explicit for t in context.axis_types):
                return self._in_explicit_context(context, args)
            # inside the caller's jit: the enclosing computation takes our results as they come
            with jax.sharding.use_abstract_mesh(jax.sharding.AbstractMesh((), ())):
                return self.jitted(*args)
        context = jax.sharding.get_mesh()
        with jax.set_mesh(None):
            outs = self.jitted(*args)
        return _on_context_mesh(outs, context)

    def _in_explicit_context(self, context, args):
        import jax
        key = (context.axis_names, tuple(context.axis_sizes), tuple(context.axis_types))
        if key not in self._by_context:
            self._by_context[key] = self.in_context(context)
        run = self._by_context[key]
        if run is None:
            raise DistError("a parallelized step is called inside jax.jit (or grad, vmap) under a mesh context of "
                            f"explicit axes it cannot run over ({context}): call it outside the jit (it is jitted "
                            "itself) or outside `jax.set_mesh`")
        return run(*[jax.sharding.reshard(x, spec) for x, spec in zip(args, self.in_specs)])

    def lower(self, *args):
        import jax
        with jax.set_mesh(None):
            return self.jitted.lower(*args)


def _own_copy(x):
    """A copy of a jax.Array in its own buffers; x itself when it cannot be copied (a deleted
    buffer: the move that follows names it)."""
    import jax.numpy as jnp
    try:
        return jnp.copy(x)
    except Exception:  # noqa: BLE001 - put_all raises the DistError naming the leaf
        return x


def _on_context_mesh(outs, context) -> tuple:
    """The results laid out on the caller's context mesh where it is ours in other axis types
    (the same axis names, sizes and devices): the same blocks on the same devices, typed as
    code under that context expects them (explicit sharding refuses arrays of another mesh)."""
    import jax
    from jax.sharding import NamedSharding
    if context is None or getattr(context, "empty", True):
        return outs
    names, sizes, devices = context.axis_names, context.axis_sizes, context.devices.tolist()
    out = []
    for y in outs:
        s = getattr(y, "sharding", None)
        m = getattr(s, "mesh", None)
        if isinstance(s, NamedSharding) and m is not context and m.axis_names == names and \
                m.axis_sizes == sizes and m.devices.tolist() == devices:
            y = jax.device_put(y, NamedSharding(context, s.spec))
        out.append(y)
    return tuple(out)


def _argnums(argnums, what: str) -> tuple:
    """donate_argnums / static_argnums as jax.jit takes them (an int or a sequence of ints), checked."""
    nums = (argnums,) if isinstance(argnums, int) and not isinstance(argnums, bool) else argnums
    if not isinstance(nums, (tuple, list)) or not all(isinstance(i, int) and not isinstance(i, bool) for i in nums):
        raise TypeError(f"{what} must be an int or a sequence of ints, got {argnums!r:.200}")
    if any(i < 0 for i in nums):
        raise DistError(f"{what} must be argument positions (>= 0), got {list(nums)}")
    return tuple(sorted(set(nums)))


def _donated_leaves(argnums: tuple, args: tuple) -> tuple:
    """The leaf positions of the arguments `argnums` names, in the flattened arguments."""
    import jax
    if not argnums:
        return ()
    if argnums[-1] >= len(args):
        raise DistError(f"donate_argnums {list(argnums)} names argument {argnums[-1]}, but the step was "
                        f"called with {len(args)} arguments")
    out, start = [], 0
    for i, arg in enumerate(args):
        n = len(jax.tree_util.tree_leaves(arg))
        if i in argnums:
            out.extend(range(start, start + n))
        start += n
    return tuple(out)


def compiled_peak_bytes(run, leaves, named) -> float:
    """Bytes per device the compiled program holds at once (XLA's memory analysis: arguments,
    outputs and temporaries, less what outputs alias)."""
    import jax
    shaped = [jax.ShapeDtypeStruct(np.shape(x), x.dtype if hasattr(x, "dtype") else np.result_type(x), sharding=s)
              for x, s in zip(leaves, named)]
    m = run.lower(*shaped).compile().memory_analysis()
    return float(m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes - m.alias_size_in_bytes)


def _key_of(leaves, treedef):
    # checked on every call: read shape and dtype off arrays directly (np.result_type is slower);
    # the leaves are traced ones (static_args.is_traced): arrays and numbers
    return treedef, tuple((x.shape, x.dtype) if hasattr(x, "dtype") else (np.shape(x), np.result_type(x))
                          for x in leaves)


def whole_axes_only(sharding):
    """`sharding` without the sub-axes of its dims (None stays None)."""
    if sharding is None or not any(a.is_sub_axis for d in sharding.dims for a in d.axes):
        return sharding
    from ..sharding import DimSharding
    dims = [DimSharding([a for a in d.axes if not a.is_sub_axis], d.is_closed, d.priority) for d in sharding.dims]
    return sharding.replace(dims=dims)


def _propagate(program):
    """Propagates in place; returns the ops' signature numbers, for the partition."""
    from .. import core
    from ..propagation.from_ir import propagate_program
    if not hasattr(core, "PropagationGraph"):
        raise DistError("this build of spmdkit._core has no propagation engine; use strategy='complete'")
    return propagate_program(program).signatures


def parallelize(fn, mesh, in_placements, out_placements=None, strategy: str = "propagate",
                example_args: tuple | None = None, memory_limit: float | None = None,
                donate_argnums=(), static_argnums=()) -> Parallelized:
    """`fn` partitioned over `mesh` from its arguments' placements (see the module doc); with
    `example_args` it is traced (and checked) now, else at its first call. `donate_argnums`: as
    jax.jit's, the positional arguments whose buffers the results may reuse (a training step's
    params and optimizer state: they are deleted by the call). `static_argnums`: as jax.jit's, the
    positional arguments passed to `fn` as they are (Python flags, strings, hashable config),
    not traced; each new value traces again."""
    p = Parallelized(fn, mesh, in_placements, out_placements, strategy, memory_limit, donate_argnums,
                     static_argnums)
    if example_args is not None:
        p.trace(*example_args)
    return p


def flat_placements(entries, tree, what: str = "in_placements") -> list[Any]:
    """The placements list (or None) per leaf, as parallelize reads `entries` for `tree`."""
    return _expand(entries, tree, what)
