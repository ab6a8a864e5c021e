"""Differential test against Shardy itself (the one in jaxlib 0.10.2, which JAX partitions
with): random StableHLO ops, Shardy's rule for each, and spmdkit's factor table for the same
call must be the same up to factor renumbering. Ops where the two differ on purpose are listed
in docs/jax_stablehlo_rules.md with their proofs (test_jax_rules.py) and are not drawn here."""
import re
import sys
from math import prod
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jaxlib")
sys.path.insert(0, str(Path(__file__).parent))
from factor_table_text import same_up_to_renumbering  # noqa: E402
from shardy_oracle import i64s, ints, region, rule_of, ttype  # noqa: E402

from spmdkit import DistTensorSpec, ProcessMesh, TensorDistAttr, core  # noqa: E402

MESH = ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])
CASES = 40


def T(shape):
    attr = TensorDistAttr()
    attr.process_mesh = MESH
    attr.dims_mapping = [-1] * len(shape)
    return DistTensorSpec(list(shape), attr)


def shape(rng, lo=0, hi=4):
    return [int(rng.choice([1, 2, 3, 4, 6, 8])) for _ in range(int(rng.integers(lo, hi + 1)))]


def check(name, shardy, *args, **attrs):
    ours = core.get_phi_spmd_rule(name).factors(*args, **attrs)
    assert shardy is not None, name
    assert same_up_to_renumbering(ours, shardy), f"{name} {attrs}\n  ours:   {ours}\n  Shardy: {shardy}"


POINTWISE = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "remainder", "atan2", "and", "or",
             "xor"]
UNARY = ["negate", "exponential", "log", "tanh", "rsqrt", "sqrt", "abs", "sign", "logistic", "sine", "cosine", "floor",
         "ceil", "not", "log_plus_one", "convert", "exponential_minus_one", "tan"]


@pytest.mark.parametrize("op", POINTWISE)
def test_binary_pointwise(op):
    rng = np.random.default_rng(1)
    for _ in range(8):
        s = shape(rng)
        dtype = "i1" if op in ("and", "or", "xor") else "f32"
        check(f"stablehlo.{op}", rule_of(f"stablehlo.{op}", [ttype(s, dtype)] * 2, [ttype(s, dtype)]), T(s), T(s))


@pytest.mark.parametrize("op", UNARY)
def test_unary_pointwise(op):
    rng = np.random.default_rng(2)
    for _ in range(5):
        s = shape(rng)
        dtype = "i1" if op == "not" else "f32"
        check(f"stablehlo.{op}", rule_of(f"stablehlo.{op}", [ttype(s, dtype)], [ttype(s, dtype)]), T(s))


def test_compare_select_clamp():
    rng = np.random.default_rng(3)
    for _ in range(CASES // 2):
        s = shape(rng)
        check("stablehlo.compare", rule_of("stablehlo.compare", [ttype(s)] * 2, [ttype(s, "i1")],
                                           "comparison_direction = #stablehlo<comparison_direction LT>"),
              T(s), T(s), "LT")
        pred = s if rng.random() < 0.5 else []
        check("stablehlo.select", rule_of("stablehlo.select", [ttype(pred, "i1"), ttype(s), ttype(s)], [ttype(s)]),
              T(pred), T(s), T(s))
        lo, hi = (s if rng.random() < 0.5 else []), (s if rng.random() < 0.5 else [])
        if lo == hi or not lo or not hi:  # stablehlo.clamp: min and max are scalars or full shape
            check("stablehlo.clamp", rule_of("stablehlo.clamp", [ttype(lo), ttype(s), ttype(hi)], [ttype(s)]),
                  T(lo), T(s), T(hi))


def test_broadcast_in_dim():
    rng = np.random.default_rng(4)
    for _ in range(CASES):
        out = shape(rng, 0, 5)
        keep = sorted(int(d) for d in rng.choice(len(out), size=int(rng.integers(0, len(out) + 1)), replace=False))
        operand = [1 if rng.random() < 0.3 else out[d] for d in keep]
        check("stablehlo.broadcast_in_dim",
              rule_of("stablehlo.broadcast_in_dim", [ttype(operand)], [ttype(out)], f"broadcast_dimensions = {i64s(keep)}"),
              T(operand), out, keep)


def test_transpose():
    rng = np.random.default_rng(5)
    for _ in range(CASES):
        s = shape(rng, 0, 5)
        perm = [int(p) for p in rng.permutation(len(s))]
        check("stablehlo.transpose",
              rule_of("stablehlo.transpose", [ttype(s)], [ttype([s[p] for p in perm])], f"permutation = {i64s(perm)}"),
              T(s), perm)


def test_reshape():
    rng = np.random.default_rng(6)
    for _ in range(3 * CASES):
        factors = [int(f) for f in rng.choice([1, 2, 2, 3, 5], size=int(rng.integers(0, 6)))]
        def group(fs):
            rank = int(rng.integers(0 if not fs else 1, 5))
            dims = [1] * rank
            for f in fs:
                dims[int(rng.integers(rank))] *= f
            return dims
        src, dst = group(factors), group([int(f) for f in rng.permutation(factors)]) if factors else group([])
        if prod(src) != prod(dst):
            continue
        check("stablehlo.reshape", rule_of("stablehlo.reshape", [ttype(src)], [ttype(dst)]), T(src), dst)


def test_dot_general():
    rng = np.random.default_rng(7)
    for _ in range(CASES):
        nb, nc, nl, nr = (int(rng.integers(0, 3)) for _ in range(4))
        size = lambda: int(rng.choice([2, 3, 4, 8]))  # noqa: E731
        b, c = [size() for _ in range(nb)], [size() for _ in range(nc)]
        lf, rf = [size() for _ in range(nl)], [size() for _ in range(nr)]
        lhs = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("l", i) for i in range(nl)]
        rhs = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("r", i) for i in range(nr)]
        lhs = [lhs[i] for i in rng.permutation(len(lhs))]
        rhs = [rhs[i] for i in rng.permutation(len(rhs))]
        sizes = {"b": b, "c": c, "l": lf, "r": rf}
        ls, rs = [sizes[k][i] for k, i in lhs], [sizes[k][i] for k, i in rhs]
        dims = {"lhs_batching_dimensions": [lhs.index(("b", i)) for i in range(nb)],
                "rhs_batching_dimensions": [rhs.index(("b", i)) for i in range(nb)],
                "lhs_contracting_dimensions": [lhs.index(("c", i)) for i in range(nc)],
                "rhs_contracting_dimensions": [rhs.index(("c", i)) for i in range(nc)]}
        out = b + [sizes[k][i] for k, i in lhs if k == "l"] + [sizes[k][i] for k, i in rhs if k == "r"]
        attr = "dot_dimension_numbers = #stablehlo.dot<" + ", ".join(f"{k} = {ints(v)}" for k, v in dims.items()) + ">"
        check("stablehlo.dot_general", rule_of("stablehlo.dot_general", [ttype(ls), ttype(rs)], [ttype(out)], attr),
              T(ls), T(rs), **dims)


def test_dot():
    for ls, rs, out in [([32], [32], []), ([32], [32, 16], [16]), ([8, 32], [32], [8]), ([8, 32], [32, 16], [8, 16])]:
        check("stablehlo.dot", rule_of("stablehlo.dot", [ttype(ls), ttype(rs)], [ttype(out)]), T(ls), T(rs))


def test_slice_pad_reverse():
    rng = np.random.default_rng(8)
    for _ in range(CASES):
        s = shape(rng, 1, 4)
        start = [int(rng.integers(0, n)) if rng.random() < 0.5 else 0 for n in s]
        limit = [int(rng.integers(a + 1, n + 1)) if rng.random() < 0.5 else n for a, n in zip(start, s)]
        strides = [int(rng.integers(1, 3)) for _ in s]
        out = [(lim - a + st - 1) // st for a, lim, st in zip(start, limit, strides)]
        check("stablehlo.slice", rule_of("stablehlo.slice", [ttype(s)], [ttype(out)],
                                         f"start_indices = {i64s(start)}, limit_indices = {i64s(limit)}, "
                                         f"strides = {i64s(strides)}"),
              T(s), start, limit, strides)
        lo = [int(rng.integers(0, 3)) if rng.random() < 0.4 else 0 for _ in s]
        hi = [int(rng.integers(0, 3)) if rng.random() < 0.4 else 0 for _ in s]
        inner = [int(rng.integers(0, 2)) if rng.random() < 0.3 else 0 for _ in s]
        out = [a + b + n + max(n - 1, 0) * c for a, b, n, c in zip(lo, hi, s, inner)]
        check("stablehlo.pad", rule_of("stablehlo.pad", [ttype(s), ttype([])], [ttype(out)],
                                       f"edge_padding_low = {i64s(lo)}, edge_padding_high = {i64s(hi)}, "
                                       f"interior_padding = {i64s(inner)}"),
              T(s), T([]), lo, hi, inner)
        dims = sorted(int(d) for d in rng.choice(len(s), size=int(rng.integers(0, len(s) + 1)), replace=False))
        check("stablehlo.reverse", rule_of("stablehlo.reverse", [ttype(s)], [ttype(s)], f"dimensions = {i64s(dims)}"),
              T(s), dims)


@pytest.mark.parametrize("body,op", [("sum", "stablehlo.add"), ("max", "stablehlo.maximum"), ("min", "stablehlo.minimum"),
                                     ("prod", "stablehlo.multiply")])
def test_reduce(body, op):
    rng = np.random.default_rng(9)
    for _ in range(CASES // 4):
        s = shape(rng, 1, 4)
        dims = sorted(int(d) for d in rng.choice(len(s), size=int(rng.integers(0, len(s) + 1)), replace=False))
        out = [n for d, n in enumerate(s) if d not in dims]
        check("stablehlo.reduce", rule_of("stablehlo.reduce", [ttype(s), ttype([])], [ttype(out)],
                                          f"dimensions = {i64s(dims)}", region(op)),
              T(s), T([]), dims, body)


# ---- the documented differences, pinned (docs/jax_stablehlo_rules.md) ---------------------------

def kinds_by_dim(table_text_or_obj):
    """Per tensor, per dim: the set of kinds of its factors ('one' for a lone size-1 factor)."""
    from factor_table_text import of_table, parse
    t = parse(table_text_or_obj) if isinstance(table_text_or_obj, str) else of_table(table_text_or_obj)
    def kind(dim):
        if len(dim) == 1 and t["sizes"][dim[0]] == 1:
            return {"one"}
        return {t["kinds"].get(f, "pass_through") for f in dim}
    return [[kind(d) for d in x] for x in t["operands"] + t["results"]]


def test_concatenate_dim_is_whole_in_both():
    shardy = rule_of("stablehlo.concatenate", [ttype([4, 3, 256]), ttype([4, 5, 256])], [ttype([4, 8, 256])],
                     "dimension = 1 : i64")
    ours = core.get_phi_spmd_rule("stablehlo.concatenate").factors([T([4, 3, 256]), T([4, 5, 256])], 1)
    assert same_up_to_renumbering(ours, shardy.replace("need_replication", "permutation"))


def test_dynamic_slice_sliced_dims_are_never_split_in_both():
    types = [ttype([32, 4, 8])] + [ttype([], "i32")] * 3
    shardy = rule_of("stablehlo.dynamic_slice", types, [ttype([32, 1, 2])], "slice_sizes = array<i64: 32, 1, 2>")
    ours = core.get_phi_spmd_rule("stablehlo.dynamic_slice").factors(T([32, 4, 8]), [T([])] * 3, [32, 1, 2])
    theirs, mine = kinds_by_dim(shardy), kinds_by_dim(ours)
    assert theirs[0] == [{"pass_through"}, {"need_replication"}, {"need_replication"}]
    assert "blocked_propagation={j, k}" in shardy
    assert mine[0] == [{"pass_through"}, {"one"}, {"one"}]  # a size-1 factor can never be split either


def test_gather_collapsed_dim_is_a_reduction_in_jaxlibs_shardy_and_whole_in_ours():
    attrs = ("dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
             "start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>")
    shardy = rule_of("stablehlo.gather", [ttype([8, 4]), ttype([5, 1], "i64")], [ttype([5, 4])], attrs)
    ours = core.get_phi_spmd_rule("stablehlo.gather").factors(T([8, 4]), T([5, 1]), [1], [0], [0], [1, 4])
    assert kinds_by_dim(shardy)[0][0] == {"reduction"}  # a masked gather, then an all-reduce
    assert kinds_by_dim(ours)[0][0] == {"need_replication"}  # test_jax_rules proves the split wrong locally


ARGMAX_BODY = '''({
  ^bb0(%a: tensor<f32>, %b: tensor<i32>, %c: tensor<f32>, %d: tensor<i32>):
    %p = "stablehlo.compare"(%a, %c) {comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %v = "stablehlo.select"(%p, %a, %c) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %i = "stablehlo.select"(%p, %b, %d) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    "stablehlo.return"(%v, %i) : (tensor<f32>, tensor<i32>) -> ()
  })'''


def test_variadic_reduce_reduced_dims_are_reductions_in_shardy_and_whole_in_ours():
    """Same factors; Shardy's reduction factors are our need_replication ones (an argmax pair
    cannot be finished by all-reducing each result: test_hlo_region_rules.py proves it)."""
    rng = np.random.default_rng(10)
    for _ in range(CASES // 2):
        s = shape(rng, 1, 4)
        dims = sorted(int(d) for d in rng.choice(len(s), size=int(rng.integers(1, len(s) + 1)), replace=False))
        out = [n for d, n in enumerate(s) if d not in dims]
        shardy = rule_of("stablehlo.reduce", [ttype(s), ttype(s, "i32"), ttype([]), ttype([], "i32")],
                         [ttype(out), ttype(out, "i32")], f"dimensions = {i64s(dims)}", ARGMAX_BODY)
        assert "need_replication" not in shardy
        check("stablehlo.reduce-variadic", shardy.replace("reduction=", "need_replication="),
              [T(s), T(s)], [T([]), T([])], dims, "argmax")


def test_sort():
    rng = np.random.default_rng(11)
    for _ in range(CASES // 2):
        s = shape(rng, 1, 4)
        n, dim = int(rng.integers(1, 4)), int(rng.integers(0, len(s)))
        t = ", ".join(f"%a{k}: tensor<f32>, %b{k}: tensor<f32>" for k in range(n))
        less = ('({\n  ^bb0(' + t + '):\n    %p = "stablehlo.compare"(%a0, %b0) {comparison_direction = '
                '#stablehlo<comparison_direction LT>} : (tensor<f32>, tensor<f32>) -> tensor<i1>\n'
                '    "stablehlo.return"(%p) : (tensor<i1>) -> ()\n  })')
        shardy = rule_of("stablehlo.sort", [ttype(s)] * n, [ttype(s)] * n,
                         f"dimension = {dim} : i64, is_stable = true", less)
        # Shardy also blocks the sort factor when every other dim has size 1; our propagation
        # never propagates along a need_replication factor, so the flag would change nothing
        only_sort_dim = all(n == 1 for d, n in enumerate(s) if d != dim)
        assert ("blocked_propagation=" in shardy) == only_sort_dim, shardy
        check("stablehlo.sort", re.sub(r" blocked_propagation=\{\w+\}", "", shardy), [T(s)] * n, dim, True)


def test_reduce_window():
    """Shardy: a dim with a window wider than 1, a stride or padding is a permutation factor of
    the result's size; so is ours. Base dilation: Shardy passes the dim through, ours keeps it
    whole (test_hlo_region_rules.py proves a split wrong): not drawn here."""
    rng = np.random.default_rng(12)
    for _ in range(CASES):
        s = shape(rng, 1, 4)
        w = [int(rng.integers(1, min(n, 3) + 1)) if rng.random() < 0.5 else 1 for n in s]
        st = [int(rng.integers(1, 3)) if rng.random() < 0.4 else 1 for _ in s]
        wd = [int(rng.integers(1, 3)) if rng.random() < 0.2 and w[d] > 1 and (w[d] - 1) * 2 + 1 <= s[d] else 1
              for d in range(len(s))]
        pad = [int(rng.integers(0, 2)) if rng.random() < 0.3 else 0 for _ in range(2 * len(s))]
        out = [((n + pad[2 * d] + pad[2 * d + 1]) - ((w[d] - 1) * wd[d] + 1)) // st[d] + 1 for d, n in enumerate(s)]
        n_ops = int(rng.integers(1, 3))
        if n_ops == 1:
            body = region("stablehlo.add")
        else:
            body = ('({\n  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>):\n'
                    '    %s = "stablehlo.add"(%a, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n'
                    '    %t = "stablehlo.maximum"(%b, %d) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n'
                    '    "stablehlo.return"(%s, %t) : (tensor<f32>, tensor<f32>) -> ()\n  })')
        padding = "dense<[" + ", ".join(f"[{pad[2 * d]}, {pad[2 * d + 1]}]" for d in range(len(s))) + \
            f"]> : tensor<{len(s)}x2xi64>"
        attrs = (f"window_dimensions = {i64s(w)}, window_strides = {i64s(st)}, window_dilations = {i64s(wd)}, "
                 f"padding = {padding}")
        shardy = rule_of("stablehlo.reduce_window", [ttype(s)] * n_ops + [ttype([])] * n_ops, [ttype(out)] * n_ops,
                         attrs, body)
        check("stablehlo.reduce_window", shardy, [T(s)] * n_ops, [T([])] * n_ops, w, st, [], wd, pad,
              "sum" if n_ops == 1 else "other")


def test_reduce_window_base_dilation_passes_through_in_shardy_and_is_whole_in_ours():
    shardy = rule_of("stablehlo.reduce_window", [ttype([3, 8]), ttype([])], [ttype([3, 15])],
                     "window_dimensions = array<i64: 1, 1>, base_dilations = array<i64: 1, 2>", region("stablehlo.add"))
    ours = core.get_phi_spmd_rule("stablehlo.reduce_window").factors([T([3, 8])], [T([])], [1, 1], [], [1, 2])
    assert kinds_by_dim(shardy)[0] == [{"pass_through"}, {"pass_through"}]
    assert kinds_by_dim(ours)[0] == [{"pass_through"}, {"permutation"}]  # test_hlo_region_rules.py: split is wrong


def conv_attrs(lhs_spec, rhs_spec, out_spec, strides, pads, fg=1, bg=1):
    def layout(spec, first, second):  # a tensor's dims as StableHLO names them: b/f (o/i), spatial 0, 1...
        out = [""] * len(spec)
        out[spec[0]], out[spec[1]] = first, second
        for k, d in enumerate(spec[2:]):
            out[d] = str(k)
        return "[" + ", ".join(out) + "]"
    dn = f"{layout(lhs_spec, 'b', 'f')}x{layout(rhs_spec, 'o', 'i')}->{layout(out_spec, 'b', 'f')}"
    padding = "dense<[" + ", ".join(f"[{pads[2 * k]}, {pads[2 * k + 1]}]" for k in range(len(strides))) + \
        f"]> : tensor<{len(strides)}x2xi64>"
    return (f"dimension_numbers = #stablehlo.conv<{dn}>, window_strides = {i64s(strides)}, padding = {padding}, "
            f"batch_group_count = {bg} : i64, feature_group_count = {fg} : i64")


def test_convolution():
    """Where Shardy factors each spatial dim as one permutation factor of the window count (unit
    groups, the window count at least the kernel's size and more than half the input's), its
    table is ours. Elsewhere it differs on purpose: test_convolution_differences."""
    rng = np.random.default_rng(13)
    drawn = 0
    while drawn < CASES:
        sp = int(rng.integers(1, 3))
        rank = sp + 2
        sizes, ks, strides, pads, outs = [], [], [], [], []
        for _ in range(sp):
            size, k = int(rng.integers(2, 9)), int(rng.integers(1, 4))
            lo, hi = (int(rng.integers(0, 2)) for _ in range(2))
            st = int(rng.choice([1, 1, 2]))
            sizes.append(size), ks.append(k), strides.append(st), pads.extend([lo, hi])
            outs.append((size + lo + hi - k) // st + 1 if size + lo + hi >= k else 0)
        if not all(w >= max(k, 2) and w <= n and n // w < 2 for w, k, n in zip(outs, ks, sizes)):
            continue
        drawn += 1
        lhs_spec, rhs_spec, out_spec = ([int(d) for d in rng.permutation(rank)] for _ in range(3))
        # a size-1 output feature is two size-1 factors in Shardy's table, one shared in ours:
        # never split either way, not drawn
        n, c, o = int(rng.choice([1, 2, 3, 4])), int(rng.choice([1, 2, 3, 4])), int(rng.choice([2, 3, 4]))
        def shaped(spec, dims):
            s = [0] * rank
            for d, v in zip(spec, dims):
                s[d] = v
            return s
        ls, rs, os_ = shaped(lhs_spec, [n, c] + sizes), shaped(rhs_spec, [o, c] + ks), shaped(out_spec, [n, o] + outs)
        shardy = rule_of("stablehlo.convolution", [ttype(ls), ttype(rs)], [ttype(os_)],
                         conv_attrs(lhs_spec, rhs_spec, out_spec, strides, pads))
        check("stablehlo.convolution", shardy, T(ls), T(rs), lhs_spec, rhs_spec, out_spec, strides, pads)


def test_convolution_differences():
    """Shardy also splits what ours keeps whole: a spatial dim into (windows, window offset)
    factors, the latter a reduction shared with the kernel (stride 2 below), and a grouped
    feature dim into (groups, per group) factors. Ours is whole there, never wrong (spmdkit
    verify: 0 wrong), at worst more communication than Shardy's partitioner would need."""
    spec = ([0, 1, 2], [0, 1, 2], [0, 1, 2])
    shardy = rule_of("stablehlo.convolution", [ttype([2, 3, 8]), ttype([5, 3, 3])], [ttype([2, 5, 3])],
                     conv_attrs(*spec, [2], [0, 0]))
    ours = core.get_phi_spmd_rule("stablehlo.convolution").factors(T([2, 3, 8]), T([5, 3, 3]), *spec, [2], [0, 0])
    assert kinds_by_dim(shardy)[0][2] == {"permutation", "reduction"}  # a compound spatial dim
    assert kinds_by_dim(ours)[0][2] == {"permutation"}
    shardy = rule_of("stablehlo.convolution", [ttype([2, 6, 8]), ttype([4, 3, 3])], [ttype([2, 4, 6])],
                     conv_attrs(*spec, [1], [0, 0], fg=2))
    ours = core.get_phi_spmd_rule("stablehlo.convolution").factors(T([2, 6, 8]), T([4, 3, 3]), *spec, [1], [0, 0],
                                                                 feature_group_count=2)
    assert kinds_by_dim(shardy)[0][1] == {"pass_through", "reduction"}  # (groups, per-group features)
    assert kinds_by_dim(ours)[0][1] == {"need_replication"}
