"""The reference kernels of the JAX / StableHLO family (spmdkit.verify.families.jax_stablehlo)
against JAX itself: the proofs `spmdkit verify` gives are only as good as the kernels, so each
kernel must compute what the primitive computes, on the samplers' own cases."""
import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
lax = jax.lax

from spmdkit.verify import kernels as K  # noqa: E402
from spmdkit.verify.samplers import SAMPLERS, Options  # noqa: E402

CASES = 10  # draws per sampler


def data(rng, arg):
    if isinstance(arg, list):
        return [data(rng, a) for a in arg]
    if arg.int_high is not None:
        return rng.integers(0, arg.int_high, size=arg.shape)
    return rng.normal(size=arg.shape).astype(np.float32)


def draws(sampler, seed):
    rng = np.random.default_rng(seed)
    for _ in range(CASES):
        mesh = (2, 2)
        s = SAMPLERS[sampler](rng, mesh, Options())
        yield [data(rng, a) for a in s.inputs], s.attrs


def close(ours, theirs):
    np.testing.assert_allclose(np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float), rtol=2e-4, atol=2e-4)


def test_dot_general():
    for (lhs, rhs), a in draws("dot_general", 1):
        dn = ((a["lhs_contracting_dimensions"], a["rhs_contracting_dimensions"]),
              (a["lhs_batching_dimensions"], a["rhs_batching_dimensions"]))
        close(K.dot_general(lhs, rhs, a["lhs_contracting_dimensions"], a["rhs_contracting_dimensions"],
                            a["lhs_batching_dimensions"], a["rhs_batching_dimensions"]),
              lax.dot_general(lhs, rhs, dn, precision=lax.Precision.HIGHEST))


def test_gather():
    for (operand, idx), a in draws("hlo_gather", 2):
        ivd = a.get("index_vector_dim", -1)
        ids = idx if ivd == -1 else idx[..., None]  # jax: the index vector dim is last
        dn = lax.GatherDimensionNumbers(offset_dims=tuple(a["offset_dims"]),
                                        collapsed_slice_dims=tuple(a["collapsed_slice_dims"]),
                                        start_index_map=tuple(a["start_index_map"]),
                                        operand_batching_dims=tuple(a.get("operand_batching_dims", ())),
                                        start_indices_batching_dims=tuple(a.get("start_indices_batching_dims", ())))
        theirs = lax.gather(operand, ids, dn, tuple(a["slice_sizes"]), mode=lax.GatherScatterMode.CLIP)
        close(K.hlo_gather(operand, idx, a["offset_dims"], a["collapsed_slice_dims"], a["start_index_map"],
                           a["slice_sizes"], a.get("operand_batching_dims", ()),
                           a.get("start_indices_batching_dims", ()), ivd), theirs)


def test_scatter_add():
    for (operand, idx, upd), a in draws("hlo_scatter", 3):
        dn = lax.ScatterDimensionNumbers(update_window_dims=tuple(a["update_window_dims"]),
                                         inserted_window_dims=tuple(a["inserted_window_dims"]),
                                         scatter_dims_to_operand_dims=tuple(a["scatter_dims_to_operand_dims"]),
                                         operand_batching_dims=tuple(a.get("input_batching_dims", ())),
                                         scatter_indices_batching_dims=tuple(a.get("scatter_indices_batching_dims", ())))
        theirs = lax.scatter_add(operand, idx, upd, dn, mode=lax.GatherScatterMode.CLIP)
        close(K.hlo_scatter_add(operand, idx, upd, a["update_window_dims"], a["inserted_window_dims"],
                                a["scatter_dims_to_operand_dims"], a.get("input_batching_dims", ()),
                                a.get("scatter_indices_batching_dims", ())), theirs)


def test_pad_slices_and_layout():
    for (x, v), a in draws("hlo_pad", 4):
        cfg = list(zip(a["edge_padding_low"], a["edge_padding_high"], a["interior_padding"]))
        close(K.hlo_pad(x, v, a["edge_padding_low"], a["edge_padding_high"], a["interior_padding"]), lax.pad(x, v, cfg))
    for (x, starts), a in draws("dynamic_slice", 5):
        close(K.dynamic_slice(x, starts, a["slice_sizes"]),
              lax.dynamic_slice(x, [int(s) for s in starts], a["slice_sizes"]))
    for (x, u, starts), _ in draws("dynamic_update_slice", 6):
        close(K.dynamic_update_slice(x, u, starts), lax.dynamic_update_slice(x, u, [int(s) for s in starts]))
    for (x,), a in draws("jax_slice", 7):
        close(K.hlo_slice(x, a["start_indices"], a["limit_indices"], a["strides"]),
              lax.slice(x, a["start_indices"], a["limit_indices"], a["strides"] or None))
    for (x,), a in draws("broadcast_in_dim", 8):
        close(K.broadcast_in_dim(x, a["shape"], a["broadcast_dimensions"]),
              lax.broadcast_in_dim(x, a["shape"], a["broadcast_dimensions"]))
    for (x,), a in draws("jax_split", 9):
        for ours, theirs in zip(K.split_sizes(x, a["sizes"], a["axis"]), lax.split(x, a["sizes"], a["axis"])):
            close(ours, theirs)
    for (x,), a in draws("jax_rev", 10):
        close(np.flip(x, tuple(a["dimensions"])), lax.rev(x, a["dimensions"]))
    for _, a in draws("iota", 11):
        close(K.iota(a["shape"], a["dimension"]), lax.broadcasted_iota(jnp.float32, a["shape"], a["dimension"]))


@pytest.mark.parametrize("fn,jfn", [(np.add, lax.cumsum), (np.maximum, lax.cummax), (np.minimum, lax.cummin),
                                    (np.logaddexp, lax.cumlogsumexp)])
def test_cumulative(fn, jfn):
    for (x,), a in draws("jax_cumulative", 12):
        close(K.jax_cumulative(fn, x, a["axis"], a["reverse"]), jfn(x, axis=a["axis"], reverse=a["reverse"]))


def test_select_n_and_reduce():
    for (which, cases), _ in draws("select_n", 13):
        if len(cases) == 1:
            continue
        close(K.select_n(which, cases), lax.select_n(jnp.asarray(which, jnp.int32), *cases))
    # XLA applies a non-identity init value an implementation-defined number of times: compare
    # on identity init values (what programs use); the kernel folds init in once.
    identity = {"sum": 0.0, "prod": 1.0, "max": -np.inf, "min": np.inf, "and": 1.0, "or": -1.0}
    for (x, _), a in draws("hlo_reduce", 14):
        body = a["body"]
        init = np.float32(identity[body])
        if body in ("and", "or"):
            xb, ib = x > 0, init > 0
            fn = jnp.logical_and if body == "and" else jnp.logical_or
            theirs = lax.reduce(xb, ib, fn, tuple(a["dimensions"]))
        else:
            fn = {"sum": lax.add, "max": lax.max, "min": lax.min, "prod": lax.mul}[body]
            theirs = lax.reduce(x, init, fn, tuple(a["dimensions"]))
        close(K.hlo_reduce(x, init, a["dimensions"], body), theirs)


def test_ragged_dot_general():
    """Both sampled modes (a ragged free dim, a ragged contracted dim), group_sizes with and
    without its prefix dims, groups summing past the ragged dim: the kernel equals JAX's."""
    modes = set()
    for (lhs, rhs, sizes), a in draws("ragged_dot_general", 3):
        dn = lax.RaggedDotDimensionNumbers(
            dot_dimension_numbers=((a["lhs_contracting_dimensions"], a["rhs_contracting_dimensions"]),
                                   (a["lhs_batching_dimensions"], a["rhs_batching_dimensions"])),
            lhs_ragged_dimensions=a["lhs_ragged_dimensions"], rhs_group_dimensions=a["rhs_group_dimensions"])
        theirs = lax.ragged_dot_general(lhs, rhs, jnp.asarray(sizes, jnp.int32), dn, precision=lax.Precision.HIGHEST)
        close(K.ragged_dot_general(lhs, rhs, sizes, a["lhs_contracting_dimensions"], a["rhs_contracting_dimensions"],
                                   a["lhs_ragged_dimensions"], a["lhs_batching_dimensions"],
                                   a["rhs_batching_dimensions"], a["rhs_group_dimensions"]), theirs)
        modes.add(bool(a["rhs_group_dimensions"]))
    assert modes == {True, False}
