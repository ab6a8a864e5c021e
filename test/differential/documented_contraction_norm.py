"""Documented differences from Paddle 3.3.1 for matmul-like, norm, loss, attention and embedding
rules (merged into documented.DOCUMENTED). Each is excused only where the simulator proves
spmdkit right and Paddle wrong (or Paddle rejects a call that has a right answer)."""


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
        (lambda case, paddle: case.function == "grad",
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
