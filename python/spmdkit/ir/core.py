"""The program IR: a module of meshes and functions; a function is a block of ops over values.

Ops are named by rule-registry names (`matmul`, `jax.dot_general`, `stablehlo.add`) or by the
compiler-API names of Shardy and StableHLO (`sdy.sharding_constraint`, `sdy.manual_computation`,
`stablehlo.while`, `func.call`, `func.return`). A value's `sharding` is a
`spmdkit.sharding.TensorSharding` or None (not annotated yet). Attributes are plain Python values
(bool, int, float, str, lists of them, TensorSharding, lists of TensorSharding); `attr_types` may
pin an attribute's textual type where Python's is ambiguous (e.g. an MLIR `array<i64: ...>` versus
an `[...]` array attribute), so that printing round-trips.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

import numpy as np

from .types import TensorType


class Value:
    """An SSA value: an op result or a block argument."""

    __slots__ = ("type", "sharding", "owner", "index", "name", "__weakref__")

    def __init__(self, type: TensorType, owner=None, index: int = 0, sharding=None, name: Optional[str] = None):
        self.type = type
        self.sharding = sharding  # TensorSharding | None
        self.owner = owner        # the defining Op, or the Block for a block argument
        self.index = index        # result number, or argument number
        self.name = name          # a preferred printed name (without '%'), if any

    @property
    def is_block_arg(self) -> bool:
        return isinstance(self.owner, Block)

    def __repr__(self) -> str:
        where = f"arg{self.index}" if self.is_block_arg else f"{getattr(self.owner, 'name', '?')}#{self.index}"
        return f"<Value {where}: {self.type}>"


@dataclass(eq=False)
class Block:
    args: list[Value] = field(default_factory=list)
    ops: list["Op"] = field(default_factory=list)

    def add_arg(self, type: TensorType, sharding=None, name: Optional[str] = None) -> Value:
        v = Value(type, owner=self, index=len(self.args), sharding=sharding, name=name)
        self.args.append(v)
        return v

    def append(self, op: "Op") -> "Op":
        op.parent = self
        self.ops.append(op)
        return op

    @property
    def terminator(self) -> Optional["Op"]:
        return self.ops[-1] if self.ops and self.ops[-1].is_terminator else None


@dataclass(eq=False)
class Region:
    blocks: list[Block] = field(default_factory=list)

    @property
    def block(self) -> Block:
        if len(self.blocks) != 1:
            raise ValueError(f"region has {len(self.blocks)} blocks, expected one")
        return self.blocks[0]


TERMINATORS = frozenset({"func.return", "stablehlo.return", "sdy.return", "return"})
# Op names: a registry name without a dialect is Paddle's ("paddle.matmul" in MLIR, "matmul" here);
# "jax.<primitive>" ops keep their name in both.
PADDLE_PREFIX = "paddle."
JAX_PREFIX = "jax."
# sdy.propagation_barrier's direction: an i32 enum in MLIR, its name in the IR.
DIRECTIONS = ("NONE", "FORWARD", "BACKWARD", "BOTH")


@dataclass(eq=False)
class Op:
    name: str
    operands: list[Value] = field(default_factory=list)
    results: list[Value] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)
    regions: list[Region] = field(default_factory=list)
    attr_types: dict[str, str] = field(default_factory=dict)
    parent: Optional[Block] = None
    location: Optional[str] = None  # where it came from (a source line, a jaxpr equation), for messages

    @classmethod
    def create(cls, name: str, operands, result_types, attrs=None, regions=None, **kw) -> "Op":
        op = cls(name, list(operands), [], dict(attrs or {}), list(regions or []), **kw)
        op.results = [Value(t, owner=op, index=i) for i, t in enumerate(result_types)]
        return op

    @property
    def is_terminator(self) -> bool:
        return self.name in TERMINATORS

    @property
    def result(self) -> Value:
        if len(self.results) != 1:
            raise ValueError(f"op '{self.name}' has {len(self.results)} results, expected one")
        return self.results[0]

    def __getstate__(self):  # copies and pickles carry the location as text, not the importer's object
        state = dict(self.__dict__)
        state["_location"] = self.location
        return state

    def walk(self) -> Iterator["Op"]:
        """This op, then every op nested in its regions, in order."""
        yield self
        for region in self.regions:
            for block in region.blocks:
                for op in block.ops:
                    yield from op.walk()

    def __repr__(self) -> str:
        return f"<Op {self.name} ({len(self.operands)} -> {len(self.results)})>"


def _read_location(op: Op) -> Optional[str]:
    where = op._location
    if where is not None and type(where) is not str:
        where = op._location = LOCATION_READERS.get(type(where), str)(where)
    return where


def _write_location(op: Op, where) -> None:
    op._location = where


# Op.location is text; an importer may store its own source-location object there instead, read
# into text when first asked for (most ops' locations never are), by the reader registered here
# for the object's type (else str()).
LOCATION_READERS: dict = {}
Op.location = property(_read_location, _write_location, doc="Where the op came from, in words, or None.")


@dataclass(eq=False)
class Function:
    name: str
    body: Block = field(default_factory=Block)
    result_types: list[TensorType] = field(default_factory=list)
    result_shardings: list[Any] = field(default_factory=list)  # TensorSharding | None per result
    visibility: Optional[str] = None  # "private" for callees; None for public (main)
    # Attributes other than `sdy.sharding` (e.g. jax's `mhlo.layout_mode`), kept so text round-trips.
    arg_attrs: list[dict] = field(default_factory=list)     # per argument; may be shorter than args
    result_attrs: list[dict] = field(default_factory=list)  # per result; may be shorter than results
    attrs: dict[str, Any] = field(default_factory=dict)     # the func op's own extra attributes

    @property
    def args(self) -> list[Value]:
        return self.body.args

    def walk(self) -> Iterator[Op]:
        for op in self.body.ops:
            yield from op.walk()


@dataclass(eq=False)
class Program:
    """A module: named meshes (`sdy.mesh @name = <...>`) and functions, `main` first by convention."""
    meshes: dict[str, Any] = field(default_factory=dict)  # name -> spmdkit.sharding.Mesh
    functions: dict[str, Function] = field(default_factory=dict)
    name: Optional[str] = None  # module name (`module @jit_f`), if any
    attrs: dict[str, Any] = field(default_factory=dict)  # module attributes (`mhlo.num_partitions`, ...)
    mesh_attrs: dict[str, dict] = field(default_factory=dict)  # extra attributes of an `sdy.mesh` op, by mesh

    # str(program) is the printed MLIR: spmdkit.ir's __init__ sets __str__ to the printer
    # (which imports this module, so this module does not import it).

    def add_function(self, fn: Function) -> Function:
        if fn.name in self.functions:
            raise ValueError(f"program already has a function @{fn.name}")
        self.functions[fn.name] = fn
        return fn

    @property
    def main(self) -> Function:
        if "main" in self.functions:
            return self.functions["main"]
        if not self.functions:
            raise ValueError("program has no functions")
        return next(iter(self.functions.values()))

    def walk(self) -> Iterator[Op]:
        for fn in self.functions.values():
            yield from fn.walk()


def frozen_attr(value):
    """An attribute value as a key (lists as tuples, arrays by their bytes); a value that cannot
    be hashed stays as it is, and hashing the key raises TypeError."""
    kind = type(value)
    if kind is list or kind is tuple:
        flat = tuple(value)
        try:  # the common case, a list of numbers or strings: already a key
            hash(flat)
            return flat
        except TypeError:
            return tuple(frozen_attr(v) for v in value)
    if kind is dict:
        return tuple(sorted((k, frozen_attr(v)) for k, v in value.items()))
    if kind is np.ndarray:
        return (value.dtype.str, value.shape, value.tobytes())
    return value


def op_signature(op: Op) -> tuple:
    """What a rule's answer for an op depends on besides the layouts asked about: name, operand
    and result types, attributes. Ops of one signature get one factor table, one answer per
    layout (TypeError: an attribute that cannot be keyed)."""
    attrs = op.attrs
    return (op.name, tuple([v.type for v in op.operands]), tuple([r.type for r in op.results]),
            attrs_key(attrs) if attrs else ())


def attrs_key(attrs: dict) -> tuple:
    """The attributes' part of op_signature."""
    return tuple([(k, frozen_attr(v)) for k, v in attrs.items()])


@contextmanager
def paused_gc():
    """No full collection while a program's objects are made in bulk: they all stay alive, and a
    100k-op import would otherwise run full collections that scan every object again and again
    (CPython starts one each time the objects that reached its oldest generation grow by a
    quarter). Young collections still run, on the few hundred objects made since the last one:
    switching the collector off instead leaves one young collection over the whole program for
    afterwards, which walks half a million objects out of cache (0.2 s, then as long again when
    they move on, on a 70k-op program)."""
    young, middle, oldest = gc.get_threshold()
    gc.set_threshold(young, middle, 1 << 30)
    try:
        yield
    finally:
        gc.set_threshold(young, middle, oldest)
