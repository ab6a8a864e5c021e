"""The compiler API's invariants (seed 001) on a Program; each failure is a typed IRVerifyError.

Checked:
- every mesh is a spmdkit Mesh; every sharding (function args/results, op results, op attributes)
  names a declared mesh and its axes, has its value's rank, and passes spmdkit.sharding.verify;
- values are defined before they are used, in their block or an enclosing one, and never across
  a function or a manual computation (both are isolated from above); blocks end in the right
  terminator (`func.return`, `sdy.return`, `stablehlo.return`);
- every op name is known: a rule in the registry, a JAX primitive (`jax.<prim>`), or an op of the
  func / sdy / stablehlo dialects;
- `sdy.manual_computation`: invariants 1-4 of the seed (one mesh; manual axes sorted, known and
  used explicitly in every in/out sharding; free axes minor to manual axes within a dim; the body's
  argument and result types are the local shapes) and nested ones use disjoint manual axes;
- `sdy.sharding_group`: one operand, no result, a non-negative int id; members of a group have
  one shape and sit under the same manual axes (no group crosses a manual computation boundary);
- `sdy.propagation_barrier`: a direction among NONE, FORWARD, BACKWARD, BOTH;
- data-flow ops tie results to operands: `sdy.sharding_constraint`, `sdy.propagation_barrier`,
  `stablehlo.optimization_barrier`, `stablehlo.while` (and its regions), `stablehlo.case` (each
  branch) and `func.call` (the callee's signature) agree on types; `func.return` matches the
  function's result types.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Optional

from ..sharding import Mesh, ShardingError, TensorSharding
from ..sharding import verify as verify_sharding
from .core import Block, Function, Op, Program, Value
from .errors import IRVerifyError, ShardingRankError, UnknownAxisError, UnknownMeshError, UnknownOpError

DIRECTIONS = ("NONE", "FORWARD", "BACKWARD", "BOTH")
SDY_OPS = frozenset({"sdy.sharding_constraint", "sdy.sharding_group", "sdy.propagation_barrier",
                     "sdy.manual_computation", "sdy.return", "sdy.reshard", "sdy.all_gather", "sdy.all_slice",
                     "sdy.all_to_all", "sdy.all_reduce", "sdy.reduce_scatter", "sdy.collective_permute",
                     "sdy.data_flow_edge", "sdy.named_computation", "sdy.constant"})
FUNC_OPS = frozenset({"func.call", "func.return", "call", "return"})
IDENTITY_OPS = ("sdy.sharding_constraint", "sdy.propagation_barrier", "sdy.reshard")


class InvalidShardingError(IRVerifyError):
    """A sharding that breaks an invariant of the representation (duplicate axis, bad sub-axis...)."""


class ManualComputationError(IRVerifyError):
    """An `sdy.manual_computation` that breaks one of the seed's invariants 1-4."""


class ShardingGroupError(IRVerifyError):
    """A malformed `sdy.sharding_group` or a group whose members cannot share a sharding."""


class BarrierDirectionError(IRVerifyError):
    """An `sdy.propagation_barrier` whose allowed_direction is not NONE/FORWARD/BACKWARD/BOTH."""


class DataFlowTypeError(IRVerifyError):
    """Results of a data-flow op (or a call/return) whose types are not tied to its operands'."""


class UndefinedValueError(IRVerifyError):
    """A value used where it is not defined (before its op, or from outside an isolated region)."""


class TerminatorError(IRVerifyError):
    """A block that does not end in its terminator, or a terminator in the middle of a block."""


def verify_program(program: Program, check_op_names: bool = True, explicit_manual_replication: bool = True) -> None:
    """Raise a typed IRVerifyError (naming the op and value) if `program` breaks an invariant.

    explicit_manual_replication: invariant 2 as the seed states it (a manual axis that shards no
    dim must be listed as replicated). JAX 0.10's own lowering of shard_map leaves it implicit
    and the Shardy verifier in jaxlib accepts that; pass False to accept such text.
    """
    if not isinstance(program, Program):
        raise TypeError(f"verify_program: expected a Program, got {type(program).__name__}")
    _Verifier(program, check_op_names, explicit_manual_replication).run()


@lru_cache(maxsize=1)
def _rule_names() -> frozenset:
    from .. import core as rules
    return frozenset(rules.list_spmd_rules())


@lru_cache(maxsize=512)
def _is_stablehlo_op(name: str) -> bool:
    from .mlir_context import shared_context
    return shared_context().is_registered_operation(name)


def _is_jax_primitive(name: str) -> bool:
    from .jax_params import ParamError, primitive
    try:
        primitive(name[len("jax."):])
        return True
    except ParamError:
        return False


def op_name_known(name: str) -> bool:
    if name in _rule_names() or name in SDY_OPS or name in FUNC_OPS:
        return True
    if name.startswith("jax."):
        return _is_jax_primitive(name)
    if name.startswith(("stablehlo.", "chlo.")):
        return _is_stablehlo_op(name)
    return False


def _label(v: Value, names: dict) -> str:
    if v.name:
        return f"%{v.name}"
    key = id(v)
    if key not in names:
        names[key] = f"%{len(names)}"
    return names[key]


class _Verifier:
    def __init__(self, program: Program, check_op_names: bool, explicit_manual_replication: bool = True):
        self.program = program
        self.check_op_names = check_op_names
        self.explicit_manual_replication = explicit_manual_replication
        self.names: dict[int, str] = {}
        self.groups: dict[int, tuple[Value, str]] = {}

    def v(self, value: Value) -> str:
        return _label(value, self.names)

    def run(self) -> None:
        for name, mesh in self.program.meshes.items():
            if not isinstance(mesh, Mesh):
                raise IRVerifyError(f"mesh @{name} is a {type(mesh).__name__}, not a spmdkit Mesh", op="sdy.mesh")
        for fn in self.program.functions.values():
            self.function(fn)

    # -- shardings ---------------------------------------------------------------------------
    def sharding(self, s, shape, op: str, value: str) -> Optional[Mesh]:
        if s is None:
            return None
        if not isinstance(s, TensorSharding):
            raise InvalidShardingError(f"a sharding must be a TensorSharding, got {type(s).__name__}",
                                       op=op, value=value)
        if isinstance(s.mesh, str):
            if s.mesh not in self.program.meshes:
                known = ", ".join("@" + n for n in self.program.meshes) or "none"
                raise UnknownMeshError(f"sharding {s} names mesh @{s.mesh}, which is not declared (meshes: {known})",
                                       op=op, value=value)
            mesh = self.program.meshes[s.mesh]
        else:
            mesh = s.mesh
        for axis in s.axes_used():
            if not mesh.has_axis(axis.name):
                raise UnknownAxisError(f"sharding {s} uses axis {axis}, which mesh {mesh} does not have",
                                       op=op, value=value)
        if shape is not None and s.rank != len(shape) and not (not mesh.axes and s.rank == 0):
            raise ShardingRankError(f"sharding {s} has {s.rank} dims, the value has rank {len(shape)}",
                                    op=op, value=value)
        try:
            verify_sharding(s, mesh, shape if s.rank == len(shape or ()) else None, name=value)
        except ShardingError as e:
            raise InvalidShardingError(str(e), op=op, value=value) from None
        return mesh

    # -- functions and blocks ------------------------------------------------------------------
    def function(self, fn: Function) -> None:
        where = f"func.func @{fn.name}"
        for i, a in enumerate(fn.args):
            self.sharding(a.sharding, a.type.shape, where, f"argument {i} ({self.v(a)})")
        if len(fn.result_shardings) not in (0, len(fn.result_types)):
            raise IRVerifyError(f"{len(fn.result_shardings)} result shardings for {len(fn.result_types)} results",
                                op=where)
        for i, (t, s) in enumerate(zip(fn.result_types, fn.result_shardings)):
            self.sharding(s, t.shape, where, f"result {i}")
        self.block(fn.body, set(), "func.return", where, manual=frozenset())
        ret = fn.body.ops[-1]
        got = [v.type for v in ret.operands]
        if got != list(fn.result_types):
            raise DataFlowTypeError(f"returns {[str(t) for t in got]}, the function's result types are "
                                    f"{[str(t) for t in fn.result_types]}", op="func.return")

    def block(self, block: Block, visible: set, terminator: str, where: str, manual: frozenset) -> None:
        defined = set(visible)
        for a in block.args:
            defined.add(id(a))
        if not block.ops or block.ops[-1].name not in (terminator, "return" if terminator == "func.return" else ""):
            last = block.ops[-1].name if block.ops else "nothing"
            raise TerminatorError(f"{where}: the block must end in '{terminator}', it ends in '{last}'",
                                  op=block.ops[-1].name if block.ops else None)
        for i, op in enumerate(block.ops):
            if op.is_terminator and i != len(block.ops) - 1:
                raise TerminatorError(f"{where}: terminator '{op.name}' is not the block's last op", op=op.name)
            for k, operand in enumerate(op.operands):
                if id(operand) not in defined:
                    raise UndefinedValueError(f"{where}: operand {k} is not defined before this op in this block "
                                              f"or an enclosing one", op=op.name, value=self.v(operand))
            self.op(op, defined, manual, where)
            for r in op.results:
                defined.add(id(r))

    # -- ops -----------------------------------------------------------------------------------
    def op(self, op: Op, defined: set, manual: frozenset, where: str) -> None:
        name = op.name
        if self.check_op_names and not op_name_known(name):
            raise UnknownOpError(f"unknown op '{name}': no rule of that name is registered and it is in no "
                                 f"known dialect (func, sdy, stablehlo) nor a JAX primitive", op=name)
        for i, r in enumerate(op.results):
            self.sharding(r.sharding, r.type.shape, name, f"result {i} ({self.v(r)})")
        for key, value in op.attrs.items():
            if name == "sdy.sharding_constraint" and key == "sharding":
                shape = op.operands[0].type.shape if op.operands else None
                self.sharding(value, shape, name, f"attribute sharding of {self.v(op.results[0])}"
                              if op.results else "attribute sharding")
            elif isinstance(value, TensorSharding) and name != "sdy.manual_computation":
                self.sharding(value, None, name, f"attribute {key}")
        if name in IDENTITY_OPS or name == "stablehlo.optimization_barrier":
            self.tied(op, op.operands, "operands")
        if name == "sdy.sharding_constraint" and "sharding" not in op.attrs:
            raise IRVerifyError("has no 'sharding' attribute", op=name)
        if name == "sdy.propagation_barrier":
            d = op.attrs.get("allowed_direction")
            if d not in DIRECTIONS:
                raise BarrierDirectionError(f"allowed_direction must be one of {', '.join(DIRECTIONS)}, got {d!r}",
                                            op=name, value=self.v(op.operands[0]) if op.operands else None)
        elif name == "sdy.sharding_group":
            self.sharding_group(op, manual)
        elif name == "sdy.manual_computation":
            self.manual_computation(op, manual, where)
            return
        elif name == "stablehlo.while":
            self.while_loop(op, defined, manual, where)
            return
        elif name == "stablehlo.case":
            self.case(op, defined, manual, where)
            return
        elif name in ("func.call", "call"):
            self.call(op)
        for region in op.regions:  # any other op with regions: their blocks see the enclosing values
            for b in region.blocks:
                self.block(b, defined, "stablehlo.return", f"{where} > {name}", manual)

    def tied(self, op: Op, sources, what: str) -> None:
        got, want = [r.type for r in op.results], [v.type for v in sources]
        if got != want:
            raise DataFlowTypeError(f"result types {[str(t) for t in got]} are not its {what}' types "
                                    f"{[str(t) for t in want]}", op=op.name,
                                    value=self.v(op.results[0]) if op.results else None)

    def sharding_group(self, op: Op, manual: frozenset) -> None:
        gid = op.attrs.get("group_id")
        if isinstance(gid, bool) or not isinstance(gid, int) or gid < 0:
            raise ShardingGroupError(f"group_id must be a non-negative integer, got {gid!r}", op=op.name)
        if len(op.operands) != 1 or op.results:
            raise ShardingGroupError(f"takes one operand and has no result, has {len(op.operands)} operands and "
                                     f"{len(op.results)} results", op=op.name)
        v = op.operands[0]
        if gid in self.groups:
            first, label, first_manual = self.groups[gid]
            if first.type.shape != v.type.shape:
                raise ShardingGroupError(f"group {gid}: {self.v(v)} has shape {list(v.type.shape)}, but group member "
                                         f"{label} has shape {list(first.type.shape)}; they cannot share a sharding",
                                         op=op.name, value=self.v(v))
            if first_manual != manual:  # a local and a global view of a tensor cannot share one sharding
                raise ShardingGroupError(f"group {gid}: {self.v(v)} is inside manual axes {sorted(manual)}, group "
                                         f"member {label} inside {sorted(first_manual)}; a group cannot cross a "
                                         f"manual computation boundary", op=op.name, value=self.v(v))
        else:
            self.groups[gid] = (v, self.v(v), manual)

    def manual_computation(self, op: Op, outer_manual: frozenset, where: str) -> None:
        name = op.name
        in_sh, out_sh = op.attrs.get("in_shardings"), op.attrs.get("out_shardings")
        manual = op.attrs.get("manual_axes")
        if not isinstance(in_sh, list) or not isinstance(out_sh, list) or not isinstance(manual, list):
            raise ManualComputationError("needs list attributes in_shardings, out_shardings and manual_axes", op=name)
        if len(in_sh) != len(op.operands) or len(out_sh) != len(op.results):
            raise ManualComputationError(f"{len(in_sh)} in_shardings for {len(op.operands)} operands, {len(out_sh)} "
                                         f"out_shardings for {len(op.results)} results", op=name)
        labelled = [(s, v, f"in_shardings[{i}] ({self.v(v)})") for i, (s, v) in enumerate(zip(in_sh, op.operands))]
        labelled += [(s, v, f"out_shardings[{i}] ({self.v(v)})") for i, (s, v) in enumerate(zip(out_sh, op.results))]
        meshes = set()
        mesh = None
        for s, v, label in labelled:
            if s is None:
                raise ManualComputationError(f"{label} is missing", op=name, value=label)
            mesh = self.sharding(s, v.type.shape, name, label)
            meshes.add(s.mesh if isinstance(s.mesh, str) else str(s.mesh))
        # 1. one mesh; manual axes known, unique and sorted in mesh order
        if len(meshes) > 1:
            raise ManualComputationError(f"in/out shardings refer to different meshes {sorted(meshes)}", op=name)
        if mesh is None:
            if manual:
                raise ManualComputationError("manual axes without any in/out sharding to name their mesh", op=name)
        else:
            for a in manual:
                if not isinstance(a, str) or not mesh.has_axis(a):
                    raise ManualComputationError(f"manual axis {a!r} is not an axis of mesh {mesh}", op=name)
            if len(set(manual)) != len(manual):
                raise ManualComputationError(f"manual axes {manual} repeat an axis", op=name)
            order = sorted(manual, key=mesh.axis_index)
            if order != list(manual):
                raise ManualComputationError(f"manual axes {manual} are not sorted in mesh order ({order})", op=name)
        clash = sorted(set(manual) & outer_manual)
        if clash:
            raise ManualComputationError(f"nested manual computation reuses manual axes {clash} of an enclosing one",
                                         op=name)
        for s, v, label in labelled:
            dim_axes = {a.name for d in s.dims for a in d.axes}
            explicit = dim_axes | {a.name for a in s.replicated}
            # 2. every manual axis used explicitly: sharding a dim or listed as replicated
            for a in manual if self.explicit_manual_replication else ():
                if a not in explicit:
                    raise ManualComputationError(f"manual axis {a!r} is neither in a dim nor explicitly replicated in "
                                                 f"{label} = {s}", op=name, value=label)
            # 3. within a dim, free axes come after (minor to) every manual axis
            for d_index, d in enumerate(s.dims):
                seen_free = None
                for axis in d.axes:
                    if axis.name not in manual:
                        seen_free = seen_free or axis.name
                    elif seen_free is not None:
                        raise ManualComputationError(f"dim {d_index} of {label}: free axis {seen_free!r} is major to "
                                                     f"manual axis {axis.name!r}; free axes must be minor",
                                                     op=name, value=label)
        # 4. the body works on local shapes
        region_blocks = [b for r in op.regions for b in r.blocks]
        if len(region_blocks) != 1:
            raise ManualComputationError(f"needs one body block, has {len(region_blocks)}", op=name)
        body = region_blocks[0]
        if len(body.args) != len(op.operands):
            raise ManualComputationError(f"the body has {len(body.args)} arguments for {len(op.operands)} operands",
                                         op=name)
        for i, (s, v, arg) in enumerate(zip(in_sh, op.operands, body.args)):
            want = _local(v.type.shape, s, manual, mesh)
            if arg.type.shape != want or arg.type.dtype != v.type.dtype:
                raise ManualComputationError(f"body argument {i} has type {arg.type}, the local type of operand "
                                             f"{self.v(v)} under {s} is tensor<{_dims(want)}{v.type.dtype}>",
                                             op=name, value=self.v(arg))
        self.block(body, set(), "sdy.return", f"{where} > {name}", outer_manual | set(manual))
        for i, (s, r, ret) in enumerate(zip(out_sh, op.results, body.ops[-1].operands)):
            want = _local(r.type.shape, s, manual, mesh)
            if ret.type.shape != want or ret.type.dtype != r.type.dtype:
                raise ManualComputationError(f"the body returns {ret.type} for result {i}, whose local type under {s} "
                                             f"is tensor<{_dims(want)}{r.type.dtype}>", op=name, value=self.v(r))
        if len(body.ops[-1].operands) != len(op.results):
            raise ManualComputationError(f"the body returns {len(body.ops[-1].operands)} values for "
                                         f"{len(op.results)} results", op=name)

    def while_loop(self, op: Op, defined: set, manual: frozenset, where: str) -> None:
        self.tied(op, op.operands, "operands")
        if len(op.regions) != 2:
            raise IRVerifyError(f"needs a cond and a body region, has {len(op.regions)}", op=op.name)
        carried = [v.type for v in op.operands]
        for region, what in zip(op.regions, ("cond", "body")):
            block = region.block
            if [a.type for a in block.args] != carried:
                raise DataFlowTypeError(f"{what} region arguments {[str(a.type) for a in block.args]} are not the "
                                        f"carried types {[str(t) for t in carried]}", op=op.name)
            self.block(block, defined, "stablehlo.return", f"{where} > {op.name} {what}", manual)
            returned = [v.type for v in block.ops[-1].operands]
            if what == "body" and returned != carried:
                raise DataFlowTypeError(f"body returns {[str(t) for t in returned]}, the carried types are "
                                        f"{[str(t) for t in carried]}", op=op.name)
            if what == "cond" and (len(returned) != 1 or returned[0].shape != () or returned[0].dtype != "i1"):
                raise DataFlowTypeError(f"cond must return one tensor<i1>, returns {[str(t) for t in returned]}",
                                        op=op.name)

    def case(self, op: Op, defined: set, manual: frozenset, where: str) -> None:
        if len(op.operands) != 1 or op.operands[0].type.shape != () or op.operands[0].type.dtype not in ("i32",):
            raise DataFlowTypeError("takes one tensor<i32> index", op=op.name)
        want = [r.type for r in op.results]
        for i, region in enumerate(op.regions):
            block = region.block
            self.block(block, defined, "stablehlo.return", f"{where} > {op.name} branch {i}", manual)
            got = [v.type for v in block.ops[-1].operands]
            if got != want:
                raise DataFlowTypeError(f"branch {i} returns {[str(t) for t in got]}, the results are "
                                        f"{[str(t) for t in want]}", op=op.name)

    def call(self, op: Op) -> None:
        callee_name = op.attrs.get("callee")
        callee = self.program.functions.get(callee_name)
        if callee is None:
            raise IRVerifyError(f"calls @{callee_name}, which is not a function of the program", op=op.name)
        if [v.type for v in op.operands] != [a.type for a in callee.args]:
            raise DataFlowTypeError(f"operand types {[str(v.type) for v in op.operands]} are not @{callee_name}'s "
                                    f"argument types {[str(a.type) for a in callee.args]}", op=op.name)
        if [r.type for r in op.results] != list(callee.result_types):
            raise DataFlowTypeError(f"result types are not @{callee_name}'s", op=op.name)


def _local(shape, sharding: TensorSharding, manual, mesh: Mesh) -> tuple:
    out = []
    for n, d in zip(shape, sharding.dims):
        k = 1
        for a in d.axes:
            if a.name in manual:
                k *= a.size_on(mesh)
        out.append(-(-n // k))
    return tuple(out)


def _dims(shape) -> str:
    return "".join(f"{d}x" for d in shape)
