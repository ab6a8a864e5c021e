"""Execute a propagated graph on simulated ranks with numpy: the proof that the shardings
propagation chose are executable.

For each op the executor picks one conflict-free sharding of the op's factors from the
propagated shardings (a result's axes first, then an operand's; an axis already taken by another
factor, or a split that does not divide a factor, is resharded away, as Shardy's
insert-explicit-reshards would), gives every rank its block of each operand under that sharding,
runs the op's kernel on the blocks, all-reduces over the axes of reduction factors, and compares
every rank's block with the same block of the dense result. Compound factors (reshape) are sliced
by reshaping a dim into its factors, so sub-axis splits are exercised exactly. Need-replication
and permutation factors run unsplit (a permutation factor, concatenate's or slice's resized dim,
would need a collective permute); a dim none of whose factors is split is passed whole, so a
factor sized unlike its dim (a permutation factor, Shardy's size-1 factor) is never sliced. The
partial results of reduction factors are combined with the op's reduce function (`combine`,
sum unless given: max for a reduce_max, product for a reduce_prod).
"""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import numpy as np


@dataclass
class OpCheck:
    op: int
    name: str
    factor_axes: dict       # factor id -> [(axis, pre, size)] the op ran with
    resharded: bool         # some tensor's propagated sharding differs from that choice
    max_error: float


def _overlaps(a, b):
    return a[0] == b[0] and a[1] < b[1] * b[2] and b[1] < a[1] * a[2]


def choose_factor_axes(graph, o):
    """One conflict-free factor sharding for op `o` from its tensors' propagated shardings, and
    whether a reshard is needed (a tensor holds axes for a factor that differ from the choice)."""
    _, proj = graph._g.op_projection(o)
    ins, outs, sizes, kinds = graph.ops[o]["factors"]
    n_in = len(ins)
    order = list(range(n_in, n_in + len(outs))) + list(range(n_in))  # results first
    chosen, used = {}, []
    for f, size in enumerate(sizes):
        axes = []
        if kinds[f] not in ("need_replication", "permutation"):
            for t in order:
                if proj and proj[t][f] is not None and proj[t][f]:
                    axes = list(proj[t][f])
                    break
        keep, prod = [], 1
        for a in axes:
            if any(_overlaps(a, u) for u in used) or size % (prod * a[2]):
                break
            keep.append(a)
            prod *= a[2]
        used += keep
        chosen[f] = keep
    resharded = any(proj[t][f] is not None and list(proj[t][f]) != chosen[f]
                    for t in range(len(proj)) for f in range(len(sizes))) if proj else False
    return chosen, resharded


def partial_axes(graph, o):
    """The mesh axes over which op `o`'s results are partial sums under the factor sharding it
    runs with: the axes of its reduction factors (need-replication factors never have any, so
    a softmax or a sort is never partial). An all-reduce over them, or a consumer that is linear
    in the value, completes the result."""
    chosen, _ = choose_factor_axes(graph, o)
    kinds = graph.ops[o]["factors"][3]
    mesh = next((graph.mesh_of(v) for v in graph.ops[o]["operands"] + graph.ops[o]["results"] if graph.mesh_of(v)), None)
    names = graph.meshes[mesh].axis_names if mesh else ()
    return [(names[a], pre, size) for f, k in enumerate(kinds) if k == "reduction" for a, pre, size in chosen[f]]


def _digit(coord, axis_size, pre, size):
    return (coord // (axis_size // (pre * size))) % size


def _block(array, dims, sizes, chosen, coords, mesh_sizes):
    """The rank's block of `array` whose dims carry factor lists `dims`."""
    expanded, slices, local = [], [], []
    for d, dim in enumerate(dims):
        if not any(chosen[f] for f in dim):  # unsplit: whole, whatever its factors' sizes
            expanded.append(array.shape[d])
            slices.append(slice(None))
            local.append(array.shape[d])
            continue
        extent = 1
        for f in dim:
            idx, n = 0, 1
            for axis, pre, size in chosen[f]:
                idx = idx * size + _digit(coords[axis], mesh_sizes[axis], pre, size)
                n *= size
            chunk = -(-sizes[f] // n)
            lo = min(sizes[f], idx * chunk)
            hi = min(sizes[f], lo + chunk)
            expanded.append(sizes[f])
            slices.append(slice(lo, hi))
            extent *= hi - lo
        local.append(extent)
    return array.reshape(expanded)[tuple(slices)].reshape(local)


def check_op(graph, o, dense_in, dense_out, kernel, rtol=1e-6, atol=1e-6, combine=np.add) -> OpCheck:
    ins, outs, sizes, kinds = graph.ops[o]["factors"]
    chosen, resharded = choose_factor_axes(graph, o)
    mesh_name = next((graph.mesh_of(v) for v in graph.ops[o]["operands"] + graph.ops[o]["results"] if graph.mesh_of(v)), None)
    mesh_sizes = list(graph.meshes[mesh_name].axis_sizes) if mesh_name else []
    reduction_axes = [a for f, k in enumerate(kinds) if k == "reduction" for a in chosen[f]]
    locals_by_rank, groups = {}, {}
    for coords in itertools.product(*[range(n) for n in mesh_sizes]):
        blocks = [_block(x, dims, sizes, chosen, coords, mesh_sizes) for x, dims in zip(dense_in, ins)]
        want = [_block(y, dims, sizes, chosen, coords, mesh_sizes) for y, dims in zip(dense_out, outs)]
        got = kernel(blocks, [w.shape for w in want])
        locals_by_rank[coords] = (got, want)
        key = list(coords)  # ranks that differ only on reduction axes hold partial sums of one block
        for axis, pre, size in reduction_axes:
            stride = mesh_sizes[axis] // (pre * size)
            key[axis] -= _digit(coords[axis], mesh_sizes[axis], pre, size) * stride
        groups.setdefault(tuple(key), []).append(coords)
    err = 0.0
    for members in groups.values():
        total = [functools.reduce(combine, [locals_by_rank[c][0][i] for c in members]) for i in range(len(outs))]
        for c in members:
            for got, want in zip(total, locals_by_rank[c][1]):
                if got.shape != want.shape:
                    return OpCheck(o, graph.ops[o]["name"], chosen, resharded, float("inf"))
                if want.size:
                    with np.errstate(invalid="ignore", over="ignore"):
                        same = (got == want) | (np.isnan(got) & np.isnan(want))
                        diff = np.where(same, 0.0, np.abs(got - want) - rtol * np.abs(want))
                    err = max(err, float(np.nan_to_num(diff, nan=np.inf).max()))  # a NaN difference is wrong
    return OpCheck(o, graph.ops[o]["name"], chosen, resharded, err)


def execute(graph, inputs: dict, kernels: dict, atol=1e-6, combine=None):
    """Runs the graph densely (ops in insertion order), then checks every op on simulated ranks.
    `inputs` maps value id -> array for values no op produces; `kernels` maps an op's index or
    name (index first) -> fn(arrays, result_shapes) -> list of arrays; `combine` likewise maps
    to the reduce function of the op's reduction factors (np.add when absent). Returns (dense
    values, [OpCheck])."""
    values = dict(inputs)
    checks = []
    combine = combine or {}
    for o, op in enumerate(graph.ops):
        kernel = kernels[o] if o in kernels else kernels[op["name"]]
        dense_in = [values[v] for v in op["operands"]]
        dense_out = kernel(dense_in, [tuple(graph.shape(v)) for v in op["results"]])
        for v, y in zip(op["results"], dense_out):
            values[v] = y
        reduce_fn = combine.get(o, combine.get(op["name"], np.add))
        checks.append(check_op(graph, o, dense_in, dense_out, kernel, atol=atol, combine=reduce_fn))
    return values, checks
