"""`python -m spmdkit.sharding`: check a sharding against its meshes and show its other forms.

    python -m spmdkit.sharding 'sdy.mesh @m = <["x"=2, "y"=4]>' '#sdy.sharding<@m, [{"x"}, {"y"}]>' --shape 8x8

Prints the canonical text, the local shape, the dims_mapping and the placements (or why a form
cannot say it); exits 1 with the error (line, column, caret) when the input is bad.
The integrator may mount `main` as a `spmdkit sharding` subcommand.
"""
from __future__ import annotations

import argparse
import sys

from .canonical import canonicalize
from .dist_attr import to_dist_attr
from .errors import ShardingError
from .placements import to_placements
from .text_parse import parse_mesh_table, parse_sharding


def _shape(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(n) for n in text.lower().replace(",", "x").split("x") if n)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a shape is like 4x8, got {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="spmdkit sharding", description=__doc__.splitlines()[0])
    parser.add_argument("meshes", help="sdy.mesh declarations, one or several (newline or ';' separated)")
    parser.add_argument("sharding", help="#sdy.sharding<...> or <@mesh, [...]>")
    parser.add_argument("--shape", type=_shape, default=None, help="the tensor's shape, e.g. 4x8")
    parser.add_argument("--name", default="tensor", help="the tensor's name in error messages")
    args = parser.parse_args(argv)
    try:
        meshes = parse_mesh_table(args.meshes.replace(";", "\n"))
        sharding = parse_sharding(args.sharding, meshes, args.shape, args.name)
        mesh = sharding.resolve_mesh(meshes)
    except ShardingError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"sharding:     {canonicalize(sharding, mesh)}")
    if args.shape is not None:
        print(f"local shape:  {'x'.join(map(str, sharding.local_shape(args.shape, mesh)))}")
    for label, convert in (("dims_mapping", lambda: _mapping(sharding, mesh, args.name)),
                           ("placements", lambda: str(to_placements(sharding, mesh, name=args.name)))):
        try:
            print(f"{label + ':':<13} {convert()}")
        except ShardingError as e:
            print(f"{label + ':':<13} none ({e})")
    return 0


def _mapping(sharding, mesh, name: str) -> str:
    attr = to_dist_attr(sharding, mesh, name=name)
    text = str(attr.multi_dims_mapping)
    return text + (f" partial {attr.partial_status}" if attr.partial_status else "")
