import sys

from ..cli_support import guarded
from .cli import main

sys.exit(guarded(main, prog="python -m spmdkit.verify"))
