"""spmdkit.distributed: Paddle-style semi-automatic parallelism on JAX (see docs/training.md).

    mesh = ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
    w = shard_tensor(w, mesh, [Replicate(), Shard(1)])
    step = parallelize(train_step, mesh, in_placements=(param_placements, [Shard(0), Replicate()]))
    new_params, loss = step(params, batch)      # global arrays in and out
    print(step.plan); print(visualize(new_params["w"]))
"""
from .checkpoint import CheckpointError, load_state_dict, save_state_dict
from .errors import DistError
from .manual import local_map, shard_map
from .mesh import ProcessMesh, as_process_mesh
from .mixed_precision import cast_floating, mixed_precision
from .parallelize import Parallelized, parallelize
from .placements import Partial, Replicate, Shard
from .processes import init, shutdown
from .tensor import placements_of, reshard, reshard_plan, shard_tensor
from .visualize import render_blocks, visualize

__all__ = ["CheckpointError", "DistError", "Parallelized", "Partial", "ProcessMesh", "Replicate", "Shard",
           "as_process_mesh", "cast_floating", "init", "load_state_dict", "local_map", "mixed_precision", "parallelize",
           "placements_of", "render_blocks", "reshard", "reshard_plan", "save_state_dict", "shard_map", "shard_tensor",
           "shutdown", "visualize"]
