"""Import a JAX function into the IR: trace it with `jax.make_jaxpr`, one op per equation.

- An equation of primitive `p` becomes an op `jax.p` whose attributes are its params converted
  by `jax_params` (the rule registry's names, nothing dropped).
- Literals and closed-over constants become `stablehlo.constant` ops (attribute `value`: an
  exact dense attribute, see constants.py), one per use site, in the block of the use: functions
  and manual computation bodies (isolated from above) never read an outer value.
- `jit`/`pjit`/`closed_call`/`remat` bodies and `custom_jvp_call`/`custom_vjp_call` primal bodies
  become private functions called with `func.call` (attribute `callee`: the function's name); one
  function per distinct jaxpr (and jit shardings). A jit's named in/out shardings become the
  callee's argument/result shardings. `inline_calls=True` inlines the bodies instead (and drops
  the jit shardings). A custom derivative rule is not imported: differentiate before importing,
  as `train_step` does.
- An `optimization_barrier` over several values becomes one barrier per value (its rule is one
  value's identity; XLA's grouping of the values is not kept).
- `custom_linear_solve` (jnp.linalg.solve, inv) is its `solve` jaxpr, inlined; `svd` without U and
  V (jnp.linalg.norm(ord=2)) is imported with them (reduced), unused: its rule describes three results.
- `shard_map` becomes `sdy.manual_computation` (in/out shardings from the specs, the manual axes
  implicit in a spec listed as explicitly replicated, body on local shapes, `sdy.return`).
- `while` becomes `stablehlo.while` (operands: the carried values; the regions read the loop
  constants from the enclosing block), `cond` becomes `stablehlo.case` on the branch index (the
  branches read their operands from the enclosing block), both ending in `stablehlo.return`.
- `scan` becomes the while loop JAX itself would run (index, dynamic slices of the scanned
  inputs, dynamic updates of the stacked outputs), traced by JAX and imported in its place.
- `sharding_constraint` (`jax.lax.with_sharding_constraint`) and `reshard`
  (`jax.sharding.reshard`) become `sdy.sharding_constraint` (attribute `sharding`; unconstrained
  dims are open dims): both say "this value is laid out so", which propagation and the
  partitioner honour.
- Other params holding a NamedSharding (JAX writes them for arrays on an explicit mesh) become
  `#sdy.sharding` attributes (jax_params). A sharding's mesh is the program's mesh of the same
  axes when it has no devices (JAX's AbstractMesh inside a trace).
- `jax.debug.print` and `jax.debug.callback` (host callbacks with no results) are dropped with a
  warning: the imported program computes, it runs no host code. Callbacks that return values
  (`pure_callback`, `io_callback`) are refused: their results would have no op to compute them.
"""
from __future__ import annotations

import inspect
import re
import warnings
from functools import lru_cache
from typing import Any, Optional, Sequence

import numpy as np

from .constants import dense_attr
from .core import Block, Function, Op, Program, Region, Value, paused_gc
from .errors import IRError
from .jax_keys import physical_aval, physical_data, physical_jaxpr, touches_keys
from .jax_params import ParamError, attrs_from_params, jax_mesh_axes, remember_primitive
from .types import TensorType, element_type

CALL_PRIMITIVES = frozenset({"jit", "pjit", "closed_call", "core_call", "remat", "remat2", "checkpoint",
                             "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr"})
# host callbacks without results: dropped (with a warning); those with results: refused
DEBUG_PRIMITIVES = frozenset({"debug_callback", "debug_print"})
CALLBACK_PRIMITIVES = frozenset({"pure_callback", "io_callback"})


class JaxImportError(IRError):
    """A JAX program the IR cannot hold; names the primitive and the equation."""


def import_jax(fn, *example_args, arg_shardings=None, result_shardings=None, meshes=None,
               inline_calls: bool = False, name: Optional[str] = None) -> Program:
    """Trace `fn(*example_args)` and return it as a Program whose `main` is `fn`.

    `arg_shardings`: None, or one entry per flattened argument leaf (a flat sequence, or a pytree
    shaped like `example_args` with None / TensorSharding / Shardy text / jax NamedSharding
    leaves); `result_shardings` likewise per flattened result leaf. `meshes`: {name: spmdkit
    Mesh} that the shardings name. Example args may be arrays or `jax.ShapeDtypeStruct`s.
    """
    import jax

    if not callable(fn):
        raise TypeError(f"import_jax: expected a callable, got {type(fn).__name__}")
    try:
        closed = jax.make_jaxpr(fn)(*example_args)
    except Exception as e:  # tracing errors are the user's function failing on these args
        raise JaxImportError(f"tracing {getattr(fn, '__name__', fn)!r} failed: {type(e).__name__}: {e}") from e
    program = Program(name=f"jit_{_symbol(getattr(fn, '__name__', 'fn'))}")
    for mesh_name, mesh in (meshes or {}).items():
        program.meshes[mesh_name] = mesh
    importer = _Importer(program, inline_calls)
    with paused_gc():  # the program's objects are all kept: full collections would rescan them
        main = importer.function(closed, "main", visibility=None)
    names = _arg_names(fn, example_args)
    for value, arg_name in zip(main.args, names):
        value.name = arg_name
    _attach_shardings(program, main, arg_shardings, result_shardings,
                      [_key_dims(a) for a in closed.in_avals], [_key_dims(a) for a in closed.out_avals])
    if name is not None:
        program.name = name
    return program


# -- the importer -------------------------------------------------------------------------------
class _Importer:
    def __init__(self, program: Program, inline_calls: bool):
        self.program = program
        self.inline_calls = inline_calls
        self.functions: dict[tuple, str] = {}  # (id(jaxpr), arg and result shardings) -> function name

    def function(self, closed, name: str, visibility: Optional[str]) -> Function:
        jaxpr, consts = _open(closed)
        fn = Function(name=name, visibility=visibility)
        self.program.add_function(fn)
        env: dict = {}
        for var in jaxpr.invars:
            env[var] = fn.body.add_arg(_type(var.aval))
        self._bind_consts(fn.body, jaxpr.constvars, consts, env)
        self.lower(fn.body, jaxpr, env, name)
        outs = [self.read(fn.body, env, v, name) for v in jaxpr.outvars]
        fn.body.append(Op.create("func.return", outs, []))
        fn.result_types = [v.type for v in outs]
        fn.result_shardings = [None] * len(outs)
        return fn

    def _bind_consts(self, block: Block, constvars, consts, env) -> None:
        for var, const in zip(constvars, consts):
            env[var] = self.constant(block, const, var.aval)

    def constant(self, block: Block, data, aval) -> Value:
        data, aval = physical_data(data, aval), physical_aval(aval)
        array = np.asarray(data, dtype=aval.dtype)
        op = block.append(Op.create("stablehlo.constant", [], [_type(aval)], {"value": dense_attr(array)}))
        return op.result

    def read(self, block: Block, env, atom, where: str) -> Value:
        from jax.extend.core import Literal
        if isinstance(atom, Literal):
            return self.constant(block, atom.val, atom.aval)
        try:
            return env[atom]
        except KeyError:
            raise JaxImportError(f"{where}: variable {atom} is used before it is defined") from None

    def lower(self, block: Block, jaxpr, env, where: str) -> None:
        for index, eqn in enumerate(jaxpr.eqns):
            prim = eqn.primitive.name
            here = f"{where}: equation {index} ({prim})"
            remember_primitive(eqn.primitive)
            operands = [self.read(block, env, v, here) for v in eqn.invars]
            result_types = [_type(v.aval) for v in eqn.outvars]
            if prim in DEBUG_PRIMITIVES and not eqn.outvars:
                warnings.warn(f"{here}: jax.debug.print / jax.debug.callback is dropped: the imported program "
                              f"runs no host callbacks (print the step's results instead)", stacklevel=2)
                continue
            if prim in CALLBACK_PRIMITIVES:
                raise JaxImportError(f"{here}: a host callback ({prim}) computes its results in Python, which a "
                                     f"partitioned program cannot run; compute them with JAX ops", op=f"jax.{prim}")
            if prim in CALL_PRIMITIVES:
                results = self.call(block, eqn, operands, here)
            elif prim == "shard_map":
                results = self.manual_computation(block, eqn, operands, result_types, here)
            elif prim == "while":
                results = self.while_loop(block, eqn, operands, result_types, env, here)
            elif prim == "cond":
                results = self.case(block, eqn, operands, result_types, env, here)
            elif prim == "scan":
                results = self.scan(block, eqn, operands, here)
            elif prim == "custom_linear_solve":  # jnp.linalg.solve / inv: its `solve` jaxpr computes it
                results = self.linear_solve(block, eqn, operands, here)
            elif prim == "optimization_barrier" and len(operands) > 1:
                # its rule is one value's identity: a barrier over several values is imported as
                # one per value (the same values; XLA's grouping of them is not kept)
                results = [block.append(Op.create("jax.optimization_barrier", [v], [t], {},
                                                  location=_location(eqn, here))).results[0]
                           for v, t in zip(operands, result_types)]
            elif prim == "svd" and not eqn.params.get("compute_uv", True):
                # without U and V the primitive has one result, where its rule (jax_linalg.yaml)
                # describes three: imported with them (reduced, so no larger than the input), unused
                s_type = result_types[0]
                m, n, k = *operands[0].type.shape[-2:], s_type.shape[-1]
                batch = tuple(s_type.shape[:-1])
                uv = [TensorType(batch + (m, k), s_type.dtype), TensorType(batch + (k, n), s_type.dtype)]
                results = self.rule_op(block, eqn, operands, [s_type] + uv, here,
                                       dict(eqn.params, compute_uv=True, full_matrices=False))[:1]
            elif prim in ("sharding_constraint", "reshard"):
                results = self.sharding_constraint(block, eqn, operands, result_types, here)
            elif touches_keys(eqn):  # PRNG keys: their uint32 data and the ops JAX lowers to
                results = self.inline_jaxpr(block, physical_jaxpr(eqn), operands, here + " (on key data)")
            elif prim == "reshape" and _transposes(eqn.params.get("dimensions")):
                # lax.reshape's `dimensions` transposes first (jnp.prod's reduction tree sets it):
                # imported as the transpose and a plain reshape, whose rules each say what they do
                results = self.inline_jaxpr(block, _transpose_then_reshape(
                    tuple(eqn.invars[0].aval.shape), eqn.invars[0].aval.dtype, tuple(eqn.params["dimensions"]),
                    tuple(eqn.params["new_sizes"])), operands, here + " (transpose, reshape)")
            else:
                results = self.rule_op(block, eqn, operands, result_types, here)
            for var, value in zip(eqn.outvars, results):
                env[var] = value

    # -- one op per kind of equation -----------------------------------------------------------
    def rule_op(self, block, eqn, operands, result_types, here, params=None) -> list[Value]:
        prim = eqn.primitive.name
        params = eqn.params if params is None else params
        for key, value in params.items():
            if key == "update_jaxpr":  # a scatter's combiner: jax_params rebuilds it from the name
                continue
            if _is_jaxpr(value) or (isinstance(value, (tuple, list)) and any(_is_jaxpr(v) for v in value)):
                raise JaxImportError(f"{here}: primitive {prim!r} carries a sub-program (param {key!r}) and is not "
                                     f"supported (supported: {', '.join(sorted(CALL_PRIMITIVES))}, shard_map, "
                                     f"while, cond, scan)", op=f"jax.{prim}")
        try:
            rank = result_types[0].rank if result_types else None  # the shardings JAX writes are its result's
            attrs = attrs_from_params(prim, params, lambda named, where: self.sharding_attr(named, where, rank))
        except ParamError as e:
            raise JaxImportError(f"{here}: {e.reason}", op=f"jax.{prim}") from None
        op = Op.create(f"jax.{prim}", operands, result_types, attrs, location=_location(eqn, here))
        return block.append(op).results

    def call(self, block, eqn, operands, here) -> list[Value]:
        params = eqn.params
        sub = params.get("jaxpr", params.get("call_jaxpr", params.get("fun_jaxpr")))
        if sub is None:
            raise JaxImportError(f"{here}: no body found in params {sorted(params)}", op=f"jax.{eqn.primitive.name}")
        jaxpr, consts = _open(sub)
        if self.inline_calls:
            env = dict(zip(jaxpr.invars, operands))
            self._bind_consts(block, jaxpr.constvars, consts, env)
            self.lower(block, jaxpr, env, here)
            return [self.read(block, env, v, here) for v in jaxpr.outvars]
        arg_sh = self._jit_shardings(params.get("in_shardings"), [v.aval for v in jaxpr.invars])
        res_sh = self._jit_shardings(params.get("out_shardings"), [v.aval for v in jaxpr.outvars])
        key = (id(jaxpr), tuple(map(str, arg_sh)), tuple(map(str, res_sh)))
        if key not in self.functions:
            name = self._fresh_name(str(params.get("name") or eqn.primitive.name))
            self.functions[key] = name
            fn = self.function(sub, name, visibility="private")
            for value, s in zip(fn.args, arg_sh):
                value.sharding = s
            fn.result_shardings = list(res_sh)
        callee = self.program.functions[self.functions[key]]
        op = Op.create("func.call", operands, list(callee.result_types), {"callee": callee.name},
                       location=_location(eqn, here))
        return block.append(op).results

    def manual_computation(self, block, eqn, operands, result_types, here) -> list[Value]:
        params = eqn.params
        mesh_name = self.mesh_name(params["mesh"])
        mesh = self.program.meshes[mesh_name]
        manual = params.get("newly_manual_axes", params.get("manual_axes"))
        if manual is None:
            manual = set(mesh.axis_names) - set(params.get("auto", ()))
        manual = sorted(manual, key=mesh.axis_index)
        in_sh = [spec_to_sharding(mesh_name, mesh, s, len(v.type.shape), replicated=manual)
                 for s, v in zip(params["in_specs"], operands)]
        out_sh = [spec_to_sharding(mesh_name, mesh, s, len(t.shape), replicated=manual)
                  for s, t in zip(params["out_specs"], result_types)]
        jaxpr, consts = _open(params["jaxpr"])
        body = Block()
        env = {var: body.add_arg(_type(var.aval)) for var in jaxpr.invars}
        self._bind_consts(body, jaxpr.constvars, consts, env)
        self.lower(body, jaxpr, env, here)
        body.append(Op.create("sdy.return", [self.read(body, env, v, here) for v in jaxpr.outvars], []))
        attrs = {"in_shardings": in_sh, "out_shardings": out_sh, "manual_axes": manual}
        if "check_vma" in params:
            attrs["jax.check_vma"] = bool(params["check_vma"])
        op = Op.create("sdy.manual_computation", operands, result_types, attrs, [Region([body])],
                       location=_location(eqn, here))
        return block.append(op).results

    def while_loop(self, block, eqn, operands, result_types, env, here) -> list[Value]:
        p = eqn.params
        nc, nb = p["cond_nconsts"], p["body_nconsts"]
        cond_consts, body_consts, carried = operands[:nc], operands[nc:nc + nb], operands[nc + nb:]
        regions = []
        for closed, consts, is_cond in ((p["cond_jaxpr"], cond_consts, True), (p["body_jaxpr"], body_consts, False)):
            jaxpr, jconsts = _open(closed)
            region_block = Block()
            inner = dict(zip(jaxpr.invars[:len(consts)], consts))
            for var in jaxpr.invars[len(consts):]:
                inner[var] = region_block.add_arg(_type(var.aval))
            self._bind_consts(region_block, jaxpr.constvars, jconsts, inner)
            self.lower(region_block, jaxpr, inner, here + (" cond" if is_cond else " body"))
            outs = [self.read(region_block, inner, v, here) for v in jaxpr.outvars]
            region_block.append(Op.create("stablehlo.return", outs, []))
            regions.append(Region([region_block]))
        op = Op.create("stablehlo.while", carried, result_types, {}, regions, location=_location(eqn, here))
        return block.append(op).results

    def case(self, block, eqn, operands, result_types, env, here) -> list[Value]:
        index, args = operands[0], operands[1:]
        regions = []
        for branch in eqn.params["branches"]:
            jaxpr, consts = _open(branch)
            region_block = Block()
            inner = dict(zip(jaxpr.invars, args))
            self._bind_consts(region_block, jaxpr.constvars, consts, inner)
            self.lower(region_block, jaxpr, inner, here + " branch")
            outs = [self.read(region_block, inner, v, here) for v in jaxpr.outvars]
            region_block.append(Op.create("stablehlo.return", outs, []))
            regions.append(Region([region_block]))
        op = Op.create("stablehlo.case", [index], result_types, {}, regions, location=_location(eqn, here))
        return block.append(op).results

    def scan(self, block, eqn, operands, here) -> list[Value]:
        """A scan as JAX runs it: a while loop over an index i that slices the scanned inputs at i
        (length - 1 - i when reversed) and writes the stacked outputs there. The loop's own ops
        (the index, the slices, the writes) come from small jaxprs JAX traces of them alone, so
        every op has its exact params; the scan's body is imported from its own jaxpr, never
        traced again, so a body holding collectives inside a shard_map (whose axis names are bound
        only there) imports too."""
        p = eqn.params
        jaxpr, consts = _open(p["jaxpr"])
        nc, nk, length, reverse = p["num_consts"], p["num_carry"], p["length"], p["reverse"]
        outer, init, xs = operands[:nc], operands[nc:nc + nk], operands[nc + nk:]
        y_specs = tuple((tuple(v.aval.shape), v.aval.dtype) for v in jaxpr.outvars[nk:])
        x_specs = tuple((tuple(v.aval.shape), v.aval.dtype) for v in eqn.invars[nc + nk:])
        start = self.inline_jaxpr(block, _scan_start(length, y_specs), [], here + " (start)")  # i = 0, empty stacks
        carried = [start[0], *init, *start[1:]]
        types = [v.type for v in carried]
        cond = Block()
        i = cond.add_arg(types[0])
        for t in types[1:]:
            cond.add_arg(t)
        cond.append(Op.create("stablehlo.return", self.inline_jaxpr(cond, _scan_cond(length), [i], here + " (cond)"), []))
        body = Block()
        args = [body.add_arg(t) for t in types]
        i, carry, stacks = args[0], args[1:1 + nk], args[1 + nk:]
        index, *x = self.inline_jaxpr(body, _scan_slices(length, reverse, x_specs), [i, *xs], here + " (slices)")
        env = dict(zip(jaxpr.invars, [*outer, *carry, *x]))
        self._bind_consts(body, jaxpr.constvars, consts, env)
        self.lower(body, jaxpr, env, here + " body")
        outs = [self.read(body, env, v, here) for v in jaxpr.outvars]
        after = self.inline_jaxpr(body, _scan_writes(length, y_specs), [i, index, *stacks, *outs[nk:]], here + " (writes)")
        body.append(Op.create("stablehlo.return", [after[0], *outs[:nk], *after[1:]], []))
        op = Op.create("stablehlo.while", carried, types, {}, [Region([cond]), Region([body])],
                       location=_location(eqn, here))
        return block.append(op).results[1:]  # the final carry, then the stacked outputs

    def linear_solve(self, block, eqn, operands, here) -> list[Value]:
        """lax.custom_linear_solve: its value is its `solve` jaxpr applied to that jaxpr's
        constants and the right-hand side (the other jaxprs define its derivatives, which a
        differentiated step already holds as equations of their own)."""
        lengths, jaxprs = eqn.params["const_lengths"], eqn.params["jaxprs"]
        start = lengths.matvec + lengths.vecmat
        consts = operands[start:start + lengths.solve]
        rhs = operands[lengths.matvec + lengths.vecmat + lengths.solve + lengths.transpose_solve:]
        return self.inline_jaxpr(block, jaxprs.solve, list(consts) + list(rhs), here + " (its solve)")

    def inline_jaxpr(self, block, sub, operands, here) -> list[Value]:
        """The ops of closed jaxpr `sub` applied to `operands`, in place of an equation."""
        env = dict(zip(sub.jaxpr.invars, operands))
        self._bind_consts(block, sub.jaxpr.constvars, sub.consts, env)
        self.lower(block, sub.jaxpr, env, here)
        return [self.read(block, env, v, here) for v in sub.jaxpr.outvars]

    def sharding_constraint(self, block, eqn, operands, result_types, here) -> list[Value]:
        prim = eqn.primitive.name
        named = eqn.params["sharding" if prim == "sharding_constraint" else "dst_sharding"]
        mesh_obj, spec = getattr(named, "mesh", None), getattr(named, "spec", None)
        if mesh_obj is None or spec is None:
            raise JaxImportError(f"{here}: only NamedSharding constraints are supported, got {type(named).__name__}",
                                 op=f"jax.{prim}")
        if len(operands) != 1:
            raise JaxImportError(f"{here}: a constraint of {len(operands)} values (one expected)", op=f"jax.{prim}")
        try:
            mesh_name = self.mesh_name(mesh_obj)
            sharding = spec_to_sharding(mesh_name, self.program.meshes[mesh_name], spec, result_types[0].rank,
                                        open_dims=eqn.params.get("unconstrained_dims", ()))
        except JaxImportError as e:
            raise JaxImportError(f"{here}: {e.reason}", op=f"jax.{prim}") from None
        op = Op.create("sdy.sharding_constraint", operands, result_types, {"sharding": sharding},
                       location=_location(eqn, here))
        return block.append(op).results

    def _jit_shardings(self, shardings, avals) -> list:
        """A jit's in/out shardings as TensorShardings (None where unspecified or not named)."""
        from jax.sharding import NamedSharding
        out = []
        for i, aval in enumerate(avals):
            s = shardings[i] if shardings is not None and i < len(shardings) else None
            if isinstance(s, NamedSharding):
                mesh_name = self.mesh_name(s.mesh)
                out.append(spec_to_sharding(mesh_name, self.program.meshes[mesh_name], s.spec, len(aval.shape)))
            else:
                out.append(None)
        return out

    # -- names ---------------------------------------------------------------------------------
    def _fresh_name(self, base: str) -> str:
        base = _symbol(base)
        name, n = base, 0
        while name in self.program.functions or name == "main":
            n += 1
            name = f"{base}_{n}"
        return name

    def mesh_name(self, jax_mesh) -> str:
        """The program's name of a jax mesh; a mesh without devices (an AbstractMesh, as JAX
        writes into traces) is the known mesh of the same axes when there is one."""
        axes, ids = jax_mesh_axes(jax_mesh)
        if ids is None:
            for name, known in self.program.meshes.items():
                if [(a.name, a.size) for a in known.axes] == axes:
                    return name
        return register_mesh(self.program, mesh_from_jax(jax_mesh))

    def sharding_attr(self, named, where: str, rank: Optional[int]):
        """A NamedSharding param as a TensorSharding on the program's mesh (jax_params)."""
        try:
            mesh_name = self.mesh_name(named.mesh)
            rank = len(named.spec) if rank is None or rank < len(named.spec) else rank
            return spec_to_sharding(mesh_name, self.program.meshes[mesh_name], named.spec, rank)
        except JaxImportError as e:
            raise ParamError(f"{where}: {e.reason}") from None


# -- shardings ---------------------------------------------------------------------------------
def mesh_from_jax(jax_mesh):
    """The spmdkit Mesh of a jax Mesh / AbstractMesh (device ids kept when it has devices)."""
    from ..sharding import Mesh
    axes, ids = jax_mesh_axes(jax_mesh)
    return Mesh(axes, device_ids=ids)


def register_mesh(program: Program, mesh) -> str:
    """The name of `mesh` in `program.meshes`, adding it as `mesh`, `mesh_1`, ... when new."""
    for name, known in program.meshes.items():
        if known == mesh:
            return name
    name, n = "mesh", 0
    while name in program.meshes:
        n += 1
        name = f"mesh_{n}"
    program.meshes[name] = mesh
    return name


def spec_to_sharding(mesh_name: str, mesh, spec, rank: int, replicated: Sequence[str] = (), open_dims=()):
    """A TensorSharding from a jax PartitionSpec (shorter specs pad with closed replicated dims).

    `replicated`: axes to list as explicitly replicated when the spec does not use them (the
    manual axes of a manual computation); `open_dims`: dims that are open (`?`).
    """
    from jax.sharding import PartitionSpec

    from ..sharding import DimSharding, TensorSharding
    entries = list(spec) if spec is not None else []
    if len(entries) > rank:
        raise JaxImportError(f"partition spec {spec} has {len(entries)} entries for a rank-{rank} value")
    dims, used = [], set()
    for i in range(rank):
        entry = entries[i] if i < len(entries) else None
        if entry is PartitionSpec.UNCONSTRAINED:
            dims.append(DimSharding((), is_closed=False))
            continue
        axes = () if entry is None else ((entry,) if isinstance(entry, str) else tuple(entry))
        for a in axes:
            if not mesh.has_axis(a):
                raise JaxImportError(f"partition spec {spec} names axis {a!r}, which mesh @{mesh_name} lacks")
        used.update(axes)
        dims.append(DimSharding(axes, is_closed=i not in set(open_dims)))
    rest = sorted((a for a in replicated if a not in used), key=mesh.axis_index)
    return TensorSharding(mesh_name, dims, replicated=rest)


def _key_dims(aval) -> int:
    """How many trailing dims a value's IR type has beyond its JAX shape: a PRNG key array's
    key-data dims (threefry: 1), else 0."""
    return len(physical_aval(aval).shape) - len(aval.shape)


def _resolve_shardings(program: Program, given, types: list, labels: list[str], what: str, key_dims=None) -> list:
    """One TensorSharding or None per value, from a flat list or a pytree of shardings. `key_dims`:
    per value, the trailing key-data dims of a PRNG key array, which a sharding of the key array's
    own rank leaves out: they are added, replicated (a key is never split inside)."""
    import jax

    from ..sharding import DimSharding, TensorSharding, parse_sharding, verify
    is_leaf = lambda x: x is None or isinstance(x, (TensorSharding, str, jax.sharding.Sharding))  # noqa: E731
    if isinstance(given, (list, tuple)) and len(given) == len(types) and all(is_leaf(s) for s in given):
        flat = list(given)
    else:
        flat = jax.tree_util.tree_leaves(given, is_leaf=is_leaf)
        if len(flat) != len(types):
            raise JaxImportError(f"{what} has {len(flat)} leaves; the function has {len(types)} array "
                                 f"{'arguments' if what == 'arg_shardings' else 'results'}")
    out = []
    for t, label, sharding, extra in zip(types, labels, flat, key_dims or [0] * len(types)):
        if isinstance(sharding, str):
            sharding = parse_sharding(sharding)
        elif isinstance(sharding, jax.sharding.NamedSharding):
            mesh_name = register_mesh(program, mesh_from_jax(sharding.mesh))
            sharding = spec_to_sharding(mesh_name, program.meshes[mesh_name], sharding.spec, t.rank)
        if extra and isinstance(sharding, TensorSharding) and len(sharding.dims) == t.rank - extra:
            sharding = sharding.replace(dims=list(sharding.dims) + [DimSharding(())] * extra)
        elif sharding is not None and not isinstance(sharding, TensorSharding):
            raise TypeError(f"import_jax: {label}: a sharding must be a TensorSharding, Shardy text or a "
                            f"NamedSharding, got {type(sharding).__name__}")
        if sharding is not None:
            if isinstance(sharding.mesh, str) and sharding.mesh not in program.meshes:
                raise JaxImportError(f"{label}: sharding {sharding} names mesh @{sharding.mesh}, which is not in "
                                     f"meshes ({', '.join(sorted(program.meshes)) or 'none given'})", value=label)
            try:
                verify(sharding, program.meshes, t.shape, name=label)
            except ValueError as e:
                raise JaxImportError(str(e), value=label) from None
        out.append(sharding)
    return out


def _attach_shardings(program: Program, main: Function, arg_shardings, result_shardings, arg_key_dims,
                      result_key_dims) -> None:
    if arg_shardings is not None:
        labels = [f"argument {i} ({v.name})" if v.name else f"argument {i}" for i, v in enumerate(main.args)]
        for value, s in zip(main.args, _resolve_shardings(program, arg_shardings, [v.type for v in main.args],
                                                          labels, "arg_shardings", arg_key_dims)):
            value.sharding = s
    if result_shardings is not None:
        labels = [f"result {i}" for i in range(len(main.result_types))]
        main.result_shardings = _resolve_shardings(program, result_shardings, list(main.result_types), labels,
                                                   "result_shardings", result_key_dims)


# -- helpers -------------------------------------------------------------------------------------
def _transposes(dimensions) -> bool:
    return dimensions is not None and tuple(dimensions) != tuple(range(len(dimensions)))


@lru_cache(maxsize=256)
def _transpose_then_reshape(shape: tuple, dtype, dimensions: tuple, new_sizes: tuple):
    import jax
    from jax import lax
    return jax.make_jaxpr(lambda x: lax.reshape(lax.transpose(x, dimensions), new_sizes))(
        jax.ShapeDtypeStruct(shape, dtype))


# -- a scan's loop, traced alone (Importer.scan) ------------------------------------------------
@lru_cache(maxsize=256)
def _scan_start(length: int, y_specs: tuple):
    """() -> (index 0, an empty stack per output)."""
    import jax
    import jax.numpy as jnp
    return jax.make_jaxpr(lambda: (jnp.int32(0), *[jnp.zeros((length, *shape), dtype) for shape, dtype in y_specs]))()


@lru_cache(maxsize=256)
def _scan_cond(length: int):
    """i -> i < length."""
    import jax
    import jax.numpy as jnp
    return jax.make_jaxpr(lambda i: i < length)(jax.ShapeDtypeStruct((), jnp.int32))


@lru_cache(maxsize=256)
def _scan_slices(length: int, reverse: bool, x_specs: tuple):
    """(i, *xs) -> (the index read, each scanned input's slice there)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def slices(i, *xs):
        index = length - 1 - i if reverse else i
        return (index, *[lax.dynamic_index_in_dim(a, index, keepdims=False) for a in xs])
    return jax.make_jaxpr(slices)(jax.ShapeDtypeStruct((), jnp.int32),
                                  *[jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in x_specs])


@lru_cache(maxsize=256)
def _scan_writes(length: int, y_specs: tuple):
    """(i, index, *stacks, *outputs) -> (i + 1, each stack with its output written at index)."""
    import jax
    import jax.numpy as jnp
    from jax import lax
    n = len(y_specs)

    def writes(i, index, *rest):
        return (i + 1, *[lax.dynamic_update_index_in_dim(acc, y, index, 0) for acc, y in zip(rest[:n], rest[n:])])
    scalar = jax.ShapeDtypeStruct((), jnp.int32)
    return jax.make_jaxpr(writes)(scalar, scalar, *[jax.ShapeDtypeStruct((length, *shape), dtype) for shape, dtype in y_specs],
                                  *[jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in y_specs])


def _open(closed) -> tuple[Any, Sequence]:
    """(jaxpr, consts) of a ClosedJaxpr or a bare Jaxpr."""
    jaxpr = getattr(closed, "jaxpr", None)
    if jaxpr is not None and hasattr(closed, "consts"):
        return jaxpr, list(closed.consts)
    return closed, []


def _is_jaxpr(value) -> bool:
    return isinstance(value, _jaxpr_classes())


@lru_cache(maxsize=1)
def _jaxpr_classes() -> tuple:
    from jax.extend.core import ClosedJaxpr, Jaxpr
    return ClosedJaxpr, Jaxpr


def _type(aval) -> TensorType:
    aval = physical_aval(aval)  # a PRNG key array is held as its uint32 data
    if not hasattr(aval, "shape") or not hasattr(aval, "dtype"):
        raise JaxImportError(f"value of abstract type {aval} is not a tensor (tokens and refs are not supported)")
    shape = tuple(aval.shape)
    try:
        return _tensor_type(shape, aval.dtype)
    except TypeError:  # an unhashable shape or dtype: made the long way
        return TensorType(shape, element_type(np.dtype(aval.dtype).name))


@lru_cache(maxsize=4096)
def _tensor_type(shape: tuple, dtype) -> TensorType:
    """One TensorType per shape and dtype (immutable): an importer asks for every value."""
    return TensorType(shape, element_type(np.dtype(dtype).name))


def _symbol(name: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_$.]", "_", name) or "fn"
    return name if re.match(r"[A-Za-z_]", name) else "_" + name


def _location(eqn, here: str) -> str:
    info = getattr(eqn, "source_info", None)
    frame = None
    try:
        from ..jax_compat import user_frame  # private JAX API: only for a readable location
        frame = user_frame(info.traceback) if info is not None else None
    except Exception:  # pragma: no cover - location is best effort
        frame = None
    return f"{here} at {frame.file_name}:{frame.start_line}" if frame is not None else here


def _arg_names(fn, example_args) -> list[str]:
    """Printable names of the flattened argument leaves: `params.wte`, `tokens`, ..."""
    import jax
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        params = []
    names = []
    for i, arg in enumerate(example_args):
        base = params[i] if i < len(params) and not params[i].startswith("*") else f"arg{i}"
        for path, _ in jax.tree_util.tree_flatten_with_path(arg)[0]:
            parts = [base] + [str(getattr(k, "key", getattr(k, "idx", getattr(k, "name", k)))) for k in path]
            names.append(re.sub(r"[^A-Za-z0-9_$.]", "_", ".".join(parts)))
    return names
