"""The `spmdkit` command: infer one rule's shardings, list the rules, or verify them.

    spmdkit infer matmul --mesh 2x2 '[64,32]{1,0}' '[32,48]{0,-1}' False False
    spmdkit infer matmul --backward '[64,32]' '[32,48]' '[64,48]{1,0}' False False
    spmdkit factors jax.dot_general '[8,32]' '[32,16]' '[1]' '[0]'   (the call's factor table)
    spmdkit list
    spmdkit verify matmul          (see `spmdkit verify --help`)
    spmdkit train --example gpt --mesh 2x2 --steps 5     (train, partitioned by spmdkit, vs one device)
    spmdkit propagate FILE.mlir / spmdkit explain FILE.mlir VALUE
    spmdkit reshard --mesh x=2,y=4 --shape 8,16 '[{"x"}, {}]' '[{}, {"x", "y"}]'
    spmdkit sharding 'sdy.mesh @m = <["x"=2]>' '#sdy.sharding<@m, [{"x"}]>' --shape 8

A tensor is written SHAPE{MAPPING}, e.g. [64,32]{1,-1}; a dim split over several mesh dims is a
list, [64,32]{[0,1],-1}; a partial tensor adds p{MESH_DIM:TYPE,...}, e.g. [8,8]{-1,-1}p{0:sum};
a replicated one just SHAPE; an absent optional tensor is `none`; a list input is (T1;T2). Attributes are Python
literals (True, 3, [0,1], 'tanh'), in order or by name (axis=1). A mesh is 2x2 or dp=2,mp=2.
"""
from __future__ import annotations

import argparse
import ast
import re
import sys

from . import core
from ._core import DistTensorSpec, ProcessMesh, TensorDistAttr
from .cli_support import ArgumentParser, guarded
from .sharding.mesh_text import MeshText, parse_mesh_text

_TENSOR = re.compile(r"^\[(?P<shape>[-\d,\s]*)\](\{(?P<map>.*?)\})?(p\{(?P<partial>[^}]*)\})?$")
_NAMED = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*)$", re.S)
MAX_DEVICES = 1 << 16   # a rule call never needs a larger mesh; ids are listed one by one


def parse_mesh(text) -> ProcessMesh:
    """A ProcessMesh from `2x2` or `dp=2,mp=2` (spmdkit.sharding.mesh_text); dims d0, d1, ...
    unless named."""
    mesh = text if isinstance(text, MeshText) else parse_mesh_text(text)
    if mesh.num_devices > MAX_DEVICES:
        raise ValueError(f"mesh {mesh} has {mesh.num_devices} devices; rule calls take at most {MAX_DEVICES}")
    dims = list(mesh.sizes)
    ids = list(range(mesh.num_devices))

    def nest(ids, dims):
        if len(dims) == 1:
            return ids
        step = len(ids) // dims[0]
        return [nest(ids[i * step:(i + 1) * step], dims[1:]) for i in range(dims[0])]

    names = [n for n, _ in mesh.axes([f"d{i}" for i in range(len(dims))])]
    return ProcessMesh(nest(ids, dims), names)


def _int(text: str, what: str, tensor: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise ValueError(f"tensor '{tensor}': {what} {text!r} is not an integer") from None
    if not -2**63 <= n < 2**63:
        raise ValueError(f"tensor '{tensor}': {what} {n} does not fit in 64 bits")
    return n


def _mesh_dim(d) -> bool:
    return isinstance(d, int) and not isinstance(d, bool) and -2**31 <= d < 2**31


def parse_tensor(text: str, mesh: ProcessMesh) -> DistTensorSpec:
    if text.lower() == "none":
        return DistTensorSpec([], TensorDistAttr())
    m = _TENSOR.match(text.replace(" ", ""))
    if not m:
        raise ValueError(f"cannot read tensor '{text}' (write SHAPE{{MAPPING}}, e.g. [64,32]{{1,-1}})")
    shape = [_int(s, "dim size", text) for s in m.group("shape").split(",") if s]
    attr = TensorDistAttr()
    attr.process_mesh = mesh
    if m.group("map"):
        try:
            mapping = ast.literal_eval("[" + m.group("map") + "]")
        except (ValueError, SyntaxError):
            raise ValueError(f"tensor '{text}': mapping {{{m.group('map')}}} is not a list of mesh dims "
                             f"(write e.g. {{1,-1}} or {{[0,1],-1}})") from None
        entries = []
        for d in mapping:
            if _mesh_dim(d):
                entries.append([] if d == -1 else [d])
            elif isinstance(d, list) and all(_mesh_dim(x) for x in d):
                entries.append(d)
            else:
                raise ValueError(f"tensor '{text}': mapping entry {d!r} is not a mesh dim or a list of them")
        attr.multi_dims_mapping = entries
    else:
        attr.dims_mapping = [-1] * len(shape)
    if m.group("partial"):
        for item in m.group("partial").split(","):
            dim, _, kind = item.partition(":")
            attr._set_partial_dims([_int(dim, "partial mesh dim", text)], kind or "sum")
    return DistTensorSpec(shape, attr)


def parse_value(text: str, kind: str, mesh: ProcessMesh):
    """One argument, read as the rule's parameter `kind` ('tensor', 'int_list', ...) asks."""
    t = text.strip()
    if kind == "tensor_list":
        return [parse_tensor(p, mesh) for p in t.strip("()").split(";") if p.strip()]
    if kind in ("tensor", "optional_tensor", "output_tensor"):
        return parse_tensor(t, mesh)
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    try:
        return ast.literal_eval(t)
    except (ValueError, SyntaxError):
        return t  # a bare string attribute


def parse_call(op: str, params, texts: list[str], mesh: ProcessMesh) -> tuple[list, dict]:
    """The rule's positional and named arguments from the command line: values in the rule's
    order, then attributes by name (`axis=1`; a name the rule has, else the text is positional)."""
    kinds = {p[0]: p[1] for p in params}
    args, kwargs = [], {}
    for text in texts:
        m = _NAMED.match(text.strip())
        if m and m.group("name") in kinds:
            name = m.group("name")
            if name in kwargs:
                raise ValueError(f"{op}: argument '{name}' is given twice")
            kwargs[name] = parse_value(m.group("value"), kinds[name], mesh)
            continue
        if kwargs:
            raise ValueError(f"{op}: positional argument {text!r} follows named ones ({', '.join(kwargs)})")
        if len(args) >= len(params):
            raise ValueError(f"{op}: takes at most {len(params)} arguments ({', '.join(p[0] for p in params)}), "
                             f"got {text!r} as argument {len(args) + 1}")
        args.append(parse_value(text, params[len(args)][1], mesh))
    return args, kwargs


def describe(attr) -> str:
    if isinstance(attr, list):
        return "[" + "; ".join(describe(a) for a in attr) + "]"
    dims = ",".join(str(d[0]) if len(d) == 1 else ("-1" if not d else str(d).replace(" ", ""))
                    for d in attr.multi_dims_mapping)
    partial = attr.partial_status
    tail = " partial{" + ", ".join(f"{k}:{v}" for k, v in sorted(partial.items())) + "}" if partial else ""
    return "{" + dims + "}" + tail


def _pull_options(args) -> None:
    """Options may also follow the op's arguments (argparse leaves them in the remainder)."""
    rest, it = [], iter(args.args)
    for a in it:
        if a == "--backward":
            args.backward = True
        elif a == "--mesh":
            if (text := next(it, None)) is None:
                raise ValueError("--mesh needs a value, e.g. --mesh 2x2 or --mesh dp=2,mp=2")
            args.mesh = text
        elif a.startswith("--mesh="):
            args.mesh = a.split("=", 1)[1]
        else:
            rest.append(a)
    args.args = rest


def cmd_infer(args) -> int:
    _pull_options(args)
    mesh = parse_mesh(args.mesh)
    rule = core.get_phi_spmd_rule(args.op)
    params = rule.backward_params if args.backward else rule.forward_params
    values, named = parse_call(args.op, params, args.args, mesh)
    fn = rule.infer_backward if args.backward else rule.infer_forward
    ins, outs = fn(*values, **named)
    sig = rule.backward_signature if args.backward else rule.forward_signature
    print(f"{args.op} ({rule.spec}) {'second function: ' + str(rule.backward_kind) if args.backward else 'forward'}")
    print(f"  signature: ({sig})")
    for label, group in (("input", ins), ("output", outs)):
        for i, a in enumerate(group):
            print(f"  {label} {i}: {describe(a)}")
    return 0


def cmd_factors(args) -> int:
    """The factor table of a forward call (Shardy's OpShardingRule), as Shardy prints it."""
    _pull_options(args)
    mesh = parse_mesh(args.mesh)
    rule = core.get_phi_spmd_rule(args.op)
    values, named = parse_call(args.op, rule.forward_params, args.args, mesh)
    print(rule.factors(*values, **named))
    return 0


def cmd_list(args) -> int:
    for e in core.rule_entries():
        names = ", ".join([e["name"], *e["aliases"]])
        second = e["backward_kind"] + (f" ({e['grad_op']})" if e["grad_op"] else "")
        print(f"{e['spec']:<45} second={second:<22} {names}")
    print(f"{len(core.list_spmd_rules())} names")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The `spmdkit` command; a mistake in the arguments is one line on stderr and exit status 2."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "verify":
        from .verify.cli import main as verify_main
        return guarded(verify_main, argv[1:], prog="spmdkit verify")
    if argv and argv[0] in ("propagate", "explain"):  # whole-program propagation (spmdkit.propagation)
        from .propagation.cli import main as propagation_main
        return guarded(propagation_main, argv, prog=f"spmdkit {argv[0]}")
    if argv and argv[0] == "sharding":  # check a sharding, show its other forms (spmdkit.sharding)
        from .sharding.command import main as sharding_main
        return guarded(sharding_main, argv[1:], prog="spmdkit sharding")
    if argv and argv[0] == "auto":  # automatic sharding: search, solve, annotate (spmdkit.auto)
        from .auto.cli import main as auto_main
        return guarded(auto_main, argv[1:], prog="spmdkit auto")
    ap = ArgumentParser(prog="spmdkit", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("infer", help="infer the shardings of one rule call")
    p.add_argument("op")
    p.add_argument("--mesh", default="2x2", help="mesh shape, e.g. 4 or 2x2 or dp=2,mp=2 (default 2x2)")
    p.add_argument("--backward", action="store_true", help="call the second function (reverse or grad rule)")
    p.add_argument("args", nargs=argparse.REMAINDER,
                   help="tensors and attributes, in the rule's order; attributes also by name (axis=1)")
    p.set_defaults(fn=cmd_infer)
    p = sub.add_parser("factors", help="print the factor table of one forward call")
    p.add_argument("op")
    p.add_argument("--mesh", default="2x2", help="mesh shape (the table does not depend on it)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="tensors and attributes, in the rule's order")
    p.set_defaults(fn=cmd_factors)
    p = sub.add_parser("list", help="list the registered rules")
    p.set_defaults(fn=cmd_list)
    sub.add_parser("verify", help="execute rules on simulated ranks (spmdkit verify --help)")
    sub.add_parser("propagate", help="propagate a program's shardings (spmdkit propagate --help)")
    sub.add_parser("explain", help="why a value got its sharding (spmdkit explain --help)")
    sub.add_parser("sharding", help="check a Shardy sharding, show its other forms (spmdkit sharding --help)")
    sub.add_parser("auto", help="search a sharding for every value of a program (spmdkit auto --help)")
    from .reshard.cli import register as register_reshard
    from .examples.cli import register as register_train
    register_reshard(sub)
    register_train(sub)
    args = ap.parse_args(argv)
    return guarded(args.fn, args, prog=f"spmdkit {args.cmd}")


if __name__ == "__main__":
    sys.exit(main())
