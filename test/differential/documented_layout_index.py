"""Documented differences from Paddle 3.3.1 in the layout / slicing / conv ops (gather and
take_along_axis: documented_indexing.py).

Each is excused only where the simulator proves spmdkit right and Paddle wrong (or Paddle
rejected a call that has a right answer); see documented.py.
"""


def _dims(t):
    return [] if t is None or isinstance(t, list) else list(t.placement.dims)


def _mesh_dims(dims):
    return {m for d in dims for m in d}


def _conv_spatial_or_channel(case, paddle=None):
    inp, flt = case.inputs[0], case.inputs[1]
    spatial = [d for t in [inp, flt] + list(case.outputs) for d in _dims(t)[2:]]
    return any(spatial) or _dims(inp)[1] != _dims(flt)[1]


DOCUMENTED = {
    "conv2d": [(_conv_spatial_or_channel,
                "Paddle splits spatial dims (and the filter's kernel dims) as if they were elementwise, "
                "which needs halos; it rejects in-channels of input and filter split differently")],
}
