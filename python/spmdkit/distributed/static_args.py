"""What parallelize hands to the step as it is, untraced.

Two kinds, as JAX users know them: the positional arguments named by `static_argnums` (jax.jit's:
a Python `train` flag, a mode string, a hashable config), and leaves that are no array nor number
anywhere in the arguments (equinox modules hold their activation functions as leaves;
`eqx.filter_jit` passes such leaves through as they are, and so do we). Both are part of what a
trace is kept for: other values trace again. The step's results may hold such leaves too (an
updated equinox module keeps its functions): they come back as the trace made them.

The traced arguments keep their tree, with None where a static leaf was (None is no leaf to JAX,
so placements, labels and leaf order are those of the arrays alone).
"""
from __future__ import annotations

from typing import Any, NamedTuple

from .errors import DistError

_SCALARS = (bool, int, float, complex)


def is_traced(x) -> bool:
    """Whether a leaf is traced: an array (jax, numpy, a ShapeDtypeStruct, a PRNG key array) or a
    Python number, as jax.jit takes them."""
    return isinstance(x, _SCALARS) or (hasattr(x, "shape") and hasattr(x, "dtype"))


class Split(NamedTuple):
    dynamic: tuple  # the traced arguments (static_argnums left out; static leaves made None)
    key: tuple      # (static_argnums' values, (treedef, ((leaf index, value), ...)) or None): hashable


class StaticArgs:
    """The static part of a step's arguments (see the module doc) for one parallelize."""

    def __init__(self, argnums: tuple):
        self.argnums = argnums

    # -- arguments -----------------------------------------------------------------------------
    def split(self, args: tuple) -> Split:
        import jax
        argnums = self.argnums
        if argnums and argnums[-1] >= len(args):
            raise DistError(f"static_argnums {list(argnums)} names argument {argnums[-1]}, but the step was "
                            f"called with {len(args)} arguments")
        values = tuple(args[i] for i in argnums)
        for i, v in zip(argnums, values):
            if not _hashable(v):
                raise TypeError(f"static argument {i} must be hashable (as for jax.jit's static_argnums), "
                                f"got a {type(v).__name__}")
        dynamic = tuple(a for i, a in enumerate(args) if i not in argnums) if argnums else args
        leaves, treedef = jax.tree_util.tree_flatten(dynamic)
        slots = tuple((k, x) for k, x in enumerate(leaves) if not is_traced(x))
        if not slots:
            return Split(dynamic, (values, None))
        for k, x in slots:
            if not _hashable(x):
                path = jax.tree_util.tree_flatten_with_path(dynamic)[0][k][0]
                where = f"args[{self.positions(len(dynamic))[path[0].idx]}]{jax.tree_util.keystr(path[1:])}"
                raise TypeError(f"{where} is a {type(x).__name__}: neither an array nor a number (traced) nor "
                                "hashable (passed to the step as it is, like eqx.filter_jit's static leaves)")
        static_at = {k for k, _ in slots}
        dynamic = jax.tree_util.tree_unflatten(treedef, [None if k in static_at else x for k, x in enumerate(leaves)])
        return Split(dynamic, (values, (treedef, slots)))

    def call_slots(self, call: tuple) -> tuple:
        """(the static leaves of a call's flattened arguments as (index, value), the indices of
        its traced leaves): what a later call must repeat to take the same program."""
        import jax
        fixed, traced, k = [], [], 0
        for i, a in enumerate(call):
            for x in jax.tree_util.tree_leaves(a):
                if i in self.argnums or not is_traced(x):
                    fixed.append((k, x))
                else:
                    traced.append(k)
                k += 1
        return fixed, traced

    def merged(self, dynamic: tuple, key: tuple) -> tuple:
        """The call's positional arguments from the traced ones and a split's key."""
        import jax
        values, leaf_spec = key
        if leaf_spec is not None:
            treedef, slots = leaf_spec
            dynamic = jax.tree_util.tree_unflatten(treedef, _merge(jax.tree_util.tree_leaves(dynamic), slots,
                                                                   treedef.num_leaves))
        if not self.argnums:
            return tuple(dynamic)
        full, it = [], iter(dynamic)
        for i in range(len(dynamic) + len(self.argnums)):
            full.append(values[self.argnums.index(i)] if i in self.argnums else next(it))
        return tuple(full)

    def positions(self, n: int) -> list[int]:
        """The positions, in the call, of the n traced arguments."""
        return [i for i in range(n + len(self.argnums)) if i not in self.argnums]

    def entries(self, in_placements, n: int):
        """in_placements for the n traced arguments: given per traced argument, or per positional
        argument with None at the static ones (as jax.jit's in_shardings may be)."""
        from .placement_trees import is_entry
        if not self.argnums or is_entry(in_placements) or not isinstance(in_placements, (list, tuple)) \
                or len(in_placements) != n + len(self.argnums):
            return in_placements
        for i in self.argnums:
            if in_placements[i] is not None:
                raise DistError(f"in_placements[{i}] is given for static argument {i}; give None there")
        return tuple(e for i, e in enumerate(in_placements) if i not in self.argnums)

    def traced_positions(self, argnums: tuple) -> tuple:
        """Positions in the call (donate_argnums) as positions among the traced arguments."""
        return tuple(i - sum(1 for j in self.argnums if j < i) for i in argnums)

    # -- the step ------------------------------------------------------------------------------
    def bind(self, fn, key: tuple):
        """fn of the traced arguments alone; its results' static leaves are made None, and the
        returned function's `static_out` holds them (see restore)."""
        import jax
        cell: list[Any] = [None]

        def traced(*dynamic):
            out = fn(*self.merged(dynamic, key))
            leaves, treedef = jax.tree_util.tree_flatten(out)
            slots = tuple((k, x) for k, x in enumerate(leaves) if not is_traced(x))
            cell[0] = (treedef, slots) if slots else None
            if not slots:
                return out
            static_at = {k for k, _ in slots}
            return jax.tree_util.tree_unflatten(treedef, [None if k in static_at else x for k, x in enumerate(leaves)])
        traced.__name__ = getattr(fn, "__name__", "step")
        traced.static_out = cell
        return traced

    @staticmethod
    def restore(out, static_out):
        """The step's results with their static leaves back (`static_out`: bind's cell content)."""
        if static_out is None:
            return out
        import jax
        treedef, slots = static_out
        return jax.tree_util.tree_unflatten(treedef, _merge(jax.tree_util.tree_leaves(out), slots, treedef.num_leaves))


def _merge(traced: list, slots: tuple, total: int) -> list:
    """All `total` leaves: the static ones at their slots, the traced ones in order elsewhere."""
    out, it, static = [], iter(traced), dict(slots)
    for k in range(total):
        out.append(static[k] if k in static else next(it))
    return out


def _hashable(v) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True
