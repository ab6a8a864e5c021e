"""Documented differences from Paddle 3.3.1 for matmul-like, norm, loss, attention and embedding
rules (merged into documented.DOCUMENTED). Each is excused only where the simulator proves
spmdkit right and Paddle wrong (or Paddle rejects a call that has a right answer)."""
from .documented import MERGE_CONFLICT, rejected, wrong


def _split(t, dim) -> bool:
    return t is not None and not isinstance(t, list) and bool(t.placement.dims[dim % len(t.shape)])


def _ce_class_axis_split(case, paddle=None) -> bool:
    axis = case.attrs[-1]
    soft = case.attrs[0]
    tensors = [case.inputs[0]] + ([case.inputs[1]] if soft else []) + (case.outputs[:1] if case.outputs else [])
    return any(_split(t, axis) for t in tensors) or _label_conflict(case)


def _label_conflict(case, paddle=None) -> bool:
    """Two tensors split one dim over different mesh dims: Paddle's legacy merge raises."""
    ts = [t for t in list(case.inputs) + list(case.outputs) if t is not None and not isinstance(t, list)]
    for d in range(min(len(t.shape) for t in ts) if ts else 0):
        seen = {t.placement.dims[d][0] for t in ts if len(t.shape) == len(ts[0].shape) and t.placement.dims[d]}
        if len(seen) > 1:
            return True
    return False


DOCUMENTED = {
    "bmm": [
        (lambda case, paddle: case.function == "grad" and rejected(r"matmul grad infer spmd .* verify error")(case, paddle),
         "Paddle's bmm grad re-checks its two matmul inferences against the given out_grad and rejects "
         "calls where they differ ('verify error'); spmdkit gives out_grad the forward output's layout"),
    ],
    "cross_entropy_with_softmax": [
        (_ce_class_axis_split,
         "Paddle keeps a split class axis (right only with a communicating kernel, "
         "c_softmax_with_cross_entropy) or rejects it; spmdkit makes the class axis whole"),
    ],
    "flash_attention": [
        (lambda case, paddle: case.function == "reverse",
         "Paddle's flash_attention reverse echoes a softmax layout its inferred inputs cannot produce"),
        (lambda case, paddle: True, "Paddle rejects a broadcast (size-1) mask head dim or a split it cannot merge; spmdkit resolves it"),
    ],
    "fused_rms_norm": [
        (lambda case, paddle: case.function == "reverse",
         "Paddle rejects out and invvar splitting one dim over different mesh dims; spmdkit keeps the first"),
    ],
}


# ---- einsum, linear, gemm epilogue, param-grad add, norms, c_softmax losses, rope ------------


def _both(*preds):
    return lambda case, paddle: all(p(case, paddle) for p in preds)


def _einsum_diagonal(case, paddle=None) -> bool:
    """Some operand repeats a label (a diagonal), which Paddle's rule turns into its '1' axis."""
    ops = case.attrs[-1].replace(" ", "").split("->")[0].replace("...", "").split(",")
    return any(len(set(o)) < len(o) for o in ops)


def _einsum_broadcast(case, paddle=None) -> bool:
    """Some operand has a size-1 dim for a label another operand has larger (it broadcasts)."""
    xs = [t for t in case.inputs[0] if t is not None]
    ops = case.attrs[-1].replace(" ", "").split("->")[0].split(",")
    sizes: dict = {}
    for o, t in zip(ops, xs):
        labels = o.replace("...", "")
        for l, n in zip(labels, t.shape[len(t.shape) - len(labels):]):
            sizes.setdefault(l, set()).add(n)
    return any(1 in s and len(s) > 1 for s in sizes.values())


def _absent(pos):
    return lambda case, paddle: case.inputs[pos] is None


def _given(pos):
    return lambda case, paddle: case.inputs[pos] is not None


DOCUMENTED.update({
    "einsum": [
        (rejected(r"only support len\(operands\) between"),
         "Paddle's einsum rule takes at most two operands; an n-ary einsum has a right answer"),
        (MERGE_CONFLICT, "Paddle rejects one label split over two different mesh dims; spmdkit keeps the first"),
        (_both(_einsum_diagonal, wrong(r"is not its shard")),
         "Paddle's diagonal label (its '1' axis) takes part in the merge and, summed, leaves the output or a "
         "grad partial over a mesh dim no input splits"),
        (_both(_einsum_broadcast, wrong(r"local \w+(\[\d+\])? has shape")),
         "Paddle splits a size-1 dim that broadcasts against a larger one of the same label: the ranks past "
         "its one row hold nothing"),
        (rejected(r"as Partial which is a Sharding dim"),
         "Paddle's einsum grad takes a grad's partial mesh dims from the other operand as given, not as "
         "merged, and fails making a split mesh dim partial"),
    ],
    "fused_gemm_epilogue": [
        (MERGE_CONFLICT, "Paddle rejects k split over two different mesh dims by x and y; spmdkit keeps x's"),
        (wrong(r"after reducing"),
         "Paddle 3.3.1 leaves the output partial when k stays split, but the epilogue's activation of a partial "
         "sum is not the sum of activations; spmdkit makes m, k and n whole instead (as Paddle's own newer unit "
         "test expects)"),
    ],
    "linear_v2": [
        (rejected(r"transpose_weight in linear_v2 should be false"),
         "Paddle's linear_v2 rule rejects a transposed weight, which has a right answer"),
        (_both(_absent(2), rejected(r"ndim of bias should be 1")),
         "Paddle's linear_v2 rule rejects an absent bias (linear without bias)"),
        (MERGE_CONFLICT, "Paddle rejects k split over two different mesh dims by input and weight; spmdkit keeps the input's"),
    ],
    "fused_linear_param_grad_add": [
        (_both(_given(2), rejected(r"dweight_dist_attr \[")),
         "Paddle rejects a given dweight whose layout is not the grad's; spmdkit asks for it in the grad's layout, "
         "partial status included"),
        (_both(_given(3), rejected(r"dbias_dist_attr \[")),
         "Paddle rejects a given dbias whose layout is not the grad's; spmdkit asks for it in the grad's layout, "
         "partial status included"),
        (wrong(r"dbias_out"),
         "Paddle lays dbias_out out from dout's given layout, not from the layout it asks dout to have"),
    ],
    "batch_norm": [
        (lambda case, paddle: _split(case.inputs[0], 1) and wrong(r"kernel fails on its shards|local out has shape")(case, paddle),
         "Paddle keeps x's channels split but asks for scale and bias whole, which a rank's channel shard cannot use"),
    ],
    "group_norm": [
        (_both(lambda case, paddle: case.inputs[1] is None or case.inputs[2] is None,
               rejected(r"ndim of (scale|bias) in group_norm should be 1")),
         "Paddle's group_norm rule rejects an absent scale or bias, which group_norm allows"),
    ],
    "instance_norm": [
        (_both(lambda case, paddle: case.inputs[1] is None or case.inputs[2] is None,
               rejected(r"ndim of (scale|bias) in instance_norm should be 1")),
         "Paddle's instance_norm rule rejects an absent scale or bias, which instance_norm allows"),
        (rejected(r"ndim of saved_(mean|variance) in instance_norm should be 2"),
         "Paddle's instance_norm grad rule rejects the 1-D saved_mean / saved_variance ([N*C]) that "
         "Paddle's own kernel produces"),
        (lambda case, paddle: _split(case.inputs[0], 1) and wrong(r"kernel fails on its shards|local \w+ has shape|"
                                                                  r"is not its shard")(case, paddle),
         "Paddle keeps x's channels split but asks for scale and bias whole (and makes their grads whole "
         "partial sums), which a rank's channel shard cannot use or produce"),
        (lambda case, paddle: len(case.inputs[0].shape) > 4 and wrong(r"is not its shard")(case, paddle),
         "Paddle replicates only dims 2 and 3 of x, so a split spatial dim past them stays split"),
    ],
    "c_softmax_with_cross_entropy": [
        (MERGE_CONFLICT, "Paddle rejects x and label splitting one dim over different mesh dims; spmdkit keeps x's"),
    ],
    "c_softmax_with_multi_label_cross_entropy": [
        (MERGE_CONFLICT, "Paddle rejects x, label and smooth_weight splitting one dim over different mesh dims; "
                         "spmdkit keeps the first"),
        (lambda case, paddle: case.attrs[1] and wrong(r"local loss")(case, paddle),
         "Paddle sums the loss over a split label axis without marking it partial"),
    ],
    "fused_rotary_position_embedding": [
        (MERGE_CONFLICT, "Paddle rejects q, k, v and position_ids splitting one dim over different mesh dims; "
                         "spmdkit keeps the first"),
    ],
})
