"""Whole-program sharding propagation (Shardy's algorithm) over our rules' factor tables."""
from .factor_text import FactorTableError, parse_factor_table
from .graph import Graph
from .sharding_text import ShardingSyntaxError, parse_sharding

__all__ = ["Graph", "FactorTableError", "ShardingSyntaxError", "parse_factor_table", "parse_sharding"]
