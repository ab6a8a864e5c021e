"""Documented differences from Paddle 3.3.1 in the layout / slicing / indexing ops.

Each is excused only where the simulator proves spmdkit right and Paddle wrong (or Paddle
rejected a call that has a right answer); see documented.py.
"""


def _dims(t):
    return [] if t is None or isinstance(t, list) else list(t.placement.dims)


def _mesh_dims(dims):
    return {m for d in dims for m in d}


def _gather_index_reuses_x_mesh(case, paddle=None):
    x, index = case.inputs[0], case.inputs[1]
    axis = case.attrs[0] % max(len(x.shape), 1)
    others = [d for k, d in enumerate(_dims(x)) if k != axis]
    return bool(_mesh_dims(_dims(index)) & _mesh_dims(others)) or bool(
        case.outputs and _mesh_dims(_dims(case.outputs[0])))


def _take_along_axis(case, paddle=None):
    x, index = case.inputs[0], case.inputs[1]
    if case.attrs[0] < 0:
        return True  # Paddle: "basic_string::replace" on any negative axis
    axis = case.attrs[0]
    if case.function == "grad":
        return bool(_dims(index)[axis] or _dims(case.inputs[2])[axis])
    # the same dim of x and index split over different mesh dims: Paddle raises NotImplementedError
    return any(a and b and a != b for k, (a, b) in enumerate(zip(_dims(x), _dims(index))) if k != axis)


DOCUMENTED = {
    "gather": [(_gather_index_reuses_x_mesh,
                "Paddle keeps the index split on a mesh dim that x's other dims also split (the output "
                "cannot carry both); its reverse echoes output splits the inputs do not produce")],
    "take_along_axis": [(_take_along_axis,
                         "Paddle rejects a negative axis (basic_string::replace) and a dim split over two mesh "
                         "dims by x and index; its grad leaves x_grad replicated where a split index axis makes "
                         "it a partial sum")],
}
