"""`python -m spmdkit.examples.mlp --mesh 2x2 --steps 5`: the MLP example (see spmdkit.examples.cli)."""
import sys

from .cli import run_module

if __name__ == "__main__":
    sys.exit(run_module("mlp"))
