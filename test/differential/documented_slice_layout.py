"""Documented differences from Paddle 3.3.1 in the layout / slice / concat / split ops.

Each is excused only where the simulator proves spmdkit right and Paddle wrong (or Paddle
rejected a call that has a right answer); see documented.py.
"""
from .documented import MERGE_CONFLICT, rejected, wrong


def _dims(t):
    return [] if t is None or isinstance(t, list) else [tuple(d) for d in t.placement.dims]


def _co_split(t) -> bool:
    return any(len(d) > 1 for d in _dims(t))


def _both(*preds):
    return lambda case, paddle: all(p(case, paddle) for p in preds)


def _fn(name):
    return lambda case, paddle: case.function == name


def _tile_lead_split(case, paddle):
    """Reverse: the output's leading dims (repeat_times entries beyond x's rank) are split."""
    x, out = case.inputs[0], case.outputs[0]
    lead = len(out.shape) - len(x.shape)
    return any(_dims(out)[:lead])


def _x_co_split(case, paddle):
    return _co_split(case.inputs[0])


def _decrease(case, paddle):
    return bool(case.attrs[4])  # slice's decrease_axis


def _strided_last_split(case, paddle):
    """strided_slice of the last dim alone, that dim split in the input."""
    x, axes = case.inputs[0], case.attrs[0]
    r = len(x.shape)
    return len(axes) == 1 and r > 0 and axes[0] % r == r - 1 and bool(_dims(x)[-1])


def _partial_input(case, paddle):
    tensors = [t for a in case.inputs for t in (a if isinstance(a, list) else [a]) if t is not None]
    return any(t.placement.partial for t in tensors)


def _out_co_split(case, paddle):
    return any(_co_split(t) for t in case.outputs)


def _partial_output(case, paddle):
    return any(t.placement.partial for t in case.outputs)


def _joined_axis_split(rank_of_axis):
    """Reverse: the output is split along the joined (concat / stack) axis."""
    def pred(case, paddle):
        out = case.outputs[0]
        r = len(out.shape)
        return bool(_dims(out)[rank_of_axis(case) % r])
    return pred


DOCUMENTED = {
    "tile": [(_both(_fn("reverse"), _tile_lead_split, wrong(".")),
              "Paddle's tile reverse echoes a split of the output's new leading dims, which every rank "
              "computes whole from its x")],
    "roll": [(_both(_fn("grad"), MERGE_CONFLICT),
              "Paddle's roll grad rejects x and out_grad splitting one dim over different mesh dims; "
              "spmdkit keeps x's")],
    "pad": [(_both(_fn("forward"), _x_co_split, wrong(".")),
             "Paddle's pad keeps a dim of x split over several mesh dims but splits the output over one"),
            (_both(_fn("grad"), wrong("input placements")),
             "Paddle's pad grad rule takes x and out_grad but returns a placement for out_grad only")],
    "one_hot": [(_both(_fn("forward"), _x_co_split, wrong(".")),
                 "Paddle's one_hot keeps a dim of x split over several mesh dims but splits the output "
                 "over one")],
    "slice": [(_both(_fn("forward"), _decrease, wrong("has \\d+ dims, the tensor has")),
               "Paddle's slice ignores decrease_axis and gives the output the input's rank"),
              (_both(_fn("reverse"), _decrease, rejected("rank .* is not equal to the Tensor Output's rank")),
               "Paddle's slice reverse ignores decrease_axis and rejects an output of the lower rank")],
    "strided_slice": [(_both(_fn("forward"), _strided_last_split, wrong(".")),
                       "Paddle keeps the last dim split when its shard size divides by the stride, also "
                       "where the slice does not start at 0, stops early, or the shards are uneven"),
                      (_both(_fn("grad"), MERGE_CONFLICT),
                       "Paddle's strided_slice grad rejects input and out_grad splitting one dim over "
                       "different mesh dims; spmdkit keeps out_grad's")],
    "concat": [(_both(_fn("forward"), _partial_input, wrong(".")),
                "Paddle's concat keeps the inputs' partial status but declares the output not partial"),
               (_both(_fn("reverse"), _joined_axis_split(lambda c: c.attrs[0]), wrong(".")),
                "Paddle's concat reverse echoes a split of the concat axis that its replicated inputs "
                "cannot produce"),
               (_both(_fn("reverse"), _partial_output, wrong(".")),
                "Paddle's concat reverse echoes a partial output but infers inputs that are not partial"),
               (_both(_fn("reverse"), _out_co_split, wrong(".")),
                "Paddle's concat reverse reads an output dim split over several mesh dims as one, but "
                "echoes the output unchanged")],
    "stack": [(_both(_fn("reverse"), _joined_axis_split(lambda c: c.attrs[0]), wrong(".")),
               "Paddle's stack reverse echoes a split of the new axis, which every rank computes whole"),
              (_both(_fn("reverse"), _partial_output, wrong(".")),
               "Paddle's stack reverse echoes a partial output but infers inputs that are not partial"),
              (_both(_fn("reverse"), _out_co_split, wrong(".")),
               "Paddle's stack reverse reads an output dim split over several mesh dims as one, but echoes "
               "the output unchanged")],
    "add_n": [(MERGE_CONFLICT, "Paddle rejects inputs splitting one dim over different mesh dims; "
                               "spmdkit keeps the first input's")],
    "split": [(_both(_fn("reverse"), MERGE_CONFLICT),
               "Paddle rejects outputs splitting one dim over different mesh dims; spmdkit keeps the first's")],
    "split_with_num": [(_both(_fn("reverse"), MERGE_CONFLICT),
                        "Paddle rejects outputs splitting one dim over different mesh dims; spmdkit keeps the "
                        "first's")],
    "unbind": [(_both(_fn("forward"), _partial_input, wrong(".")),
                "Paddle's unbind keeps x's partial status but declares the outputs not partial"),
               (_both(_fn("reverse"), MERGE_CONFLICT),
                "Paddle rejects outputs splitting one dim over different mesh dims; spmdkit keeps the first's")],
}
