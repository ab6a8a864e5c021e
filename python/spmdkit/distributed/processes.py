"""Starting several processes (`jax.distributed`) with defaults under which a dead process ends the
run instead of hanging it.

JAX's own defaults wait 300 s for the other processes to start and take a process for dead after
100 s without a heartbeat; meanwhile the survivors sit in a collective that will never complete.
`init` connects with shorter limits: when a process dies (killed, out of memory, a crash), the
coordination service notices the missing heartbeats and every other process exits with JAX's
"Terminating process because the JAX distributed service detected fatal errors ... another task
died" within `heartbeat_timeout_s` (and at once when the coordinator, process 0, dies).
"""
from __future__ import annotations

from .errors import DistError

HEARTBEAT_TIMEOUT_S = 15        # a process silent this long is dead: the others exit
INITIALIZATION_TIMEOUT_S = 60   # all processes must have connected by then
SHUTDOWN_TIMEOUT_S = 60         # jax.distributed.shutdown waits this long for the others


def init(coordinator_address: str | None = None, num_processes: int | None = None, process_id: int | None = None,
         *, local_device_ids=None, coordinator_bind_address: str | None = None,
         heartbeat_timeout_s: int = HEARTBEAT_TIMEOUT_S, initialization_timeout_s: int = INITIALIZATION_TIMEOUT_S,
         shutdown_timeout_s: int = SHUTDOWN_TIMEOUT_S) -> None:
    """`jax.distributed.initialize` with limits that end a run whose process died: the others
    exit (non-zero, with JAX's message naming the unhealthy task) within `heartbeat_timeout_s`
    seconds instead of blocking in a collective. Arguments left None are read from the
    environment or a cluster scheduler as JAX does (JAX_COORDINATOR_ADDRESS, SLURM, ...).
    A process that cannot reach the others within `initialization_timeout_s` raises DistError."""
    import jax
    for name, value in (("heartbeat_timeout_s", heartbeat_timeout_s),
                        ("initialization_timeout_s", initialization_timeout_s),
                        ("shutdown_timeout_s", shutdown_timeout_s)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise DistError(f"{name} must be a whole number of seconds >= 1, got {value!r}")
    try:
        jax.distributed.initialize(coordinator_address, num_processes, process_id,
                                   local_device_ids=local_device_ids,
                                   coordinator_bind_address=coordinator_bind_address,
                                   initialization_timeout=initialization_timeout_s,
                                   heartbeat_timeout_seconds=heartbeat_timeout_s,
                                   shutdown_timeout_seconds=shutdown_timeout_s)
    except RuntimeError as e:
        if "initialize should only be called once" in str(e):
            raise DistError("jax.distributed is already initialized in this process") from e
        raise DistError(f"process {process_id} of {num_processes} could not join the run at "
                        f"{coordinator_address} within {initialization_timeout_s} s: {str(e)[:500]}") from e


def shutdown() -> None:
    """`jax.distributed.shutdown`: waits (at most the shutdown timeout) for the other processes."""
    import jax
    jax.distributed.shutdown()
