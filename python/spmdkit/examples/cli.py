"""`spmdkit train --example gpt --mesh 2x2 --steps 5`: run an example (spmdkit.examples.train) on
virtual CPU devices and print its report; exit 1 if any check fails. `--example charlm` is the
real run (spmdkit.examples.charlm): `--steps 300 --plot loss.png --save-every 100 --ckpt DIR`.

JAX fixes its device count when it starts, so the command sets XLA_FLAGS before importing JAX,
or re-executes itself in a fresh interpreter when JAX was already imported with too few devices.
Wire it with `spmdkit.examples.cli.register(subparsers)`; the handler is `main(args)`.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from ..cli_support import mesh_sizes_argument

FLAG = "--xla_force_host_platform_device_count"
MESH_SIZES = {"2x2": 4, "2x2x2": 8}


def add_arguments(p: argparse.ArgumentParser, example: str | None = None) -> None:
    if example is None:
        p.add_argument("--example", choices=["gpt", "mlp", "charlm"], default="gpt",
                       help="the model to train (charlm: a byte-level GPT on the stdlib's sources)")
    p.add_argument("--mesh", type=mesh_sizes_argument, choices=sorted(MESH_SIZES), default="2x2",
                   help="2x2: dp x mp; 2x2x2: dp x mp x fsdp")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--optimizer", choices=["adamw", "sgd"], default="adamw")
    p.add_argument("--strategy", choices=["propagate", "complete", "auto"], default="propagate",
                   help="where the shardings come from: Shardy-style propagation, Paddle-style completion, or the search (only the batch placed)")
    p.add_argument("--no-xla", action="store_true", help="skip compiling XLA's automatic partitioning")
    p.add_argument("--json", action="store_true", help="print the numbers as one JSON line too")
    p.add_argument("--precision", choices=["f32", "bf16"], default="f32",
                   help="bf16: compute in bfloat16 with float32 master weights")
    g = p.add_argument_group("charlm (the real run)")
    g.add_argument("--plot", metavar="PNG", help="write the loss curves (ours and one device) to this PNG")
    g.add_argument("--save-every", type=int, default=0, metavar="N", help="save a checkpoint every N steps")
    g.add_argument("--ckpt", metavar="DIR", help="checkpoint folder")
    g.add_argument("--resume", action="store_true", help="continue from the latest checkpoint in --ckpt")
    g.add_argument("--no-reference", action="store_true", help="skip the one-device run beside ours")
    g.add_argument("--sample-bytes", type=int, default=160, help="bytes to generate at the end (0: none)")


def register(subparsers) -> None:
    p = subparsers.add_parser("train", help="train an example (MLP, GPT block) partitioned by spmdkit, "
                                            "checked against one device")
    add_arguments(p)
    p.set_defaults(fn=main, handler=main)   # spmdkit.cli dispatches on args.fn


def _argv(args) -> list[str]:
    out = ["--example", args.example, "--mesh", args.mesh, "--steps", str(args.steps), "--optimizer",
           args.optimizer, "--strategy", args.strategy, "--precision", args.precision,
           "--save-every", str(args.save_every), "--sample-bytes", str(args.sample_bytes)]
    out += ["--plot", args.plot] if args.plot else []
    out += ["--ckpt", args.ckpt] if args.ckpt else []
    flags = {"--no-xla": args.no_xla, "--json": args.json, "--resume": args.resume, "--no-reference": args.no_reference}
    return out + [flag for flag, on in flags.items() if on]


def main(args) -> int:
    need = MESH_SIZES[args.mesh]
    if "jax" in sys.modules:
        import jax
        if jax.device_count() < need:  # too late to add devices here: a fresh interpreter
            env = dict(os.environ, XLA_FLAGS=f"{os.environ.get('XLA_FLAGS', '')} {FLAG}={need}".strip())
            return subprocess.run([sys.executable, "-m", "spmdkit.examples", *_argv(args)], env=env).returncode
    elif FLAG not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {FLAG}={max(need, 8)}".strip()
    if args.steps < 1:
        raise SystemExit("--steps must be at least 1")
    if args.example == "charlm":
        from .charlm_cli import main as charlm_main
        return charlm_main(args)
    from .train import report, run
    row = run(args.example, args.mesh, args.steps, args.optimizer, args.strategy, xla=not args.no_xla,
              precision=args.precision)
    print(report(row))
    if args.json:
        print(json.dumps({k: v for k, v in row.items() if k != "pictures"}))
    return 0 if all(row["checks"].values()) else 1


def run_module(example: str | None = None, argv=None) -> int:
    """`python -m spmdkit.examples[.gpt|.mlp]`."""
    p = argparse.ArgumentParser(prog=f"python -m spmdkit.examples{'.' + example if example else ''}",
                                description=__doc__.splitlines()[0])
    add_arguments(p, example)
    args = p.parse_args(argv)
    if example is not None:
        args.example = example
    return main(args)
