"""`python -m spmdkit.examples --example gpt --mesh 2x2 --steps 5`."""
import sys

from .cli import run_module

sys.exit(run_module())
