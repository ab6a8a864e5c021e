"""The partitioner runs the primitives that gained rules for JAX coverage (dropout's PRNG as key
data and threefry2x32, exact gelu's erfc, erf_inv, cbrt, nextafter, top_k, sort, cumulative ops,
scatter set / mul / max / add, stack, tile, unstack, max_pool's grad, fft of each type with a complex
constant, round, jnp.prod's transposing reshape, a ragged_dot MoE's gradient): partitioned over a 2x2 mesh
with split inputs, from those annotations alone and after propagation (every op's factor table),
each program gives what jax.jit gives (jax_primitives_worker.py, 4 devices)."""
import json
from pathlib import Path

from child_process import run_child


def test_partitioned_programs_match_jax():
    proc = run_child([Path(__file__).with_name("jax_primitives_worker.py")], timeout=600)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    # each from the arguments' annotations alone, and from what propagation infers
    assert result == {f"{case}{how}": True for case in ("dropout_and_math", "pooling_grad", "spectral_and_round", "products",
                                                           "scan_gradients", "linear_algebra", "remat_names", "grouped_matmuls")
                      for how in ("", " propagated")}
