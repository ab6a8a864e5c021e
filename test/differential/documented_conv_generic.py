"""Documented differences from Paddle 3.3.1 in the convolution, roi_align and generic rules
(merged into documented.DOCUMENTED). Each is excused only where the simulator proves spmdkit
right and Paddle wrong on that very case (or Paddle rejected a call that has a right answer).

Paddle's convolution rules label the dims with one fixed notation (input "nchw", filter "mchw",
output "nmhw"): the spatial letters are shared, so spatial and kernel splits pass through as if
elementwise, a channel-last output is labelled channel-first, and `groups` is ignored. Their
grads merge (filter, out_grad) for input_grad, (input, out_grad) for filter_grad and all three
for out_grad, so when the given layouts disagree the answers do not fit together.
"""
from .documented import MERGE_CONFLICT, rejected

# op -> (index of groups, index of data_format) among the attributes; conv2d has neither
_ATTRS = {"conv2d": (None, None), "conv3d": (3, 5), "depthwise_conv2d": (3, 5), "conv2d_transpose": (5, 7)}
_CHANNEL_LAST = ("NHWC", "NDHWC")


def _dims(t):
    return [] if t is None or isinstance(t, list) else [list(d) for d in t.placement.dims]


def _fmt(case):
    gi, fi = _ATTRS[case.rule]
    groups = 1 if gi is None else case.attrs[gi]
    return groups, (fi is not None and case.attrs[fi] in _CHANNEL_LAST)


def _image(t, channel_last):
    """(batch, channel, spatial dims) splits of an image tensor (input, out, out_grad)."""
    d = _dims(t)
    if not d:
        return [], [], []
    return (d[0], d[-1], d[1:-1]) if channel_last else (d[0], d[1], d[2:])


def _tensors(case):
    """(images, filter): the given image tensors and the filter."""
    images = [case.inputs[0]] + (case.inputs[2:3] if case.function == "grad" else []) + list(case.outputs)
    return images, case.inputs[1]


def _spatial_split(case, paddle=None):
    _, cl = _fmt(case)
    images, flt = _tensors(case)
    return any(any(_image(t, cl)[2]) for t in images) or any(_dims(flt)[2:])


def _out_channel_dim(case):
    return 1 if case.rule == "conv2d_transpose" else 0


def _grouped_channel_split(case, paddle=None):
    groups, cl = _fmt(case)
    images, flt = _tensors(case)
    return groups != 1 and (any(_image(t, cl)[1] for t in images) or any(_dims(flt)[:2]))


def _channel_last_labels(case, paddle=None):
    """Paddle labels a channel-last output (and out_grad) as channel-first."""
    _, cl = _fmt(case)
    if not cl:
        return False
    images, flt = _tensors(case)
    og = case.inputs[2] if case.function == "grad" else None
    return bool(_dims(flt)[_out_channel_dim(case)]) or any(bool(d) for d in _dims(og)[1:])


def _grad_layouts_disagree(case, paddle=None):
    """The given input, filter and out_grad do not already agree on their shared dims."""
    if case.function != "grad":
        return False
    _, cl = _fmt(case)
    x, flt, og = case.inputs[0], case.inputs[1], case.inputs[2]
    xn, xc, _ = _image(x, cl)
    gn, go, _ = _image(og, cl)
    f = _dims(flt)
    fo = f[_out_channel_dim(case)]
    fc = f[1 - _out_channel_dim(case)]
    return xn != gn or fo != go or xc != fc


def _depthwise_grad_partials(case, paddle=None):
    """A split batch (summed by filter_grad) or output-channel dim (summed by input_grad)."""
    if case.function != "grad":
        return False
    _, cl = _fmt(case)
    x, flt, og = case.inputs[0], case.inputs[1], case.inputs[2]
    return bool(_image(x, cl)[0] or _image(og, cl)[0] or _dims(flt)[0] or _image(og, cl)[1])


_SPATIAL = (_spatial_split, "Paddle splits spatial dims (and the filter's kernel dims) as if they were elementwise, "
                            "which needs halos")
_CHANNELS = (rejected(r"channel's dims mapping must be equal"),
             "Paddle rejects input and filter in-channels split differently; spmdkit keeps one split and reshards")
_GROUPS = (_grouped_channel_split, "Paddle ignores groups: it splits the channels of a grouped convolution, "
                                   "whose groups then do not line up with each rank's channel block")
_LAYOUT = (_channel_last_labels, "Paddle labels a channel-last output (and out_grad) channel-first, so the output "
                                 "channel split lands on a spatial dim")
_GRAD = (_grad_layouts_disagree, "Paddle infers input_grad from (filter, out_grad), filter_grad from (input, "
                                 "out_grad) and out_grad from all three, so when the given layouts disagree its "
                                 "grads do not fit the inputs it asks for")
_CONFLICT = (MERGE_CONFLICT, "Paddle rejects one dim split over two different mesh dims; spmdkit keeps the first")
_PARTIAL_GRAD = (rejected(r"only support partial on channel_dim for output"),
                 "Paddle rejects an out_grad partial over more than one mesh dim; spmdkit has the pending sums "
                 "reduced first, as for any partial input")


DOCUMENTED = {
    "conv2d": [_SPATIAL, _CHANNELS, _CONFLICT],
    "conv3d": [_SPATIAL, _CHANNELS, _GROUPS, _LAYOUT, _GRAD, _CONFLICT, _PARTIAL_GRAD],
    "conv2d_transpose": [_SPATIAL, _CHANNELS, _GROUPS, _LAYOUT, _GRAD, _CONFLICT, _PARTIAL_GRAD],
    "default_data_parallel": [(MERGE_CONFLICT, "Paddle rejects batch dims split over different mesh dims; "
                                               "spmdkit keeps the first tensor's split")],
    "roi_align": [(MERGE_CONFLICT, "Paddle rejects x and out_grad splitting the channels over different mesh dims; "
                                   "spmdkit keeps x's split")],
    "depthwise_conv2d": [
        _SPATIAL, _GROUPS, _LAYOUT, _GRAD, _CONFLICT,
        (rejected(r"Filter's dims_mapping on channel dim should always be -1"),
         "Paddle rejects a split filter in-channel dim (size 1) instead of replicating it"),
        (_depthwise_grad_partials, "Paddle's depthwise grad marks no partial sums: filter_grad sums over the batch "
                                   "and input_grad over the output channels"),
    ],
}
