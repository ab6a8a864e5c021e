"""`spmdkit reshard`: print the plan from one sharding to another, its bytes and its cost.

    spmdkit reshard --mesh x=2,y=4 --shape 8,16 '[{"x"}, {}]' '[{}, {"x", "y"}]'
    spmdkit reshard --mesh 2x2 --shape 8,8 '[{}, {}] partial={"x"}:max' '[{"x"}, {}]'

A sharding is Shardy's dim list (optionally followed by partial={"a", ...}:TYPE or
unreduced={...}) or a whole `#sdy.sharding<...>` attribute. `register(subparsers)` adds the
command to an argparse parser (the spmdkit CLI); `main(argv)` runs it alone.
"""
from __future__ import annotations

import argparse
import math
import re
import sys

from ..cli_support import ArgumentParser, positive_int, guarded

from .adapt import as_layout
from .cost import AxisLink, CostModel
from .layout import MeshSpec, ReshardError
from .planner import naive_plan, plan_reshard
from .simulate import prove_plan

PROVE_MAX_ELEMENTS = 1 << 20   # larger tensors are not simulated unless --prove is given


def parse_mesh_arg(text: str) -> MeshSpec:
    """'x=2,y=4', or '2x4' (axes named x, y, z, w in order): spmdkit.sharding.mesh_text's syntax."""
    return MeshSpec.make(text)


def parse_shape_arg(text: str) -> tuple[int, ...]:
    parts = [p.strip() for p in text.strip().strip("[]").split(",") if p.strip()]
    if not parts or not all(p.isdigit() for p in parts):
        raise ReshardError(f"shape '{text}': write dim sizes separated by commas, e.g. 8,16")
    return tuple(int(p) for p in parts)


def parse_link_arg(text: str) -> tuple[str, AxisLink]:
    """AXIS=LATENCY_US:GBPS, e.g. x=2.7:19.3."""
    m = re.fullmatch(r"\s*([^=]+)=([\d.]+):([\d.]+)\s*", text)
    if not m or float(m.group(3)) <= 0:
        raise ReshardError(f"link '{text}': write AXIS=LATENCY_US:GBPS, e.g. x=2.7:19.3")
    return m.group(1), AxisLink(float(m.group(2)), float(m.group(3)))


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("reshard", help="plan the collectives from one sharding to another",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", help='e.g. \'[{"x"}, {}]\' or \'[{}, {}] partial={"x"}:sum\'')
    p.add_argument("target", help='e.g. \'[{}, {"x", "y"}]\'')
    p.add_argument("--mesh", required=True, help="x=2,y=4 (or 2x4: axes x, y, ...)")
    p.add_argument("--shape", required=True, help="global shape, e.g. 8,16")
    p.add_argument("--itemsize", type=positive_int, default=4, help="bytes per element (default 4)")
    p.add_argument("--devices-per-node", type=positive_int, default=8,
                   help="axes spanning more devices than this are inter-node (default 8)")
    p.add_argument("--link", action="append", default=[], metavar="AXIS=US:GBPS",
                   help="latency (us) and bandwidth (GB/s) of one axis; repeatable")
    p.add_argument("--sub-axes", choices=["auto", "on", "off"], default="auto",
                   help="let collectives use factors of an axis (default: auto, for small meshes)")
    p.add_argument("--prove", action="store_true",
                   help=f"simulate the plan on numpy even above {PROVE_MAX_ELEMENTS} elements")
    p.set_defaults(fn=cmd_reshard)
    return p


def cmd_reshard(args) -> int:
    mesh = parse_mesh_arg(args.mesh)
    shape = parse_shape_arg(args.shape)
    source = as_layout(args.source, mesh)
    target = as_layout(args.target, mesh)
    cost = CostModel.make(dict(parse_link_arg(t) for t in args.link), devices_per_node=args.devices_per_node)
    sub_axes = {"auto": None, "on": True, "off": False}[args.sub_axes]
    plan = plan_reshard(mesh, shape, source, target, args.itemsize, cost, sub_axes)
    naive = naive_plan(mesh, shape, source, target, args.itemsize, cost, sub_axes)
    print(plan.describe())
    print(f"  naive plan (reduce, gather all, slice): {naive.bytes:.0f} bytes/device, {naive.cost_us:.3f} us")
    if args.prove or math.prod(shape) <= PROVE_MAX_ELEMENTS:
        prove_plan(plan)
        print("  proven: every device's result equals its shard of the target (numpy simulation)")
    return 0


def main(argv=None) -> int:
    ap = ArgumentParser(prog="spmdkit")
    register(ap.add_subparsers(dest="cmd", required=True))
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    return guarded(args.fn, args, prog="spmdkit reshard")
