"""spmdkit.distributed: Paddle-style semi-automatic parallelism on JAX (see docs/training.md).

    mesh = ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
    w = shard_tensor(w, mesh, [Replicate(), Shard(1)])
    step = parallelize(train_step, mesh, in_placements=(param_placements, [Shard(0), Replicate()]))
    new_params, loss = step(params, batch)      # global arrays in and out
    print(step.plan); print(visualize(new_params["w"]))
"""
from .errors import DistError
from .manual import local_map, shard_map
from .mesh import ProcessMesh, as_process_mesh
from .mixed_precision import cast_floating, mixed_precision
from .parallelize import Parallelized, parallelize
from .placements import Partial, Replicate, Shard
from .tensor import placements_of, reshard, reshard_plan, shard_tensor
from .visualize import render_blocks, visualize

__all__ = ["DistError", "Parallelized", "Partial", "ProcessMesh", "Replicate", "Shard", "as_process_mesh",
           "local_map", "parallelize", "placements_of", "render_blocks", "reshard", "reshard_plan", "shard_map",
           "shard_tensor", "visualize"]
__all__ += ["cast_floating", "mixed_precision"]
