"""Random programs for property tests: a mesh, a chain of ops from a small op family whose
factor tables cover every kind the engine handles (pass-through, reduction, need-replication,
compound reshape factors, broadcast, blocked), numpy kernels for each, and random user
annotations (open/closed dims, sub-axes, priorities, replicated axes, sharding constraints)."""
from __future__ import annotations

import numpy as np

from .graph import Graph


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# op name -> kernel(arrays, result_shapes) -> [arrays]; works on whole tensors and on blocks.
KERNELS = {
    "add": lambda a, s: [a[0] + a[1]],
    "multiply": lambda a, s: [a[0] * a[1]],
    "tanh": lambda a, s: [np.tanh(a[0])],
    "matmul": lambda a, s: [a[0] @ a[1]],
    "transpose": lambda a, s: [a[0].T],
    "reduce_sum": lambda a, s: [a[0].sum(axis=-1)],
    "broadcast": lambda a, s: [np.broadcast_to(a[0][..., None], s[0]).copy()],
    "reshape": lambda a, s: [a[0].reshape(s[0])],
    "softmax": lambda a, s: [_softmax(a[0])],
    "sharding_constraint": lambda a, s: [a[0]],
    "opaque": lambda a, s: [a[0] * 2.0],
}

_DIMS = (2, 4, 6, 8, 12, 16)


def _random_sharding(rng, g, mesh, shape):
    """A valid Shardy sharding text for `shape` on `mesh`, or None (no annotation)."""
    spec = g.meshes[mesh]
    free = list(range(len(spec.axis_names)))
    rng.shuffle(free)
    dims = [[] for _ in shape]
    for a in free:
        roll = rng.random()
        if roll < 0.45:
            d = int(rng.integers(len(shape))) if shape else None
            if d is None:
                continue
            name = f'"{spec.axis_names[a]}"'
            size = spec.axis_sizes[a]
            if size == 4 and rng.random() < 0.3:  # a sub-axis
                name += f":({1 if rng.random() < 0.5 else 2})2"
            dims[d].append(name)
    texts = []
    for axes in dims:
        items = list(axes)
        if rng.random() < 0.6:
            items.append("?")
        prio = f"p{int(rng.integers(3))}" if axes and rng.random() < 0.3 else ""
        texts.append("{" + ", ".join(items) + "}" + prio)
    return "[" + ", ".join(texts) + "]"


def add_random_mesh(rng, g: Graph, name: str = "mesh") -> None:
    """A mesh of 1 to 3 axes x, y, z of size 2 or 4, at most 16 devices."""
    n_axes = int(rng.integers(1, 4))
    sizes = [int(rng.choice([2, 4])) for _ in range(n_axes)]
    while np.prod(sizes) > 16:
        sizes[int(np.argmax(sizes))] = 2
    g.mesh(name, [(a, s) for a, s in zip("xyz", sizes)])


def random_program(seed: int, n_ops: int = 8, annotate: float = 0.35):
    """Returns (graph, inputs) with inputs a dict value id -> array for the graph's free values."""
    rng = np.random.default_rng(seed)
    g = Graph()
    add_random_mesh(rng, g)
    inputs = {}

    def new_input(shape):
        text = _random_sharding(rng, g, "mesh", shape) if rng.random() < annotate else None
        v = g.value(shape, text, name=f"in{len(inputs)}")
        inputs[v] = rng.standard_normal(shape)
        return v

    def maybe_annotated(shape):
        return _random_sharding(rng, g, "mesh", shape) if rng.random() < annotate * 0.5 else None

    live = [new_input([int(rng.choice(_DIMS)) for _ in range(int(rng.integers(1, 4)))])]
    for _ in range(n_ops):
        x = live[int(rng.integers(len(live)))]
        shape = g.shape(x)
        r = len(shape)
        kind = rng.choice(["add", "multiply", "tanh", "matmul", "transpose", "reduce_sum", "broadcast",
                           "reshape", "softmax", "constraint", "opaque"])
        letters = "abc"[:r]
        if kind in ("add", "multiply"):
            same = [v for v in live if g.shape(v) == shape and v != x]
            y = same[int(rng.integers(len(same)))] if same and rng.random() < 0.5 else new_input(shape)
            out = g.op(kind, f"{letters},{letters}->{letters}", [x, y], [g.value(shape, maybe_annotated(shape))])
        elif kind == "tanh":
            out = g.op("tanh", f"{letters}->{letters}", [x], [g.value(shape, maybe_annotated(shape))])
        elif kind == "matmul" and r == 2:
            n = int(rng.choice(_DIMS))
            w = new_input([shape[1], n])
            out = g.op("matmul", "ik,kj->ij", [x, w], [g.value([shape[0], n], maybe_annotated([shape[0], n]))],
                       reduction="k")
        elif kind == "transpose" and r == 2:
            out = g.op("transpose", "ij->ji", [x], [g.value(shape[::-1], maybe_annotated(shape[::-1]))])
        elif kind == "reduce_sum" and r >= 2:
            out = g.op("reduce_sum", f"{letters}->{letters[:-1]}", [x], [shape[:-1]], reduction=letters[-1])
        elif kind == "broadcast" and r <= 2:
            n = int(rng.choice(_DIMS))
            out = g.op("broadcast", f"{letters}->{letters}z", [x], [shape + [n]])
        elif kind == "reshape" and r >= 2 and rng.random() < 0.5:  # merge the last two dims
            head = letters[:-2]
            out = g.op("reshape", f"{letters}->{head}({letters[-2:]})", [x], [shape[:-2] + [shape[-2] * shape[-1]]])
        elif kind == "reshape" and r <= 2:  # split the last dim in two
            last = shape[-1]
            split = [d for d in (2, 3, 4) if last % d == 0 and last // d > 1]
            if not split:
                continue
            a = int(rng.choice(split))
            head = letters[:-1]
            out = g.op("reshape", f"{head}(yz)->{head}yz", [x], [shape[:-1] + [a, last // a]], sizes={"y": a, "z": last // a})
        elif kind == "softmax":
            out = g.op("softmax", f"{letters}->{letters}", [x], [shape], need_replication=letters[-1])
        elif kind == "constraint":
            out = g.constraint(x, _random_sharding(rng, g, "mesh", shape))
            g.ops[-1]["name"] = "sharding_constraint"
        elif kind == "opaque":
            out = g.op("opaque", f"{letters}->{letters}", [x], [shape], blocked=letters)
        else:
            continue
        live.append(out)
    return g, inputs
