"""Mesh-shape search: given only a device count, search every mesh shape that factors it and keep the
cheapest plan by the cost model (issue 17's "1x8, 2x4, 4x2, 8x1, 2x2x2").

    from spmdkit.auto import search_meshes
    batch = lambda mesh: [Shard(0)] + [Replicate()] * (mesh.ndim - 1)     # the batch over dim 0
    found = search_meshes(train_step, 8, lambda mesh: (None, None, batch(mesh), batch(mesh)), args)
    print(found)                  # one line per shape: modeled us/step, bytes, search time
    step = found.best.step        # the Parallelized of the cheapest shape, ready to call

`in_placements` is a function of the ProcessMesh (placements lists have one entry per mesh dim,
so they depend on the shape); `None` leaves stay free for the search. Shapes: every ordered
factorization into 2 dims (1xN and Nx1 included: the batch placed on a dim of size 1 is not
split, so the search may split it elsewhere) and, with `max_ndim=3`, into 3 dims of sizes > 1.
Dims are named `dim_names[:ndim]` (default dp, mp, fsdp). Every shape is searched with the cost
model `parallelize` would use (set_default_cost, else the default for its axes), so their
objectives are in one unit. A shape whose search fails (a pinned placement that does not divide,
for instance) is listed with its error and skipped.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from .errors import AutoShardingError

DIM_NAMES = ("dp", "mp", "fsdp")


def mesh_shapes(n_devices: int, max_ndim: int = 3) -> list[tuple[int, ...]]:
    """The shapes searched for `n_devices`: 2-dim ones (with 1 x n and n x 1), then the 3-dim ones
    with every dim > 1 (8: 1x8, 2x4, 4x2, 8x1, 2x2x2)."""
    if isinstance(n_devices, bool) or not isinstance(n_devices, int) or n_devices < 1:
        raise AutoShardingError(f"n_devices must be a positive integer, got {n_devices!r}")
    if max_ndim not in (2, 3):
        raise AutoShardingError(f"max_ndim must be 2 or 3, got {max_ndim!r}")
    divisors = [d for d in range(1, n_devices + 1) if n_devices % d == 0]
    shapes = [(d, n_devices // d) for d in divisors]
    if max_ndim == 3:
        shapes += [(a, b, n_devices // (a * b)) for a in divisors[1:] for b in divisors[1:]
                   if n_devices % (a * b) == 0 and n_devices // (a * b) > 1]
    return shapes


@dataclass
class MeshCandidate:
    shape: tuple[int, ...]
    dim_names: tuple[str, ...]
    objective_us: float = math.inf      # modeled time per step (the search's objective)
    comm_bytes: float = math.inf        # modeled bytes per device per step
    memory_bytes: float = math.inf
    status: str = ""
    seconds: float = 0.0                # trace + search + partition
    error: Optional[str] = None
    step: object = None                 # the Parallelized (None when it failed)

    def line(self) -> str:
        shape = "x".join(map(str, self.shape))
        if self.error:
            return f"{shape:7s} ({','.join(self.dim_names)}): failed: {self.error}"
        return (f"{shape:7s} ({','.join(self.dim_names)}): {self.objective_us:10.1f} us/step, "
                f"{self.comm_bytes:9.0f} B/device, memory {self.memory_bytes:9.0f} B/device, {self.status}, "
                f"{self.seconds:.1f} s")


@dataclass
class MeshSearch:
    n_devices: int
    candidates: list[MeshCandidate] = field(default_factory=list)   # cheapest first, failures last

    @property
    def best(self) -> MeshCandidate:
        ok = [c for c in self.candidates if c.error is None]
        if not ok:
            raise AutoShardingError(f"no mesh shape of {self.n_devices} devices gave a plan: "
                                    + "; ".join(c.line() for c in self.candidates))
        return ok[0]

    def __str__(self) -> str:
        return "\n".join([f"mesh shapes of {self.n_devices} devices, cheapest first:"]
                         + [f"  {c.line()}" for c in self.candidates])


def search_meshes(fn, n_devices: int, in_placements: Callable, example_args: tuple, *,
                  out_placements: Optional[Callable] = None, memory_limit: Optional[float] = None,
                  shapes: Optional[list[tuple[int, ...]]] = None, dim_names=DIM_NAMES,
                  max_ndim: int = 3, device_ids=None) -> MeshSearch:
    """`parallelize(fn, mesh, in_placements(mesh), strategy="auto")` on every shape of
    `mesh_shapes(n_devices)` (or `shapes`), cheapest modeled plan first. `device_ids`: the
    devices, in mesh order (default 0..n-1)."""
    import numpy as np

    from ..distributed import ProcessMesh, parallelize
    if not callable(in_placements):
        raise TypeError("in_placements must be a function of the mesh (placements depend on its number of dims)")
    shapes = [tuple(s) for s in shapes] if shapes is not None else mesh_shapes(n_devices, max_ndim)
    ids = np.arange(n_devices) if device_ids is None else np.asarray(device_ids)
    if ids.size != n_devices:
        raise AutoShardingError(f"device_ids has {ids.size} devices for n_devices={n_devices}")
    found = MeshSearch(n_devices)
    for shape in shapes:
        if math.prod(shape) != n_devices or len(shape) > len(dim_names):
            raise AutoShardingError(f"mesh shape {shape} does not have {n_devices} devices in at most "
                                    f"{len(dim_names)} named dims")
        names = tuple(dim_names[:len(shape)])
        mesh = ProcessMesh(ids.reshape(shape), dim_names=list(names))
        cand = MeshCandidate(shape, names)
        t = time.perf_counter()
        try:
            step = parallelize(fn, mesh, in_placements(mesh),
                               out_placements=out_placements(mesh) if out_placements else None,
                               strategy="auto", example_args=example_args, memory_limit=memory_limit)
        except (ValueError, TypeError) as e:   # the layers' typed errors
            cand.error = f"{type(e).__name__}: {e}"
        else:
            r = step.search_report
            cand.objective_us, cand.comm_bytes, cand.memory_bytes = r.objective_us, r.comm_bytes, r.memory_bytes
            cand.status, cand.step = r.status, step
        cand.seconds = time.perf_counter() - t
        found.candidates.append(cand)
    found.candidates.sort(key=lambda c: (c.error is not None, c.objective_us))
    return found
