"""Fixtures of the differential harness: both backends once per session, and the agreement
table printed at the end of the run."""
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
try:
    import spmdkit.verify  # noqa: F401
except ImportError:  # an install without verify (or none): use the source tree
    sys.path.insert(0, str(ROOT / "python"))
    for name in [m for m in sys.modules if m == "spmdkit" or m.startswith("spmdkit.")]:
        del sys.modules[name]

AGREEMENT: dict = {}


@pytest.fixture(scope="session")
def paddle_backend():
    pytest.importorskip("paddle")
    from spmdkit.verify import get_backend
    return get_backend("paddle")


@pytest.fixture(scope="session")
def peer_backend():
    """spmdkit's rules; SPMDKIT_DIFF_PEER=replicate|paddle swaps in another peer to test the harness."""
    from spmdkit.verify import get_backend
    peer = os.environ.get("SPMDKIT_DIFF_PEER", "spmdkit")
    if peer == "spmdkit":
        pytest.importorskip("spmdkit._core")
    return get_backend(peer)


@pytest.fixture(scope="session")
def agreement():
    return AGREEMENT


def pytest_terminal_summary(terminalreporter):
    if not AGREEMENT:
        return
    tr = terminalreporter
    tr.section("paddle vs spmdkit agreement")
    tr.write_line(f"{'op':<20} {'function':<9} {'cases':>6} {'agree':>6} {'documented':>10} {'disagree':>9} {'(both right)':>13}")
    for (op, fn), row in sorted(AGREEMENT.items()):
        tr.write_line(f"{op:<20} {fn:<9} {row['cases']:>6} {row['agree']:>6} {row['documented']:>10} {row['disagree']:>9} {row['both_right']:>13}")
    if os.environ.get("SPMDKIT_DIFF_REASONS"):  # the documented differences that occurred, by reason
        tr.section("documented differences (spmdkit proven right, Paddle wrong or refusing)")
        for (op, fn), row in sorted(AGREEMENT.items()):
            for reason, n in sorted(row.get("reasons", {}).items(), key=lambda kv: -kv[1]):
                tr.write_line(f"{op}.{fn}: {n:>4}  {reason}")
