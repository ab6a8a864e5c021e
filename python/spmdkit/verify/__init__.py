"""spmdkit.verify: prove sharding rules by executing them on simulated ranks (numpy).

    from spmdkit.verify import get_backend, load_specs, run_random, run_exhaustive
    specs = load_specs()
    run_random(get_backend("paddle"), specs["matmul"], specs, cases=50)

CLI: `spmdkit verify OP`, `spmdkit verify --all [--against-paddle]` (or python -m spmdkit.verify).
"""
from .backends import RuleCall, RuleRejected, get_backend
from .cases import Case, Sample, TensorArg
from .exhaustive import run_exhaustive
from .placement import Placement
from .random_mode import run_random
from .simulate import Execution, Verdict, verify_case, verify_placements
from .specs import load_specs, rules_dir, verifiable_ops
from . import families  # noqa: F401,E402  (registers the families' samplers and kernels)

__all__ = ["Case", "Execution", "Placement", "RuleCall", "RuleRejected", "Sample", "TensorArg", "Verdict",
           "get_backend", "load_specs", "rules_dir", "run_exhaustive", "run_random", "verifiable_ops",
           "verify_case", "verify_placements"]
