"""Random programs drawn from the rule registry, for the executability property (issue 9).

Every op of a program is a verifiable registry op (a `verify:` entry in rules_yaml): its call
is built shape-consistently on a live value of the program, its factor table is the registry
rule's own (`core.get_phi_spmd_rule(name).factors(*args)`), and its numpy kernel is the YAML's
`verify.kernel` expression (evaluated as spmdkit.verify evaluates it, with `local_attrs: out`
attributes bound to the block's result shape). Some values get random user annotations, as in
random_programs.

Families included (REGISTRY_OPS): unary elementwise (Paddle's and jax.*), binary and ternary
elementwise, Paddle matmul (trans flags), jax.dot_general and stablehlo.dot, reductions (Paddle
sum/max/min/prod/squared_l2_norm, jax.reduce_sum/max/min/prod), transpose (both families),
reshape (Paddle, jax.reshape, stablehlo.reshape), jax.broadcast_in_dim, softmax, layer_norm,
jax.concatenate and jax.slice. They chain: each takes any live value of a suitable rank.

Left out, and why:
- kernels that read `ctx` (any/all, jax.reduce_and/or, squeeze): they need the global tensor's
  placement, which a block-per-factor executor does not model;
- reductions that do not combine blocks with one associative op (mean_all, frobenius_norm,
  argmax/argmin, cumulative ops, argsort): a reduction factor's partial results are combined
  with the op's reduce function (COMBINE), and these have none;
- data-dependent or fixed-shape outputs (nonzero, fused_dropout_add's seed pair, iota, constant);
- exp/exp2/expm1/tan/pow and integer_pow: long chains overflow to inf/nan, which no tolerance
  check can judge;
- gather/scatter/conv/attention/moe/embedding/rope/pad/dynamic_slice: their samplers draw
  index tensors or layouts that do not chain from an arbitrary live value; their tables are
  proved per call by spmdkit.verify and test_factor_tables.py.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import DistTensorSpec, ProcessMesh, TensorDistAttr, core
from ..verify import kernels as K
from ..verify.specs import load_specs
from .from_ir import _table_parts
from .graph import Graph
from .random_programs import _random_sharding, add_random_mesh

_UNARY = ["elementwise_unary", "gelu", "jax.neg", "jax.log", "jax.log1p", "jax.tanh", "jax.logistic",
          "jax.rsqrt", "jax.sqrt", "jax.erf", "jax.abs", "jax.sign", "jax.sin", "jax.cos", "jax.floor",
          "jax.ceil", "jax.not", "jax.stop_gradient", "jax.square", "jax.is_finite", "jax.convert_element_type"]
_BINARY = ["elementwise_binary", "multiply", "jax.add", "jax.sub", "jax.mul", "jax.div", "jax.max", "jax.min",
           "jax.rem", "jax.atan2", "jax.and", "jax.or", "jax.xor", "jax.eq", "jax.ne", "jax.lt", "jax.le",
           "jax.gt", "jax.ge"]
_TERNARY = ["stablehlo.select", "jax.clamp"]
_CONTRACTION = ["matmul", "jax.dot_general", "stablehlo.dot"]
_PADDLE_REDUCE = ["sum", "max", "min", "prod", "squared_l2_norm"]
_JAX_REDUCE = ["jax.reduce_sum", "jax.reduce_max", "jax.reduce_min", "jax.reduce_prod"]
_LAYOUT = ["transpose", "jax.transpose", "reshape", "jax.reshape", "stablehlo.reshape", "jax.broadcast_in_dim",
           "jax.concatenate", "jax.slice"]
_NORM = ["softmax", "layer_norm"]
FAMILIES = [_UNARY, _BINARY, _TERNARY, _CONTRACTION, _PADDLE_REDUCE, _JAX_REDUCE, _LAYOUT, _LAYOUT, _NORM]
REGISTRY_OPS = sorted({n for f in FAMILIES for n in f})

# How the partial results of a reduction factor combine (the op's reduce function); sum otherwise.
COMBINE = {"max": np.maximum, "min": np.minimum, "prod": np.multiply, "jax.reduce_max": np.maximum,
           "jax.reduce_min": np.minimum, "jax.reduce_prod": np.multiply}

_DIMS = (2, 4, 6, 8, 12, 16)
_MESH = ProcessMesh([0], dim_names=["_"])


def _spec(shape):
    attr = TensorDistAttr()
    attr.process_mesh = _MESH
    attr.dims_mapping = [-1] * len(shape)
    return DistTensorSpec(list(shape), attr)


def make_kernel(name: str, attrs: dict):
    """The YAML kernel of `name` as fn(arrays, result_shapes) -> [arrays] for the simulator."""
    spec = load_specs()[name]
    code = compile(spec.kernel, f"<{spec.source} verify.kernel>", "eval")
    list_input = spec.inputs[0].is_list

    def kernel(arrays, result_shapes):
        env = dict(attrs)
        for key, where in spec.local_attrs.items():
            if where == "out":
                env[key] = list(result_shapes[0])
        if list_input:
            env[spec.inputs[0].name] = list(arrays)
        else:
            for decl, a in zip(spec.inputs, list(arrays) + [None] * len(spec.inputs)):
                env[decl.name] = a
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out = eval(code, {"np": np, "K": K}, env)  # noqa: S307 - the registry's own kernels
        return [np.asarray(o, dtype=float) for o in (out if isinstance(out, tuple) else (out,))]
    return kernel


def _call(rng, name, shape):
    """(operand shapes, None standing for the live value itself; attrs by name) for op `name`
    on a live value of `shape`, or None when the op does not apply to it."""
    r = len(shape)
    if name in _UNARY:
        return [None], {"approximate": bool(rng.integers(2))} if name == "gelu" else \
            ({"new_dtype": "float32"} if name == "jax.convert_element_type" else {})
    if name in _BINARY:
        if name in ("elementwise_binary", "multiply") and r >= 2 and rng.random() < 0.3:
            return [None, tuple(1 if rng.random() < 0.5 else n for n in shape[1:])], {}  # broadcast operand
        return [None, shape], {}
    if name in _TERNARY:
        return [shape, None, shape], {}  # the live value is on_true / clamp's x
    n = int(rng.choice(_DIMS))
    if name == "matmul" and r >= 2:
        tx, ty = bool(rng.integers(2)), bool(rng.integers(2))
        k = shape[-2] if tx else shape[-1]
        return [None, (n, k) if ty else (k, n)], {"trans_x": tx, "trans_y": ty}
    if name == "jax.dot_general" and r >= 1:
        c = int(rng.integers(r))
        return [None, (shape[c], n)], {"lhs_contracting_dimensions": [c], "rhs_contracting_dimensions": [0],
                                      "lhs_batching_dimensions": [], "rhs_batching_dimensions": []}
    if name == "stablehlo.dot" and r == 2:
        return [None, (shape[1], n)], {}
    if name in _PADDLE_REDUCE and r >= 1:
        axes = sorted(int(a) for a in rng.choice(r, size=int(rng.integers(1, r + 1)), replace=False))
        return [None], {"axis": axes, "keep_dim": bool(rng.integers(2))}
    if name in _JAX_REDUCE and r >= 1:
        axes = sorted(int(a) for a in rng.choice(r, size=int(rng.integers(1, r + 1)), replace=False))
        return [None], {"axes": axes}
    if name in ("transpose", "jax.transpose") and r >= 2:
        perm = [int(p) for p in rng.permutation(r)]
        return [None], {"perm" if name == "transpose" else "permutation": perm}
    if name in ("reshape", "jax.reshape", "stablehlo.reshape"):
        target = list(shape)
        if r >= 2 and rng.random() < 0.5:  # merge two adjacent dims
            d = int(rng.integers(r - 1))
            target[d:d + 2] = [shape[d] * shape[d + 1]]
        elif r <= 3:  # split a dim in two
            d = int(rng.integers(r)) if r else None
            if d is None:
                return None
            split = [s for s in (2, 3, 4) if shape[d] % s == 0 and shape[d] // s > 1]
            if not split:
                return None
            s = int(rng.choice(split))
            target[d:d + 1] = [s, shape[d] // s]
        else:
            return None
        key = {"reshape": "shape", "jax.reshape": "new_sizes", "stablehlo.reshape": "shape"}[name]
        return [None], ({key: target, "dimensions": []} if name == "jax.reshape" else {key: target})
    if name == "jax.broadcast_in_dim" and r <= 2:
        pos = int(rng.integers(r + 1))
        out = list(shape[:pos]) + [n] + list(shape[pos:])
        return [None], {"shape": out, "broadcast_dimensions": [d if d < pos else d + 1 for d in range(r)]}
    if name == "jax.concatenate" and r >= 1:
        d = int(rng.integers(r))
        extra = list(shape)
        extra[d] = int(rng.choice(_DIMS))
        return [None, tuple(extra)], {"dimension": d}
    if name == "jax.slice" and r >= 1:
        d = int(rng.integers(r))
        lo = int(rng.integers(shape[d] // 2 + 1))
        hi = int(rng.integers(lo + 1, shape[d] + 1))
        start, limit = [0] * r, list(shape)
        start[d], limit[d] = lo, hi
        return [None], {"start_indices": start, "limit_indices": limit, "strides": [1] * r}
    if name == "softmax" and r >= 1:
        return [None], {"axis": int(rng.integers(-r, r))}
    if name == "layer_norm" and r >= 2:
        b = int(rng.integers(1, r))
        p = int(np.prod(shape[b:]))
        return [None, (p,), (p,)], {"epsilon": 1e-5, "begin_norm_axis": b}
    return None


def _ordered_attrs(name, attrs):
    spec = load_specs()[name]
    return [attrs[a.name] if a.name in attrs else a.default for a in spec.attrs]


def random_registry_program(seed: int, n_ops: int = 8, annotate: float = 0.35, families=FAMILIES):
    """Returns (graph, inputs, kernels, combine): inputs maps value id -> array for the free
    values, kernels and combine map op index -> the simulator's kernel / reduce function. Each
    op is drawn family first (layout twice as often), then uniformly within its family."""
    rng = np.random.default_rng(seed)
    g = Graph()
    add_random_mesh(rng, g)
    inputs, dense = {}, {}

    def new_input(shape):
        text = _random_sharding(rng, g, "mesh", shape) if rng.random() < annotate else None
        v = g.value(list(shape), text, name=f"in{len(inputs)}")
        inputs[v] = dense[v] = rng.standard_normal(shape)
        return v

    live = [new_input([int(rng.choice(_DIMS)) for _ in range(int(rng.integers(1, 4)))])]
    made = 0
    for _ in range(n_ops * 4):
        if made == n_ops:
            break
        x = live[int(rng.integers(len(live)))]
        shape = tuple(g.shape(x))
        family = families[int(rng.integers(len(families)))]
        name = str(family[int(rng.integers(len(family)))])
        call = _call(rng, name, shape)
        if call is None:
            continue
        shapes, attrs = call
        operands = []
        for s in shapes:
            if s is None:
                operands.append(x)
                continue
            same = [v for v in live if tuple(g.shape(v)) == tuple(s) and v != x]
            operands.append(same[int(rng.integers(len(same)))] if same and rng.random() < 0.5 else new_input(s))
        kernel = make_kernel(name, attrs)
        outs = kernel([dense[v] for v in operands], None) if not load_specs()[name].local_attrs else None
        if outs is None:  # the result shape is an attribute (reshape, broadcast_in_dim)
            target = attrs.get("shape", attrs.get("new_sizes"))
            outs = kernel([dense[v] for v in operands], [tuple(target)])
        if not all(np.all(np.isfinite(o)) and np.all(np.abs(o) < 1e30) for o in outs):
            continue  # a product or a chain that overflows: no tolerance could judge it
        spec_args = [_spec(g.shape(v)) for v in operands]
        args = ([spec_args] if load_specs()[name].inputs[0].is_list else spec_args) + _ordered_attrs(name, attrs)
        table = core.get_phi_spmd_rule(name).factors(*args)
        if len(table.results) != len(outs) or any(len(t) != o.ndim for t, o in zip(table.results, outs)):
            raise AssertionError(f"{name}: the table {table} does not match the kernel's results "
                                 f"{[o.shape for o in outs]}")
        results = []
        for i, o in enumerate(outs):
            text = _random_sharding(rng, g, "mesh", o.shape) if rng.random() < annotate * 0.5 else None
            v = g.value(list(o.shape), text, name=f"{name}.{i}")
            dense[v] = o
            results.append(v)
        g.op_table(name, _table_parts(table, [o.shape for o in outs]), operands, results)
        g.ops[-1]["kernel"] = kernel
        live.extend(v for v in results if g.shape(v))
        made += 1
    return g, inputs, {o: op["kernel"] for o, op in enumerate(g.ops)}, \
        {o: COMBINE.get(op["name"], np.add) for o, op in enumerate(g.ops)}
