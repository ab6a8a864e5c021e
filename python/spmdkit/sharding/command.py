"""`python -m spmdkit.sharding`: check a sharding against its meshes and show its other forms.

    python -m spmdkit.sharding 'sdy.mesh @m = <["x"=2, "y"=4]>' '#sdy.sharding<@m, [{"x"}, {"y"}]>' --shape 8x8
    python -m spmdkit.sharding x=2,y=4 '[{"x"}, {"y"}]' --shape 8x8    (the mesh as every command writes it)

Prints the canonical text, the local shape, the dims_mapping and the placements (or why a form
cannot say it); exits 2 with the error (line, column, caret) when the input is bad. A dim that
its axes do not divide is shown as Shardy lays it out: padded up to a multiple, the last devices
holding fewer real elements (spmdkit's reshard plans and partitioner refuse such a dim).
The integrator may mount `main` as a `spmdkit sharding` subcommand.
"""
from __future__ import annotations

import argparse
import sys

from ..cli_support import ArgumentParser

from .canonical import canonicalize
from .dist_attr import to_dist_attr
from .errors import ShardingError
from .mesh import Mesh
from .mesh_text import MeshTextError, parse_mesh_text
from .placements import to_placements
from .text_parse import parse_mesh_table, parse_sharding


def _shape(text: str) -> tuple[int, ...]:
    parts = text.strip().strip("[]").lower().replace(",", "x").split("x")
    if not all(p.strip().isdigit() for p in parts):
        raise argparse.ArgumentTypeError(f"a shape is like 4x8 or 4,8 (sizes >= 0), got {text!r}")
    return tuple(int(p) for p in parts)


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="spmdkit sharding", description=__doc__.splitlines()[0])
    parser.add_argument("meshes", help="sdy.mesh declarations, one or several (newline or ';' separated), "
                                       "or one mesh as x=2,y=4 or 2x4 (named @mesh)")
    parser.add_argument("sharding", help="#sdy.sharding<...> or <@mesh, [...]>, or [...] on the one mesh")
    parser.add_argument("--shape", type=_shape, default=None, help="the tensor's shape, e.g. 4x8")
    parser.add_argument("--name", default="tensor", help="the tensor's name in error messages")
    args = parser.parse_args(argv)
    try:
        meshes = _meshes(args.meshes)
        text = args.sharding.strip()
        if text.startswith("[") and len(meshes) == 1:  # dims only: on the one mesh
            text = f"<@{next(iter(meshes))}, {text}>"
        sharding = parse_sharding(text, meshes, args.shape, args.name)
        mesh = sharding.resolve_mesh(meshes)
        local = sharding.local_shape(args.shape, mesh) if args.shape is not None else None
    except ShardingError as e:
        print(f"spmdkit sharding: error: {e}", file=sys.stderr)
        return 2
    print(f"sharding:     {canonicalize(sharding, mesh)}")
    if local is not None:
        print(f"local shape:  {'x'.join(map(str, local))}{_padding(args.shape, local, sharding, mesh)}")
    for label, convert in (("dims_mapping", lambda: _mapping(sharding, mesh, args.name)),
                           ("placements", lambda: str(to_placements(sharding, mesh, name=args.name)))):
        try:
            print(f"{label + ':':<13} {convert()}")
        except ShardingError as e:
            print(f"{label + ':':<13} none ({e})")
    return 0


def _meshes(text: str) -> dict:
    """sdy.mesh declarations, or one mesh in the commands' syntax (x=2,y=4 or 2x4) named @mesh."""
    if "sdy.mesh" in text or "<" in text:
        return parse_mesh_table(text.replace(";", "\n"))
    try:
        return {"mesh": Mesh(dict(parse_mesh_text(text).axes()))}
    except MeshTextError as e:
        raise ShardingError(f"{e}; or declare meshes as sdy.mesh @m = <[\"x\"=2]>") from None


def _mapping(sharding, mesh, name: str) -> str:
    attr = to_dist_attr(sharding, mesh, name=name)
    text = str(attr.multi_dims_mapping)
    return text + (f" partial {attr.partial_status}" if attr.partial_status else "")


def _padding(shape, local, sharding, mesh) -> str:
    """How an uneven dim is laid out (Shardy pads it), when a dim is uneven."""
    uneven = []
    for d, (n, k, dim) in enumerate(zip(shape, local, sharding.dims)):
        parts = dim.shard_count(mesh)
        if n % parts:
            held = [max(0, min(k, n - i * k)) for i in range(parts)]
            per = ",".join(map(str, held)) if parts <= 16 else f"{held[0]},...,{held[-1]}"
            uneven.append(f"dim {d} of {n} over {parts} devices is padded to {k * parts}; real elements per device {per}")
    if not uneven:
        return ""
    return "  (uneven: " + "; ".join(uneven) + "; spmdkit reshard refuses uneven dims: pad the tensor first)"
