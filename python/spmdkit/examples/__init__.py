"""Training examples for spmdkit.distributed (MLP, GPT block) with checks against one device; run
`python -m spmdkit.examples.gpt --mesh 2x2` or `spmdkit train --example gpt --mesh 2x2`.
Importing this package does not import JAX (the command sets the device count first)."""
