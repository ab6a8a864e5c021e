"""Parse Shardy's text: `#sdy.sharding<...>`, `#sdy.sharding_per_value<[...]>`, meshes."""
from __future__ import annotations

from typing import Mapping

from .axes import AxisRef
from .errors import MeshError, ShardingError, ShardingParseError, ShardingVerifyError
from .lexer import Token, tokenize
from .mesh import Mesh, MeshAxis
from .tensor_sharding import REDUCE_TYPES, DimSharding, TensorSharding
from .verifier import verify


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = tokenize(text)
        self.pos = 0
        # where things were read, so a verifier error can point at its column:
        # (dim or "replicated"/"unreduced", str(axis)) -> offset, (dim,) -> offset, ("mesh",) -> offset
        self.where: dict[tuple, int] = {}
        self.context = None

    # -- token helpers -------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def fail(self, message: str, tok: Token | None = None):
        raise ShardingParseError(message, self.text, (tok or self.tok).offset)

    def describe(self, tok: Token) -> str:
        return "end of text" if tok.kind == "end" else repr(tok.value) if tok.kind != "string" else f'"{tok.value}"'

    def at(self, value: str) -> bool:
        return self.tok.kind in ("punct", "ident") and self.tok.value == value

    def expect(self, value: str, what: str = "") -> Token:
        if not self.at(value):
            self.fail(f"expected {value!r}{' ' + what if what else ''}, found {self.describe(self.tok)}")
        tok = self.tok
        self.pos += 1
        return tok

    def accept(self, value: str) -> bool:
        if self.at(value):
            self.pos += 1
            return True
        return False

    def integer(self, what: str) -> int:
        if self.tok.kind != "int":
            self.fail(f"expected an integer {what}, found {self.describe(self.tok)}")
        value = self.tok.value
        self.pos += 1
        return value

    def string(self, what: str) -> str:
        if self.tok.kind != "string":
            self.fail(f"expected a quoted {what}, found {self.describe(self.tok)}")
        value = self.tok.value
        self.pos += 1
        return value

    def finish(self):
        if self.tok.kind != "end":
            self.fail(f"unexpected {self.describe(self.tok)} after the end")

    # -- meshes --------------------------------------------------------------------------
    def symbol(self) -> str:
        self.expect("@", "before a mesh name")
        if self.tok.kind in ("ident", "string"):
            name = self.tok.value
            self.pos += 1
            return name
        self.fail(f"expected a mesh name after '@', found {self.describe(self.tok)}")

    def mesh_body(self) -> Mesh:
        """`<["a"=2, "b"=2], device_ids=[...]>`; also the seed's bracket-less `<"a"=2>`."""
        start = self.expect("<", "to open a mesh")
        bracket = self.accept("[")
        axes = []
        close = "]" if bracket else ">"
        if not self.at(close):
            while True:
                name_tok = self.tok
                name = self.string("mesh axis name")
                self.expect("=", f"after mesh axis name \"{name}\"")
                size_tok = self.tok
                size = self.integer(f"size for mesh axis \"{name}\"")
                if size < 1:
                    self.fail(f"mesh axis \"{name}\" has size {size}; sizes must be positive", size_tok)
                if any(a.name == name for a in axes):
                    self.fail(f"mesh axis \"{name}\" appears twice", name_tok)
                axes.append(MeshAxis(name, size))
                if not self.accept(","):
                    break
        if bracket:
            self.expect("]", "to close the mesh axes")
        ids = None
        if bracket and self.accept(","):
            ids_tok = self.expect("device_ids")
            self.expect("=")
            ids = self.int_list("device id")
            try:
                Mesh(axes, ids)
            except MeshError as e:
                self.fail(str(e), ids_tok)
        self.expect(">", "to close the mesh")
        try:
            return Mesh(axes, ids)
        except MeshError as e:  # pragma: no cover - every case is checked above
            self.fail(str(e), start)

    def int_list(self, what: str) -> list[int]:
        self.expect("[")
        out = []
        if not self.at("]"):
            while True:
                tok = self.tok
                v = self.integer(what)
                if v < 0:
                    self.fail(f"{what} {v} is negative", tok)
                out.append(v)
                if not self.accept(","):
                    break
        self.expect("]", f"to close the {what} list")
        return out

    def mesh_decl(self) -> tuple[str | None, Mesh]:
        """`sdy.mesh @m = <...>`, `@m = <...>`, `#sdy.mesh<...>`, `mesh<...>` or `<...>`."""
        name = None
        if self.accept("sdy.mesh"):
            name = self.symbol()
            self.expect("=")
        elif self.at("@"):
            name = self.symbol()
            self.expect("=")
        elif self.accept("#sdy.mesh") or self.accept("mesh"):
            pass
        if name is not None and self.at("{"):  # the seed's `{<[...]>, device_ids=[...]}` form
            self.pos += 1
            inner = self.mesh_body()
            ids = None
            if self.accept(","):
                self.expect("device_ids")
                self.expect("=")
                ids = self.int_list("device id")
            self.expect("}")
            return name, Mesh(inner.axes, ids if ids is not None else inner.device_ids)
        mesh = self.mesh_body()
        if name is not None and self.at("{"):
            self.skip_attr_dict()
        return name, mesh

    def skip_attr_dict(self) -> None:
        """The op's attribute dictionary after `sdy.mesh @m = <...>` (JAX adds stablehlo.mesh):
        not part of the mesh, so it is read past (balanced braces/brackets) and dropped."""
        depth, start = 0, self.tok
        while True:
            tok = self.tok
            if tok.kind == "end":
                self.fail("unterminated attribute dictionary", start)
            self.pos += 1
            if tok.kind == "punct" and tok.value in "{[":
                depth += 1
            elif tok.kind == "punct" and tok.value in "}]":
                depth -= 1
                if depth == 0:
                    return

    # -- shardings -----------------------------------------------------------------------
    def axis_ref(self) -> AxisRef:
        start = self.tok.offset
        ref = self._axis_ref()
        self.where[(self.context, str(ref))] = start
        return ref

    def _axis_ref(self) -> AxisRef:
        name = self.string("axis name")
        if not self.accept(":"):
            return AxisRef(name)
        self.expect("(", f"to open the pre-size of sub-axis \"{name}\"")
        pre = self.integer(f"pre-size for sub-axis \"{name}\"")
        self.expect(")", f"to close the pre-size of sub-axis \"{name}\"")
        size = self.integer(f"size for sub-axis \"{name}\"")
        return AxisRef(name, pre, size)

    def dim(self) -> DimSharding:
        self.expect("{", "to open a dim sharding")
        axes, closed = [], True
        if not self.at("}"):
            while True:
                if self.accept("?"):
                    closed = False
                    if not self.at("}"):
                        self.fail("'?' must be the last entry of a dim sharding")
                    break
                axes.append(self.axis_ref())
                if not self.accept(","):
                    break
        self.expect("}", "to close a dim sharding")
        priority = None
        if self.tok.kind == "ident" and self.tok.value.startswith("p"):
            tok = self.tok
            digits = tok.value[1:]
            if not digits.isdigit():
                self.fail(f"a priority is 'p' and a non-negative integer, found {tok.value!r}", tok)
            priority = int(digits)
            self.pos += 1
        return DimSharding(axes, closed, priority)

    def axis_set(self) -> list[AxisRef]:
        self.expect("{")
        out = []
        if not self.at("}"):
            while True:
                out.append(self.axis_ref())
                if not self.accept(","):
                    break
        self.expect("}", "to close an axis list")
        return out

    def sharding_body(self) -> TensorSharding:
        self.expect("<", "to open a sharding")
        self.where[("mesh",)] = self.tok.offset
        if self.at("@"):
            mesh = self.symbol()
        elif self.accept("mesh") or self.accept("#sdy.mesh"):
            mesh = self.mesh_body()
        else:
            self.fail(f"expected a mesh reference '@name' or an inline 'mesh<...>', found {self.describe(self.tok)}")
        self.expect(",", "after the mesh")
        self.where[("dims",)] = self.tok.offset
        self.expect("[", "to open the dim shardings")
        dims = []
        if not self.at("]"):
            while True:
                self.context = len(dims)
                self.where[(self.context,)] = self.tok.offset
                dims.append(self.dim())
                if not self.accept(","):
                    break
        self.expect("]", "to close the dim shardings")
        replicated, unreduced, kinds, seen = [], [], {}, set()
        while self.accept(","):
            key_tok = self.tok
            if key_tok.kind != "ident":
                self.fail(f"expected 'replicated=' or 'unreduced=', found {self.describe(key_tok)}")
            key = key_tok.value
            if key in seen:
                self.fail(f"{key!r} appears twice", key_tok)
            seen.add(key)
            self.pos += 1
            self.expect("=", f"after {key!r}")
            self.context = "replicated" if key == "replicated" else "unreduced"
            self.where.setdefault((self.context,), self.tok.offset)
            axes = self.axis_set()
            if key == "replicated":
                replicated = axes
            elif key == "unreduced" or (key.startswith("unreduced_") and key[10:] in REDUCE_TYPES):
                kind = "sum" if key == "unreduced" else key[10:]
                for a in axes:  # a duplicate is the verifier's to report; two types cannot be held
                    if kinds.get(a, kind) != kind:
                        self.fail(f"unreduced axis {a} has two reduce types, {kinds[a]} and {kind}", key_tok)
                    kinds[a] = kind
                    unreduced.append(a)
            else:
                self.fail(f"unknown sharding field {key!r} (replicated, unreduced, "
                          + ", ".join(f"unreduced_{k}" for k in REDUCE_TYPES if k != "sum") + ")", key_tok)
        self.expect(">", "to close the sharding")
        return TensorSharding(mesh, dims, replicated, unreduced, kinds)

    def sharding(self) -> TensorSharding:
        self.accept("#sdy.sharding") or self.accept("sharding")
        return self.sharding_body()


def _run(text: str, method: str):
    return _run_parser(_Parser(text), method)


def _run_parser(parser: "_Parser", method: str):
    text = parser.text
    try:
        result = getattr(parser, method)()
    except ShardingParseError:
        raise
    except ShardingError as e:  # a value the object model refuses (e.g. a bad sub-axis literal)
        raise ShardingParseError(str(e), text, parser.tok.offset) from None
    parser.finish()
    return result


def parse_sharding(text: str, meshes: Mesh | Mapping[str, Mesh] | None = None,
                   shape_or_rank=None, name: str = "tensor") -> TensorSharding:
    """`#sdy.sharding<@mesh, [{"x"}, {"y", ?}p1], replicated={"z"}>`, with or without the prefix.

    Given `meshes` (a Mesh or a dict of named meshes) or `shape_or_rank`, the sharding is also
    verified, and a ShardingVerifyError names the line and column of the offending axis or dim.
    """
    parser = _Parser(text)
    sharding = _run_parser(parser, "sharding")
    if meshes is None and shape_or_rank is None:
        return sharding
    try:
        verify(sharding, meshes, shape_or_rank, name)
    except ShardingVerifyError as e:
        w = parser.where
        offset = (w.get((e.dim, e.axis)) if e.axis is not None else None)
        if offset is None:
            offset = w.get((e.dim,), w[("mesh",)] if "mesh" in e.reason else w[("dims",)])
        raise ShardingVerifyError(e.reason, e.tensor, e.dim, e.axis, text, offset) from None
    return sharding


def parse_dim_sharding(text: str) -> DimSharding:
    """One dim sharding: `{"x", "y":(2)2, ?}p1`."""
    return _run(text, "dim")


def parse_axis_ref(text: str) -> AxisRef:
    """`"x"` or `"x":(2)4`."""
    return _run(text, "axis_ref")


def parse_mesh_decl(text: str) -> tuple[str | None, Mesh]:
    """A mesh with its name when the text gives one: `sdy.mesh @m = <["a"=2]>` -> ("m", Mesh)."""
    return _run(text, "mesh_decl")


def parse_mesh_table(text: str) -> dict[str, Mesh]:
    """Several `sdy.mesh @name = <...>` declarations (one program's meshes) as {name: Mesh}."""
    parser = _Parser(text)
    table: dict[str, Mesh] = {}
    while parser.tok.kind != "end":
        start = parser.tok
        name, mesh = _run_step(parser, parser.mesh_decl)
        if name is None:
            parser.fail("expected a named mesh declaration 'sdy.mesh @name = <...>'", start)
        if name in table:
            parser.fail(f"mesh @{name} is declared twice", start)
        table[name] = mesh
    return table


def _run_step(parser: "_Parser", step):
    try:
        return step()
    except ShardingParseError:
        raise
    except ShardingError as e:
        raise ShardingParseError(str(e), parser.text, parser.tok.offset) from None


def parse_mesh(text: str) -> Mesh:
    """A mesh from `sdy.mesh @m = <...>`, `#sdy.mesh<...>`, `mesh<...>` or `<["a"=2], device_ids=[...]>`."""
    return parse_mesh_decl(text)[1]


def parse_sharding_per_value(text: str) -> tuple[TensorSharding, ...]:
    """`#sdy.sharding_per_value<[<@m, [...]>, ...]>` (the prefix is optional)."""
    return _run(text, "per_value")


def _per_value(self: _Parser) -> tuple[TensorSharding, ...]:
    self.accept("#sdy.sharding_per_value") or self.accept("sharding_per_value")
    self.expect("<", "to open sharding_per_value")
    self.expect("[", "to open the list of shardings")
    out = []
    if not self.at("]"):
        while True:
            out.append(self.sharding_body())
            if not self.accept(","):
                break
    self.expect("]", "to close the list of shardings")
    self.expect(">", "to close sharding_per_value")
    return tuple(out)


_Parser.per_value = _per_value
