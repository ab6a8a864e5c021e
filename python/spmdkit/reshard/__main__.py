"""python -m spmdkit.reshard reshard --mesh x=2,y=4 --shape 8,16 SOURCE TARGET"""
import sys

from .cli import main

sys.exit(main())
