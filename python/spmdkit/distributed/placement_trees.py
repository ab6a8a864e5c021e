"""Placements as pytree prefixes, as JAX reads `jit(in_shardings=...)`.

An entry is a placements list (one `Shard`/`Replicate` per mesh dim) or None; it applies to
every array leaf below it. Anywhere above the entries the placements tree has the value's own
structure: dicts, lists, tuples, namedtuples, dataclasses and every other registered pytree node
(flax parameter trees, equinox modules, optax states) — compared one level at a time with
jax.tree_util, so any node type JAX flattens works without code of its own here. Two leniencies:
a list may stand for a tuple (and back), and a plain dict may stand for any node whose children
are keyed like a dict's (dict, flax's State, FrozenDict) and leave keys out (they are None).
Mismatches raise DistError naming the path (`in_placements[0]['layers'][3]`).
"""
from __future__ import annotations

from .errors import DistError
from .placements import is_placements


def is_entry(x) -> bool:
    """A leaf of a placements tree: None or a placements list."""
    return x is None or is_placements(x)


def leaf_entries(entries, tree, where: str) -> list:
    """The entry (placements list or None) of every leaf of `tree`, in jax's flattening order."""
    out: list = []
    _walk(entries, tree, where, out)
    return out


def _walk(entry, sub, where: str, out: list) -> None:
    import jax
    if is_entry(entry):
        out.extend([entry] * len(jax.tree_util.tree_leaves(sub)))
        return
    e_keys, e_kids, e_node = _one_level(entry)
    s_keys, s_kids, s_node = _one_level(sub)
    if e_node is None:
        raise DistError(f"{where} must be a placements list (one Shard/Replicate per mesh dim), None, or a "
                        f"container like the value's; got {entry!r:.120}")
    if s_node is None and isinstance(entry, (list, tuple)) and any(is_placements((p,)) or isinstance(p, str)
                                                                   for p in entry):
        bad = next(p for p in entry if not is_placements((p,)))  # a placements list, but for this
        raise DistError(f"{where}: {bad!r} is not a placement (Shard(dim), Replicate() or Partial()), in "
                        f"{list(entry)!r:.120}")
    if s_node is None:
        raise DistError(f"{where} is a {type(entry).__name__} of placements, but the value there is a leaf "
                        f"({type(sub).__name__}); give it one placements list or None")
    if type(entry) is dict and s_keys and all(len(k) == 1 and isinstance(k[0], jax.tree_util.DictKey)
                                              for k in s_keys):
        # a dict stands for any node keyed like one (dict, flax State, FrozenDict); keys left out are None
        names = [k[0].key for k in s_keys]
        unknown = set(entry) - set(names)
        if unknown:
            raise DistError(f"{where} names keys {sorted(map(str, unknown))} the value lacks "
                            f"(it has {sorted(map(str, names))})")
        e_kids = [entry.get(n) for n in names]
    elif not _same_node(e_node, s_node) or len(e_kids) != len(s_kids):
        raise DistError(f"{where}: the placements are a {_describe(e_node, e_keys)} where the value is a "
                        f"{_describe(s_node, s_keys)}; placements must be a prefix of the value's pytree")
    for key, e_kid, s_kid in zip(s_keys, e_kids, s_kids):
        _walk(e_kid, s_kid, where + jax.tree_util.keystr(key), out)


def _one_level(node):
    """(key paths, children, (type, aux data)) one level down; node data None for a leaf."""
    import jax
    flat, treedef = jax.tree_util.tree_flatten_with_path(node, is_leaf=lambda x: x is not node)
    if treedef.num_nodes == 1 and treedef.num_leaves == 1:
        return [], [], None
    return [k for k, _ in flat], [c for _, c in flat], treedef.node_data()


def _same_node(a, b) -> bool:
    sequences = (list, tuple)
    if a[0] in sequences and b[0] in sequences:
        return True
    return a[0] is b[0] and _same_aux(a[1], b[1])


def _same_aux(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:  # aux data that does not compare (arrays in static fields): trust the type
        return True


def _describe(node, keys) -> str:
    import jax
    names = [jax.tree_util.keystr(k) for k in keys]
    shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
    return f"{node[0].__name__} of {len(keys)} ({shown})"
