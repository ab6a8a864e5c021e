"""Run in a subprocess (8 CPU devices): lower jitted functions with NamedShardings and print the
StableHLO+sdy text JAX exports, one module per case, as a JSON list."""
import json
import os

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

mesh = Mesh(np.array(jax.devices()).reshape(2, 2, 2), ("x", "y", "z"))
cases = [
    (P("x", None), P(None, ("y", "z")), P(("y", "x"))),
    (P(("z", "x"), "y"), P(), P(None)),
    (P(None, None), P("z", "x"), P("y")),
]
texts = []
for a_spec, b_spec, out_spec in cases:
    f = jax.jit(lambda a, b: (a @ b).sum(0), in_shardings=(NamedSharding(mesh, a_spec), NamedSharding(mesh, b_spec)),
                out_shardings=NamedSharding(mesh, out_spec))
    texts.append(f.lower(jnp.ones((8, 16)), jnp.ones((16, 8))).as_text())
print(json.dumps(texts))
