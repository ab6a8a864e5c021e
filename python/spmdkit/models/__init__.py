"""Pure-JAX models (a GPT block, an MLP) that the IR importer, propagation and training use."""
from . import gpt, mlp  # noqa: F401
