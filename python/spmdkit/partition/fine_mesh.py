"""The fine mesh: the program's mesh cut at every sub-axis its shardings use.

Shardy's propagation (ours too) splits a dim over a sub-axis `"mp":(2)2` where a reshape factors a
split dim (8 kv heads -> 2 groups of 4 over a 4-way axis; a flattened batch). The rules, the
reshard planner and `jax.shard_map` take whole axes only, and a sub-axis is a whole axis of the
reshaped mesh: axis "mp" of size 4 cut at 2 is the fine axes `mp(1)2` (major) and `mp(2)2`, with
the devices in the same row-major order. So the partitioner plans on the fine mesh, and to_jax runs
the shard_map over the user's devices reshaped to it: a whole "mp" is the run of its factors, the
sub-axis `"mp":(2)2` the fine axis `mp(2)2`. A program without sub-axes keeps its own mesh
(partition() refines only when it meets one: nothing is scanned for them up front).
"""
from __future__ import annotations

from ..sharding import Mesh, MeshAxis, TensorSharding
from .errors import PartitionError


class SubAxisFound(PartitionError):
    """A sharding over a sub-axis met on the program's own mesh: partition() starts again on the
    fine mesh (elsewhere, a PartitionError saying so)."""


def sub_axis_cuts(program, mesh) -> dict:
    """parent axis -> the bounds (pre-sizes) of every sub-axis the program's shardings use: on
    arguments, results, values of every op (nested ones too) and sharding attributes."""
    cuts: dict = {}
    seen: set = set()

    def note(sharding) -> None:
        if not isinstance(sharding, TensorSharding) or id(sharding) in seen:
            return
        seen.add(id(sharding))
        for ref in sharding.axes_used():
            if ref.is_sub_axis:
                cuts.setdefault(ref.name, set()).update(ref.interval(mesh))

    for fn in program.functions.values():
        for v in fn.args:
            note(v.sharding)
        for s in fn.result_shardings:
            note(s)
        for op in fn.walk():
            for v in op.results:
                note(v.sharding)
            for a in op.attrs.values():
                for s in (a if isinstance(a, (list, tuple)) else (a,)):
                    note(s)
            for region in op.regions:
                for block in region.blocks:
                    for v in block.args:
                        note(v.sharding)
    return cuts


def fine_name(parent: str, pre: int, size: int, parent_size: int) -> str:
    """A fine axis's name: the parent's when it is whole, else `mp(2)2` (Shardy's `"mp":(2)2`
    without the colon, which the reshard planner reads as a sub-axis of an axis of its mesh)."""
    return parent if pre == 1 and size == parent_size else f"{parent}({pre}){size}"


def fine_mesh(mesh: Mesh, cuts: dict) -> tuple[Mesh, dict]:
    """(the fine mesh, parent axis -> [(fine axis name, pre-size, size)], major first)."""
    axes, pieces = [], {}
    for a in mesh.axes:
        chain = sorted(set(cuts.get(a.name, ())) | {1, a.size})
        for lo, hi in zip(chain, chain[1:]):
            if hi % lo:
                raise PartitionError(f"the sub-axes of mesh axis {a.name!r} do not nest: bounds {chain} (each must "
                                     f"divide the next)")
        own = [(fine_name(a.name, lo, hi // lo, a.size), lo, hi // lo) for lo, hi in zip(chain, chain[1:])]
        pieces[a.name] = own or [(a.name, 1, a.size)]  # an axis of size 1 stays itself
        axes += [MeshAxis(n, size) for n, _, size in pieces[a.name]]
    return Mesh(axes, mesh.device_ids if mesh.has_explicit_device_ids else None), pieces
