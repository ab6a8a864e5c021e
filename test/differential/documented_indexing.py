"""Documented differences from Paddle 3.3.1 in the indexing / embedding / MoE ops.

Each is excused only where the simulator proves spmdkit right and Paddle wrong (or Paddle
rejected a call that has a right answer); see documented.py. Predicates look at the placements
the case gave (tensor dims split over mesh dims) and at Paddle's verdict.
"""
from .documented import MERGE_CONFLICT, rejected, wrong


def _dims(t):
    return [] if t is None or isinstance(t, list) else [list(d) for d in t.placement.dims]


def _split(t, dims=None) -> bool:
    """Some dim of t (among `dims`, all by default) is split."""
    d = _dims(t)
    return any(d[i] for i in (range(len(d)) if dims is None else dims) if -len(d) <= i < len(d))


def _mesh(t, dims=None) -> set:
    d = _dims(t)
    return {m for i in (range(len(d)) if dims is None else dims) for m in d[i]}


def _all(*preds):
    return lambda case, paddle: all(p(case, paddle) for p in preds)


def _rank(t) -> int:
    return len(t.shape)


# ---- gather_nd ------------------------------------------------------------------------------
def _gather_nd_1d(case, paddle):
    x, index = case.inputs[0], case.inputs[1]
    return _rank(x) == 1 and _rank(index) == 1


def _gather_nd_shared_mesh(case, paddle):
    """A mesh dim splits both a batch dim of the index and a kept dim of x."""
    x, index = case.inputs[0], case.inputs[1]
    k = index.shape[-1]
    return bool(_mesh(index, range(_rank(index) - 1)) & _mesh(x, range(k, _rank(x))))


# ---- scatter / scatter_nd_add ------------------------------------------------------------------
def _scatter_rows_split(case, paddle):
    """The index or the updates' rows (dim 0) are split."""
    return _split(case.inputs[1], [0]) or _split(case.inputs[2], [0])


def _scatter_nd_misaligned(case, paddle):
    """scatter's rule pairs the updates' dim i with x's dim i, which is the op's layout only for an
    index of shape [M, 1] with updates shaped like x."""
    x, index, updates = case.inputs
    return not (_rank(index) == 2 and index.shape[-1] == 1 and _rank(updates) == _rank(x))


def _scatter_nd_coordinate_split(case, paddle):
    """scatter's rule gives the index's dim i the updates' dim i (the output's, in reverse): here
    the coordinate dim (the index's last) pairs with a split dim."""
    index = case.inputs[1]
    source = case.outputs[0] if case.function == "reverse" else case.inputs[2]
    r = _rank(index)
    return r >= 2 and _rank(source) >= r and _split(source, [r - 1])


def _scatter_nd_batch_split(case, paddle):
    index, updates = case.inputs[1], case.inputs[2]
    return _split(index, range(_rank(index) - 1)) or _split(updates, [0])


# ---- index_put ----------------------------------------------------------------------------
def _index_put_value_pairs_split_dim(case, paddle):
    """value has x's last size (>1), the indices leave x's last dim over, and that dim is split."""
    x, indices, value = case.inputs[0], case.inputs[1], case.inputs[2]
    return len(indices) < _rank(x) and value.shape[0] > 1 and _split(x, [-1])


def _index_put_rest_split(case, paddle):
    """A dim of x that the indices leave over is split."""
    x, indices = case.inputs[0], case.inputs[1]
    return _split(x, range(len(indices), _rank(x)))


# ---- c_embedding ----------------------------------------------------------------------------
def _c_embedding_grad_columns_differ(case, paddle):
    weight, out_grad = case.inputs[0], case.inputs[2]
    return _dims(weight)[1] != _dims(out_grad)[-1]


def _c_embedding_grad_ids_co_split(case, paddle):
    return any(len(d) > 1 for d in _dims(case.inputs[1]))


# ---- moe_combine ----------------------------------------------------------------------------
def _moe_token_or_row_split(case, paddle):
    """x's rows, or the token dim of combine_weights / scatter_index (/ grad_y), are split."""
    ts = case.inputs
    return _split(ts[0], [0]) or any(_split(t, [0]) for t in ts[1:])


def _moe_k_split(case, paddle):
    return _split(case.inputs[1], [1]) or _split(case.inputs[2], [1])


def _moe_hidden_split(case, paddle):
    return _split(case.inputs[0], [1]) or (len(case.inputs) > 3 and _split(case.inputs[3], [1]))


# ---- gather / take_along_axis (moved from documented_layout_index.py) ----------------------
def _gather_index_reuses_x_mesh(case, paddle):
    """The index is split over a mesh dim that also splits one of x's other dims."""
    x, index = case.inputs[0], case.inputs[1]
    axis = case.attrs[0] % max(_rank(x), 1)
    return bool(_mesh(index) & _mesh(x, [d for d in range(_rank(x)) if d != axis]))


def _take_along_axis_index_axis_split(case, paddle):
    """The grad's index or out_grad is split along the axis."""
    axis = case.attrs[0] % max(_rank(case.inputs[0]), 1)
    return _split(case.inputs[1], [axis]) or _split(case.inputs[2], [axis])


def _fn(name):
    return lambda case, paddle: case.function == name


DOCUMENTED = {
    "gather": [
        (_all(_fn("forward"), _gather_index_reuses_x_mesh, wrong(r"local out has shape")),
         "Paddle keeps the index split on a mesh dim that one of x's other dims also splits, so the "
         "output, which can carry only one of them, does not match the shards"),
    ],
    "take_along_axis": [
        (lambda case, paddle: case.attrs[0] < 0 and paddle.reason.startswith("rejected: basic_string::replace"),
         "Paddle rejects a negative axis (basic_string::replace)"),
        (_all(_fn("forward"), MERGE_CONFLICT),
         "Paddle rejects a dim split over different mesh dims by x and the index; spmdkit resolves it"),
        (_all(_fn("grad"), _take_along_axis_index_axis_split, wrong(r"x_grad")),
         "Paddle leaves x_grad whole where the index's (and out_grad's) split axis makes it a "
         "partial sum"),
    ],
    "embedding": [
        (_all(_fn("forward"), rejected(r"Multiple Tensor Axes \[\w,\w\] is sharded by same mesh dimension")),
         "Paddle rejects ids and table split over one mesh dim; spmdkit keeps the table's split"),
        (_all(_fn("forward"), rejected(r"Row-wise parallel of embedding table does NOT support Padding Idx")),
         "Paddle rejects a row-split table with a padding id; the rank that holds the padding row "
         "zeroes it, so the split is right"),
    ],
    "gather_nd": [
        (_all(_fn("forward"), _gather_nd_1d, wrong(r"has 1 dims, the tensor has 0")),
         "for a 1-D x and index Paddle gives the 0-D output a one-dim mapping"),
        (_all(_fn("forward"), _gather_nd_shared_mesh, wrong(r"over the same mesh dim")),
         "Paddle splits the output over one mesh dim twice when the index's batch dims and x's kept "
         "dims use it (it does not merge them)"),
    ],
    "scatter": [
        (_all(_fn("forward"), _scatter_rows_split, wrong(r"after reducing")),
         "Paddle splits the index and the updates' rows and marks the output partial, but each rank "
         "also holds the rows of x its updates do not write, so the sum counts them once per rank"),
        (_all(_fn("forward"), MERGE_CONFLICT),
         "Paddle rejects an index and updates whose rows are split over different mesh dims; spmdkit "
         "keeps the rows whole"),
        (_all(_fn("forward"), _scatter_rows_split, wrong(r"the kernel fails on its shards"),
              lambda case, paddle: case.inputs[2].shape[0] > case.inputs[1].shape[0]),
         "Paddle splits the index and the updates' rows alike when the updates have more rows than "
         "the index: the blocks no longer pair an id with its row, and a rank runs out of rows"),
    ],
    "scatter_nd_add": [
        (rejected(r"Index's rank \[\d+\] should be less or equal to Updates' rank"),
         "Paddle rejects updates of lower rank than the index (x has fewer dims left than the index "
         "has batch dims plus one), which scatter_nd_add allows"),
        (_all(_scatter_nd_misaligned, lambda c, p: not p.reason.startswith("rejected:")),
         "Paddle reuses scatter's rule, pairing the updates' dim i with x's dim i, which is not "
         "scatter_nd_add's layout unless the index has shape [M, 1]"),
        (_all(_scatter_nd_coordinate_split, lambda c, p: not p.reason.startswith("rejected:")),
         "Paddle reuses scatter's rule, which splits the index's coordinate dim like the updates' "
         "dim of the same position"),
        (_all(_fn("reverse"), wrong(r"input index: \{[^}]*\} has \d+ dims, the tensor has \d+")),
         "Paddle's reverse gives the index a dims mapping of the wrong length"),
        (_all(_fn("forward"), _scatter_nd_batch_split, wrong(r"after reducing")),
         "Paddle splits the update batch and marks the output partial, which sums x once per rank"),
        (_all(_fn("forward"), MERGE_CONFLICT),
         "Paddle rejects an index and updates whose batch is split over different mesh dims"),
    ],
    "put_along_axis": [
        (lambda case, paddle: case.attrs[0] < 0 and paddle.reason.startswith("rejected: basic_string::replace"),
         "Paddle rejects a negative axis (basic_string::replace)"),
        (MERGE_CONFLICT,
         "Paddle rejects a dim split over different mesh dims by two of its tensors (its '1' axis "
         "also joins every dim where the index is shorter than x); spmdkit resolves it"),
    ],
    "index_put": [
        (_all(_fn("forward"), _index_put_value_pairs_split_dim, wrong(r"")),
         "Paddle keeps x's last dim split but leaves value, which pairs with it, whole: the shards no "
         "longer broadcast"),
        (_all(_fn("grad"), _index_put_rest_split, wrong(r"value_grad")),
         "Paddle leaves value_grad whole where the dims of x the indices leave over are split (a "
         "sum over them, or value's own dim)"),
    ],
    "moe_gate_dispatch": [
        (rejected(r"Attribute cast error .* expected attribute type is `l`"),
         "Paddle 3.3.1's rule takes int64 k and capacity, which its Python binding cannot pass "
         "(every Python int becomes int32), so it rejects every call"),
    ],
    "c_embedding": [
        (_all(_fn("forward"), rejected(r"Multiple Tensor Axes \[\w,\w\] is sharded by same mesh dimension")),
         "Paddle rejects ids and table split over one mesh dim; spmdkit keeps the table's split"),
        (_all(_fn("grad"), rejected(r"Trying to Set dim \d+ as Partial which is a Sharding dim")),
         "Paddle rejects ids split over the mesh dim that splits the table's rows (it would mark the "
         "grad partial on a dim it splits); spmdkit keeps the rows' split"),
        (_all(_fn("grad"), rejected(r"Multiple Tensor Axes \[\w,\w\] is sharded by same mesh dimension")),
         "Paddle rejects ids and out_grad that use one mesh dim for two dims; spmdkit resolves it"),
        (_all(_fn("grad"), MERGE_CONFLICT),
         "Paddle rejects ids and out_grad whose batch dims are split differently; spmdkit resolves it"),
        (_all(_fn("grad"), rejected(r"Trying to Set dim \d+ as Partial which is already a Partial dim")),
         "Paddle's grad rule rejects a partial table (it marks weight_grad partial on the table's own "
         "partial mesh dim); spmdkit reads the table reduced"),
        (_all(_fn("grad"), _c_embedding_grad_ids_co_split, wrong(r"")),
         "Paddle returns ids split over several mesh dims unchanged while out_grad's matching dim gets "
         "only their 1-D view, so the shards do not line up"),
        (_all(_fn("grad"), _c_embedding_grad_columns_differ, wrong(r"weight_grad has shape")),
         "Paddle gives weight_grad the table's column split while out_grad keeps its own, so the "
         "shards do not match"),
    ],
    "moe_combine": [
        (_all(_moe_token_or_row_split, lambda c, p: not p.reason.startswith("rejected:")),
         "Paddle labels x's rows with the token dim, so it splits x's rows (addressed by global ids "
         "in scatter_index) when tokens are split"),
        (_all(_fn("forward"), _moe_k_split, wrong(r"after reducing")),
         "Paddle marks y partial on mesh dim 1 whatever mesh dim splits k"),
        (_all(_fn("forward"), rejected(r"Trying to Set dim 1 as Partial which is a Sharding dim")),
         "Paddle marks y partial on mesh dim 1 when k is split, and rejects the call when mesh dim 1 "
         "splits y"),
        (_all(_fn("grad"), _moe_hidden_split, wrong(r"combine_weights_grad")),
         "Paddle leaves combine_weights_grad whole although it sums over the split hidden dim"),
        (MERGE_CONFLICT,
         "Paddle rejects a dim split over different mesh dims by two tensors (x's rows count as "
         "tokens); spmdkit resolves it"),
    ],
}
