"""A cost model measured on the devices a mesh names: `AutoCostModel.calibrated(mesh)`.

- **Compute**: every device of the mesh runs a chain of square matmuls at once (one `shard_map`
  program), so devices that share cores share them here too: 4 virtual CPU devices on 2 cores
  each get about a quarter of what one process gets alone. The rate is the chain's FLOPs over
  its time, less the time of the same program without the matmuls (launch overhead).
- **Collectives**: per mesh axis, a chain of all-gathers over that axis at a small and a large
  size, less the same chain without them. The small size gives the latency (alpha), the
  difference between the two the bandwidth (beta), in the reshard planner's terms: a collective
  costs `alpha + bytes one device receives / bandwidth`.

Times are the least of `reps` runs (load only adds time). Calibrating takes about a second (a few small compiles) and is
measured under whatever else the machine runs: on a loaded machine both figures come out slower.
`default_cost(axis_sizes, platform)` is what `parallelize(..., strategy="auto")` uses when no model is set: a
fixed CPU figure (measured here, scaled by the devices sharing the host's cores) on CPU devices,
the GPU-like defaults elsewhere, so that plans do not change from run to run.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field

import numpy as np

from ..reshard import CostModel
from ..reshard.cost import AxisLink
from .cost import DEFAULT_AUTO_COST, AutoCostModel

# Measured with calibrate() on this project's reference machine (2 cores, 4 or 8 virtual CPU
# devices): a 128-square float32 matmul chain runs at ~4e10 FLOP/s per core, shared by the
# devices on it; a collective between virtual devices costs ~18 us and moves ~4 GB/s per device
# sharing a core (2 per core: 36 us and 2 GB/s; 4 per core: ~75 us and ~1 GB/s). Used when
# parallelize searches without a model: deterministic, unlike a calibration.
CPU_CORE_FLOPS_PER_S = 4e10
CPU_LINK_PER_CORE = AxisLink(alpha_us=18.0, gbytes_per_s=4.0)


@dataclass(frozen=True)
class Calibration:
    """What `calibrate` measured (returned with the model it builds; `describe()` prints it)."""
    flops_per_s: float                      # per device, with every device of the mesh busy
    links: dict = field(default_factory=dict)   # axis name -> AxisLink
    devices_sharing_cores: float = 1.0      # mesh devices per host core (CPU) or 1
    platform: str = ""


def _best_s(fn, args, reps: int) -> float:
    """The least of `reps` timed runs: other work on the machine only ever adds time."""
    import jax
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t)
    return float(np.min(times))


def _jax_mesh(mesh):
    from jax.sharding import Mesh
    if isinstance(mesh, Mesh):
        return mesh
    from ..distributed.mesh import as_process_mesh
    return as_process_mesh(mesh).jax_mesh()


def devices_sharing_cores(jmesh) -> float:
    """Mesh devices per host core when the devices are virtual CPU devices of this process."""
    devices = list(jmesh.devices.flat)
    if devices[0].platform != "cpu":
        return 1.0
    return max(1.0, len(devices) / (os.cpu_count() or 1))


def measure_flops(jmesh, n: int = 128, chain: int = 8, reps: int = 15) -> float:
    """FLOP/s of one device while every device of the mesh runs an n x n matmul chain."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P
    axes = tuple(jmesh.axis_names)
    count = jmesh.devices.size
    spec = P(axes)

    def chain_of(matmul: bool):
        def local(x, w):
            for _ in range(chain):
                x = (x @ w if matmul else x) * 0.5
            return x
        return jax.jit(jax.shard_map(local, mesh=jmesh, in_specs=(spec, spec), out_specs=spec))

    x = jax.device_put(jnp.ones((count * n, n), jnp.float32), NamedSharding(jmesh, spec))
    w = jax.device_put(jnp.full((count * n, n), 1.0 / n, jnp.float32), NamedSharding(jmesh, spec))
    busy = _best_s(chain_of(True), (x, w), reps)
    idle = _best_s(chain_of(False), (x, w), reps)
    return chain * 2.0 * n ** 3 / max(busy - idle, 1e-9)


def measure_link(jmesh, axis: str, small: int = 256, large: int = 1 << 16, chain: int = 24,
                 reps: int = 15) -> AxisLink:
    """Latency and bandwidth of all-gathers over one mesh axis (`small`, `large`: float32
    elements each device holds before the gather)."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P
    k = jmesh.shape[axis]
    axes = tuple(jmesh.axis_names)
    spec = P(axes)

    def per_gather_s(n: int) -> float:
        def chain_of(gather: bool):
            def local(x):
                for _ in range(chain):
                    y = jax.lax.all_gather(x, axis, tiled=True) if gather else jnp.tile(x, k)
                    x = y[:n] * 0.5 + y[n:2 * n] * 0.5 if k > 1 else y * 0.5
                return x
            return jax.jit(jax.shard_map(local, mesh=jmesh, in_specs=spec, out_specs=spec))
        x = jax.device_put(jnp.ones((jmesh.devices.size * n,), jnp.float32), NamedSharding(jmesh, spec))
        return (_best_s(chain_of(True), (x,), reps) - _best_s(chain_of(False), (x,), reps)) / chain

    t_small, t_large = per_gather_s(small), per_gather_s(large)
    received = lambda n: 4.0 * n * (k - 1)  # noqa: E731  bytes one device receives
    slope_s = max(t_large - t_small, 1e-9) / (received(large) - received(small))
    alpha_us = max((t_small - slope_s * received(small)) * 1e6, 0.1)
    return AxisLink(alpha_us=alpha_us, gbytes_per_s=1e-9 / slope_s)


def calibrate(mesh, reps: int = 15) -> tuple[AutoCostModel, Calibration]:
    """Measures the compute rate and, per mesh axis of size > 1, a collective's latency and
    bandwidth on `mesh` (a ProcessMesh, a mesh text like 'dp=2,mp=2', or a jax Mesh)."""
    jmesh = _jax_mesh(mesh)
    flops = measure_flops(jmesh, reps=reps)
    links = {a: measure_link(jmesh, a, reps=reps) for a in jmesh.axis_names if jmesh.shape[a] > 1}
    cal = Calibration(flops, links, devices_sharing_cores(jmesh), next(iter(jmesh.devices.flat)).platform)
    return AutoCostModel(flops_per_s=flops, reshard=CostModel.make(links=links)), cal


def default_cost(axis_sizes: dict, platform: str, n_cores: int | None = None) -> AutoCostModel:
    """The model `parallelize(..., strategy="auto")` searches with when none was set: on CPU
    devices (virtual devices of one process) the fixed CPU figures, scaled by the devices sharing
    each core; elsewhere `DEFAULT_AUTO_COST`. Deterministic (nothing is timed)."""
    if platform != "cpu":
        return DEFAULT_AUTO_COST
    n_devices = math.prod(axis_sizes.values())
    sharing = max(1.0, n_devices / (n_cores or os.cpu_count() or 1))
    link = AxisLink(alpha_us=CPU_LINK_PER_CORE.alpha_us * sharing,
                    gbytes_per_s=CPU_LINK_PER_CORE.gbytes_per_s / sharing)
    return AutoCostModel(flops_per_s=CPU_CORE_FLOPS_PER_S / sharing,
                         reshard=CostModel.make(links={a: link for a, k in axis_sizes.items() if k > 1}))


def describe(cal: Calibration) -> str:
    links = ", ".join(f"{a}: {l.alpha_us:.1f} us + {l.gbytes_per_s:.2f} GB/s" for a, l in cal.links.items())
    return (f"{cal.platform}: {cal.flops_per_s:.3g} FLOP/s per device ({cal.devices_sharing_cores:g} devices per "
            f"core), collectives {links or 'none'}")


__all__ = ["CPU_CORE_FLOPS_PER_S", "CPU_LINK_PER_CORE", "Calibration", "calibrate", "default_cost", "describe",
           "devices_sharing_cores"]
