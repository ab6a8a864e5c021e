"""Running a partitioned program with JAX: one `jax.shard_map` over the user's mesh whose body is
the per-device program. Each local op binds its JAX primitive with the localized params; each
reshard runs its plan's collectives (spmdkit.reshard.execute_jax.apply_plan). XLA's automatic
partitioner has nothing left to decide: every collective in the compiled program is ours.

The body is not differentiated (the imported program already holds the backward ops), so it
runs with check_vma=False. JAX is imported lazily.
"""
from __future__ import annotations

import numpy as np

from ..ir.attributes import MLIRAttr
from ..ir.constants import dense_value
from ..ir.jax_params import ParamError, params_from_attrs, primitive
from ..reshard.execute_jax import apply_plan, partition_spec
from .errors import PartitionError, value_name
from .plan import LocalBlock, LocalControlFlow, LocalManual, LocalOp, PartitionedProgram
from .rules import IDENTITY_OPS
from .split_gather import LOCAL_KERNEL

# placeholders JAX's cond differentiation writes for the residuals of the branch not taken
PLACEHOLDER_PRIMITIVES = frozenset({"empty", "empty2"})


def _run_local(step: LocalOp, inputs: list, pm) -> list:
    op = step.op
    if op.name == "stablehlo.constant":
        return [_constant(step.attrs["value"], op.result.type, pm)]
    if op.name in IDENTITY_OPS:
        return list(inputs)
    if LOCAL_KERNEL in step.attrs:  # a placement the primitive alone cannot run (split_gather.py)
        return _checked(step, step.attrs[LOCAL_KERNEL](step, inputs, pm), pm)
    if not op.name.startswith("jax."):
        raise PartitionError("only jax.<primitive> ops can run (import with spmdkit.ir.import_jax)", op=op.name)
    name = op.name[len("jax."):]
    if name in PLACEHOLDER_PRIMITIVES:  # any value is right: zeros of the local shape
        import jax.numpy as jnp
        from ..ir.evaluate import _np_dtype
        return [jnp.zeros(layout.local_shape(pm.spec, v.type.shape), _np_dtype(v.type))
                for v, layout in zip(op.results, step.result_layouts)]
    if name in VMA_IDENTITY:
        return _checked(step, list(inputs), pm)
    if name == "axis_index" and isinstance(step.attrs.get("axis_name"), list) and len(step.attrs["axis_name"]) > 1:
        return _checked(step, [_joint_axis_index(step.attrs["axis_name"], pm)], pm)
    key = (id(step.attrs), tuple([x.dtype for x in inputs]))  # the attrs are kept in the memo: their id stays theirs
    hit = pm.jax_params.get(key)
    if hit is None:
        try:
            params = params_from_attrs(name, step.attrs, key[1])
        except ParamError as e:
            raise PartitionError(e.reason, op=op.name) from None
        unchecked = VMA_UNCHECKED.get(name)
        if unchecked is not None:
            name, extra = unchecked
            params = {**params, **extra}
        hit = pm.jax_params[key] = (step.attrs, primitive(name), params)
    _, prim, params = hit
    if name in CLAMPED_STARTS:
        inputs = _clamped_starts(name, inputs, params)
    out = prim.bind(*inputs, **params)
    outs = list(out) if prim.multiple_results else [out]
    if op.name == "jax.iota":
        outs = [_offset_iota(outs[0], step.result_layouts[0], params["dimension"], pm)]
    return _checked(step, outs, pm)


def _constant(value, t, pm):
    """A constant's array, read once per attribute and type (a model's constants repeat: the same
    text in many attribute objects)."""
    key = (value.text if isinstance(value, MLIRAttr) else id(value), t)  # the attribute is kept: its id stays its own
    hit = pm.constants.get(key)
    if hit is None:
        from ..ir.evaluate import _np_dtype
        hit = pm.constants[key] = (value, dense_value(value, t, _np_dtype(t)))
    return hit[1]


# A shard_map body written with check_vma=True (JAX's default) carries JAX's bookkeeping of the
# axes each value varies over; the program runs with check_vma=False, where `pvary` is the identity
# and the invariant collectives are the plain ones (manual.py).
VMA_IDENTITY = frozenset({"pvary"})
VMA_UNCHECKED = {"psum_invariant": ("psum", {"axis_index_groups": None}),
                 "all_gather_invariant": ("all_gather", {"axis_index_groups": None})}


# XLA (jax 0.10.2, CPU) folds dynamic_slice(dynamic_slice(x, s), i) into one dynamic_slice at s + i,
# which is wrong where the first start was clamped (s past the end); a reshard's local slice after
# such an op hits it. Clamping the starts ourselves makes the fold exact.
CLAMPED_STARTS = frozenset({"dynamic_slice", "dynamic_update_slice"})


def _clamped_starts(name: str, inputs: list, params: dict) -> list:
    from jax import lax
    x = inputs[0]
    if name == "dynamic_slice":
        window, starts, rest = params["slice_sizes"], inputs[1:1 + x.ndim], inputs[1 + x.ndim:]
        head = [x]
    else:
        window, starts, rest = inputs[1].shape, inputs[2:2 + x.ndim], inputs[2 + x.ndim:]
        head = [x, inputs[1]]
    clamped = [lax.clamp(np.zeros((), s.dtype), s, np.array(max(n - w, 0), s.dtype))
               for s, n, w in zip(starts, x.shape, window)]
    return head + clamped + list(rest)


def _checked(step: LocalOp, outs: list, pm) -> list:
    shapes = pm.local_shapes  # (id(layout), shape) -> (layout, local shape), as localize.py keeps it
    for v, layout, x in zip(step.op.results, step.result_layouts, outs):
        key = (id(layout), v.type.shape)
        hit = shapes.get(key)
        if hit is None:
            hit = shapes[key] = (layout, tuple(layout.local_shape(pm.spec, v.type.shape)))
        want = hit[1]
        if tuple(x.shape) != want:
            raise PartitionError(f"ran on local shapes to {tuple(x.shape)}, its layout {layout} needs {want}",
                                 op=step.op.name, value=value_name(v))
    return outs


def _joint_axis_index(axes, pm):
    """The row-major (mixed-radix, major first) index of this device over several axes: a split
    iota's block number, and a shard_map body's axis_index of an axis the fine mesh cut into
    factors (manual.py), as JAX lowers axis_index of one axis only."""
    from jax import lax
    index = np.int32(0)
    for a in axes:  # lax on tracers, not jnp operators (each is a jitted call while tracing)
        index = lax.add(lax.mul(index, np.int32(pm.spec.size(a))), lax.axis_index(a))
    return index


def _offset_iota(x, layout, dim: int, pm):
    """A local iota counts from this shard's first global index along `dim`: the block number
    (the mixed-radix number of the device's indices on the dim's axes, major first) times the
    local size."""
    from jax import lax
    axes = layout.dims[dim]
    if not axes:
        return x
    block = _joint_axis_index(axes, pm)
    start = lax.convert_element_type(lax.mul(block, np.int32(x.shape[dim])), x.dtype)
    return lax.add(x, lax.broadcast_in_dim(start, x.shape, ()))


def _run_steps(steps, env: dict, pm) -> None:
    """Run `steps` on local shards; `env` maps (id(value), layout) to the local array."""
    for step in steps:
        if isinstance(step, LocalOp):
            inputs = [env[(id(v), l)] for v, l in zip(step.op.operands, step.operand_layouts)]
            outs = _run_local(step, inputs, pm)
        elif isinstance(step, LocalControlFlow):
            inputs = [env[(id(v), l)] for v, l in zip(step.op.operands, step.operand_layouts)]
            outs = _run_control_flow(step, inputs, env, pm)
        elif isinstance(step, LocalManual):  # a shard_map's body, as written (manual.py): reads its arguments only
            inputs = [env[(id(v), l)] for v, l in zip(step.op.operands, step.operand_layouts)]
            outs = _run_block(step.block, {}, inputs, pm)
        else:
            env[(id(step.value), step.target)] = apply_plan(step.plan, env[(id(step.value), step.source)])
            continue
        for v, layout, x in zip(step.op.results, step.result_layouts, outs):
            env[(id(v), layout)] = x


def _run_block(block: LocalBlock, outer: dict, args, pm) -> list:
    """A region's block: reads the enclosing blocks' values from `outer` (traced closures)."""
    env = dict(outer)
    for v, layout, x in zip(block.args, block.arg_layouts, args):
        env[(id(v), layout)] = x
    _run_steps(block.steps, env, pm)
    return [env[(id(v), layout)] for v, layout in block.results]


def _run_control_flow(step: LocalControlFlow, inputs: list, env: dict, pm) -> list:
    """A while as jax.lax.while_loop, a case as jax.lax.switch, over the partitioned regions; the
    carried values and results are local shards in the step's layouts."""
    import jax
    if step.is_while:
        cond, body = step.blocks
        out = jax.lax.while_loop(lambda carry: _run_block(cond, env, carry, pm)[0],
                                 lambda carry: tuple(_run_block(body, env, carry, pm)), tuple(inputs))
        return list(out)
    branches = [lambda b=b: tuple(_run_block(b, env, (), pm)) for b in step.blocks]
    return list(jax.lax.switch(inputs[0], branches))


def local_body(partitioned: PartitionedProgram):
    """The per-device function: local argument shards -> local result shards."""
    pm = partitioned.mesh
    fn = partitioned.function

    def body(*args):
        env = {}
        for v, layout, x in zip(fn.args, partitioned.arg_layouts, args):
            env[(id(v), layout)] = x
        _run_steps(partitioned.steps, env, pm)
        return tuple(env[(id(v), layout)] for v, layout in partitioned.results)

    return body


def user_partition_spec(layout, pm):
    """The PartitionSpec of a whole (not partial) layout on the user's mesh: on a fine mesh
    (fine_mesh.py) each run of one axis's factors is that axis (PartitionError if a dim holds
    only part of an axis, which the user's mesh cannot say)."""
    if pm.pieces is None:
        return partition_spec(layout)
    from jax.sharding import PartitionSpec as P
    entries = []
    for axes in layout.dims:
        refs = pm.user_refs(axes)
        if any(r.is_sub_axis for r in refs):
            raise PartitionError(f"layout {layout} splits a dim over part of a mesh axis ({', '.join(map(str, refs))}), "
                                 f"which a PartitionSpec of mesh @{pm.name} cannot say")
        entries.append(tuple(r.name for r in refs) or None)
    return P(*entries)


def to_jax(partitioned: PartitionedProgram, jax_mesh, jit: bool = True):
    """A function of the global arguments returning the global results (a tuple), running the
    per-device program inside jax.shard_map over `jax_mesh` (axes named as the program's mesh)."""
    import jax

    pm = partitioned.mesh
    got = {str(n): int(s) for n, s in zip(jax_mesh.axis_names, jax_mesh.axis_sizes)}
    want = {a.name: a.size for a in pm.user_mesh.axes}
    if got != want:
        raise PartitionError(f"jax mesh {got} is not the program's mesh @{pm.name} {want}")
    ids = [int(d.id) for d in np.asarray(jax_mesh.devices).flat]
    if pm.user_mesh.device_ids is not None and list(pm.user_mesh.device_ids) != ids and \
            list(pm.user_mesh.device_ids) != list(range(len(ids))):
        raise PartitionError(f"jax mesh devices {ids} are not the program mesh's {list(pm.user_mesh.device_ids)}")
    if pm.pieces is not None:  # planned on the mesh cut at its sub-axes: the same devices, reshaped (fine_mesh.py)
        fine = [(n, size) for a in jax_mesh.axis_names for n, _, size in pm.pieces[str(a)]]
        jax_mesh = jax.sharding.Mesh(np.asarray(jax_mesh.devices).reshape([size for _, size in fine]),
                                     tuple(n for n, _ in fine))
    run = jax.shard_map(local_body(partitioned), mesh=jax_mesh,
                        in_specs=tuple(partition_spec(l) for l in partitioned.arg_layouts),
                        out_specs=tuple(partition_spec(l) for l in partitioned.result_layouts),
                        check_vma=False)
    return jax.jit(run) if jit else run
