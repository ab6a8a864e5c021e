"""Sharding groups whose members start with conflicting shardings, opened as Shardy opens them:
with a warning, each member is read through a new open `sdy.sharding_constraint` that takes its
place in every use (the group included), so the members keep their shardings and the group
unifies the new values instead. (Shardy's sharding-group import does the same; it puts a block
argument's constraint first in its block and an op result's right after the op.)"""
from __future__ import annotations

import warnings

from ..sharding import TensorSharding
from .core import Op


class ShardingGroupConflictWarning(UserWarning):
    """A sharding group's members started with shardings that cannot all hold."""


def group_ids_of(program, value) -> list[int]:
    """The ids of the sharding groups `value` is a member of."""
    return sorted({int(op.attrs["group_id"]) for fn in program.functions.values() for op in fn.walk()
                   if op.name == "sdy.sharding_group" and op.operands[0] is value})


def open_conflicting_group(program, group_id: int, reason: str = "") -> None:
    members = []
    for fn in program.functions.values():
        for op in fn.walk():
            if op.name == "sdy.sharding_group" and int(op.attrs["group_id"]) == group_id \
                    and op.operands[0] not in members:
                members.append(op.operands[0])
    warnings.warn(f"sharding group {group_id}: its members' shardings conflict{': ' + reason if reason else ''}; "
                  "each member is read through an open sharding constraint, as Shardy does",
                  ShardingGroupConflictWarning, stacklevel=3)
    replaced = {}
    for v in members:
        mesh = v.sharding.mesh if v.sharding is not None else _mesh_of_group(program)
        c = Op.create("sdy.sharding_constraint", [v], [v.type],
                      {"sharding": TensorSharding.replicated(mesh, v.type.rank, closed=False)})
        if v.is_block_arg:
            block, at = v.owner, 0
        else:
            block = v.owner.parent
            at = block.ops.index(v.owner) + 1
        c.parent = block
        block.ops.insert(at, c)
        replaced[id(v)] = (v, c.results[0])
    for fn in program.functions.values():
        for op in fn.walk():
            if op.name == "sdy.sharding_constraint" and any(op.results[0] is new for _, new in replaced.values()):
                continue
            op.operands = [replaced[id(x)][1] if id(x) in replaced else x for x in op.operands]


def _mesh_of_group(program) -> str:
    named = [name for name, mesh in program.meshes.items() if not mesh.is_maximal]
    return named[0]
