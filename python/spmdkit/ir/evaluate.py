"""A small interpreter of IR programs on JAX arrays: the proof that an import lost nothing.

`jax.<prim>` ops bind the JAX primitive again with the params rebuilt from the op's attributes
(`jax_params.params_from_attrs`), so a program that was printed and parsed evaluates too. The
interpreter only binds JAX primitives, hence it runs under `jax.jit`/`jax.grad` as well. Handled:
`stablehlo.constant`, `func.call` (recursively), `sdy.sharding_constraint` /
`sdy.propagation_barrier` / `stablehlo.optimization_barrier` (identities: they steer sharding,
not values), `sdy.sharding_group` (no result), `stablehlo.while` (lax.while_loop),
`stablehlo.case` (lax.switch) and `sdy.manual_computation` (jax.shard_map over the program's
mesh; it needs as many JAX devices as the mesh has). Regions read values of enclosing blocks.
Every result is checked against its value's type, so a wrong import fails loudly.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .constants import dense_value
from .core import Block, Function, Op, Program, Value
from .errors import IRError
from .jax_params import ParamError, params_from_attrs, primitive
from .types import TensorType, element_type

IDENTITY_OPS = frozenset({"sdy.sharding_constraint", "sdy.propagation_barrier", "sdy.reshard",
                          "stablehlo.optimization_barrier"})
RETURN_OPS = frozenset({"func.return", "sdy.return", "stablehlo.return", "return"})


class EvaluateError(IRError):
    """An op the interpreter cannot run, or a result that disagrees with its value's type."""


def evaluate(program: Program, *args, function: Optional[str] = None, apply_shardings: bool = False) -> list:
    """Run `function` (default: main) of `program` on `args` (arrays, one per function argument).

    apply_shardings: pin every sharding the program states (function arguments, op results,
    `sdy.sharding_constraint`) with `jax.lax.with_sharding_constraint` on the program's meshes
    over `jax.devices()`, so that under `jax.jit` XLA lays values out as propagation decided.
    Values are unchanged; a sharding JAX cannot state (a sub-axis) is an EvaluateError.
    """
    fn = program.main if function is None else program.functions.get(function)
    if fn is None:
        raise EvaluateError(f"program has no function @{function}")
    return _Interpreter(program, apply_shardings).call(fn, list(args))


class _Env:
    """Values of one block, falling back to the enclosing blocks' (regions read outer values)."""

    def __init__(self, parent: Optional["_Env"] = None):
        self.values: dict[int, Any] = {}
        self.parent = parent

    def __setitem__(self, value: Value, data) -> None:
        self.values[id(value)] = data

    def __getitem__(self, value: Value):
        env = self
        while env is not None:
            if id(value) in env.values:
                return env.values[id(value)]
            env = env.parent
        raise EvaluateError(f"value {value!r} is read before it is defined")


class _Interpreter:
    def __init__(self, program: Program, apply_shardings: bool = False):
        self.program = program
        self.apply_shardings = apply_shardings
        self.manual_depth = 0  # inside a manual computation, shardings are not global layouts
        self.jax_meshes: dict = {}

    def jax_mesh(self, mesh, where: str, op_name: Optional[str] = None):
        """The jax Mesh of a spmdkit Mesh, over jax.devices() indexed by its device ids."""
        import jax
        key = (mesh.axis_names, mesh.shape, mesh.device_ids)
        if key not in self.jax_meshes:
            devices = jax.devices()
            if max(mesh.device_ids, default=0) >= len(devices):
                raise EvaluateError(f"{where}: mesh {mesh} needs {max(mesh.device_ids) + 1} devices, JAX has "
                                    f"{len(devices)}", op=op_name)
            grid = np.array([devices[i] for i in mesh.device_ids]).reshape(mesh.shape or (1,))
            names = mesh.axis_names or ("_",)
            self.jax_meshes[key] = jax.sharding.Mesh(grid, names,
                                                     axis_types=(jax.sharding.AxisType.Auto,) * len(names))
        return self.jax_meshes[key]

    def constrain(self, data, sharding, where: str, op_name: Optional[str] = None):
        """`data` pinned to `sharding` (when shardings are applied and we are not in a manual body)."""
        if sharding is None or not self.apply_shardings or self.manual_depth:
            return data
        import jax
        from jax.sharding import NamedSharding, PartitionSpec
        mesh = sharding.resolve_mesh(self.program.meshes)
        entries = []
        for i, d in enumerate(sharding.dims):
            if any(a.is_sub_axis for a in d.axes):
                raise EvaluateError(f"{where}: JAX cannot state the sub-axis sharding {sharding} (dim {i})", op=op_name)
            names = tuple(a.name for a in d.axes)
            if not names:
                entries.append(None if d.is_closed else PartitionSpec.UNCONSTRAINED)
            else:
                entries.append(names[0] if len(names) == 1 else names)
        target = NamedSharding(self.jax_mesh(mesh, where, op_name), PartitionSpec(*entries))
        return jax.lax.with_sharding_constraint(data, target)

    def call(self, fn: Function, args: list) -> list:
        if len(args) != len(fn.args):
            raise EvaluateError(f"@{fn.name} takes {len(fn.args)} arguments, got {len(args)}")
        return self.block(fn.body, args, None, f"@{fn.name}")

    def block(self, block: Block, args: list, parent: Optional[_Env], where: str) -> list:
        import jax.numpy as jnp

        env = _Env(parent)
        for value, data in zip(block.args, args):
            data = jnp.asarray(data)
            _check(value, data, f"{where} argument {value.index}")
            env[value] = self.constrain(data, value.sharding, f"{where} argument {value.index}")
        for op in block.ops:
            if op.name in RETURN_OPS:
                return [env[v] for v in op.operands]
            results = self.op(op, [env[v] for v in op.operands], env, where)
            if len(results) != len(op.results):
                raise EvaluateError(f"{where}: produced {len(results)} results for {len(op.results)}", op=op.name)
            for value, data in zip(op.results, results):
                _check(value, data, f"{where} op '{op.name}'")
                env[value] = self.constrain(data, value.sharding, where, op.name)
        raise EvaluateError(f"{where}: block has no terminator")

    def op(self, op: Op, inputs: list, env: _Env, where: str) -> list:
        name = op.name
        if name.startswith("jax."):
            return self.jax_op(op, inputs, where)
        if name == "stablehlo.constant":
            try:
                return [dense_value(op.attrs["value"], op.result.type, _np_dtype(op.result.type))]
            except (KeyError, ValueError) as e:
                raise EvaluateError(f"{where}: bad constant: {e}", op=name) from None
        if name == "sdy.sharding_constraint":
            return [self.constrain(inputs[0], op.attrs.get("sharding"), where, name)]
        if name in IDENTITY_OPS:
            return list(inputs)
        if name == "sdy.sharding_group":
            return []
        if name in ("func.call", "call"):
            callee = self.program.functions.get(op.attrs.get("callee"))
            if callee is None:
                raise EvaluateError(f"{where}: calls unknown function @{op.attrs.get('callee')}", op=name)
            return self.call(callee, inputs)
        if name == "stablehlo.while":
            return self.while_loop(op, inputs, env, where)
        if name == "stablehlo.case":
            return self.case(op, inputs, env, where)
        if name == "sdy.manual_computation":
            return self.manual_computation(op, inputs, env, where)
        raise EvaluateError(f"{where}: no evaluator for op '{name}' (rule ops are only run as jax.<primitive>)",
                            op=name)

    def jax_op(self, op: Op, inputs: list, where: str) -> list:
        prim_name = op.name[len("jax."):]
        try:
            prim = primitive(prim_name)
            params = params_from_attrs(prim_name, op.attrs, [x.dtype for x in inputs])
        except ParamError as e:
            raise EvaluateError(f"{where}: {e.reason}", op=op.name) from None
        out = prim.bind(*inputs, **params)
        return list(out) if prim.multiple_results else [out]

    def while_loop(self, op: Op, inputs: list, env: _Env, where: str) -> list:
        from jax import lax
        cond, body = (r.block for r in op.regions)
        return list(lax.while_loop(lambda c: self.block(cond, list(c), env, where + " cond")[0],
                                   lambda c: tuple(self.block(body, list(c), env, where + " body")),
                                   tuple(inputs)))

    def case(self, op: Op, inputs: list, env: _Env, where: str) -> list:
        from jax import lax
        branches = [lambda _, b=r.block: tuple(self.block(b, [], env, where + " branch")) for r in op.regions]
        return list(lax.switch(inputs[0], branches, None))

    def manual_computation(self, op: Op, inputs: list, env: _Env, where: str) -> list:
        import jax
        from jax.sharding import PartitionSpec

        in_sh, out_sh = op.attrs["in_shardings"], op.attrs["out_shardings"]
        manual = set(op.attrs["manual_axes"])
        mesh = (in_sh + out_sh)[0].resolve_mesh(self.program.meshes)
        if len(jax.devices()) < mesh.size:
            raise EvaluateError(f"{where}: the manual computation's mesh has {mesh.size} devices, JAX has "
                                f"{len(jax.devices())}", op=op.name)
        jmesh = self.jax_mesh(mesh, where, op.name)

        def spec(sharding):
            entries = []
            for d in sharding.dims:
                axes = tuple(a.name for a in d.axes if a.name in manual)
                entries.append(None if not axes else axes[0] if len(axes) == 1 else axes)
            return PartitionSpec(*entries)

        body = op.regions[0].block

        def run_body(*xs):
            self.manual_depth += 1
            try:
                return tuple(self.block(body, list(xs), env, where + " body"))
            finally:
                self.manual_depth -= 1
        run = jax.shard_map(run_body, mesh=jmesh, in_specs=tuple(spec(s) for s in in_sh),
                            out_specs=tuple(spec(s) for s in out_sh), axis_names=manual,
                            check_vma=bool(op.attrs.get("jax.check_vma", True)))
        return list(run(*inputs))


def _np_dtype(t: TensorType):
    import jax.numpy as jnp
    reverse = {element_type(n): n for n in ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16",
                                            "int8", "bool", "uint64", "uint32", "uint16", "uint8", "complex64",
                                            "complex128")}
    try:
        return jnp.dtype(reverse[t.dtype])
    except KeyError:
        raise EvaluateError(f"no numpy dtype for element type {t.dtype}") from None


def _check(value: Value, data, where: str) -> None:
    shape, dtype = tuple(np.shape(data)), element_type(np.dtype(data.dtype).name)
    if shape != value.type.shape or dtype != value.type.dtype:
        raise EvaluateError(f"{where}: got {TensorType(shape, dtype)}, the value's type is {value.type}")
