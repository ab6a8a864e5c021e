"""`python -m spmdkit.examples.gpt --mesh 2x2 --steps 5`: the GPT-block example (see spmdkit.examples.cli)."""
import sys

from .cli import run_module

if __name__ == "__main__":
    sys.exit(run_module("gpt"))
