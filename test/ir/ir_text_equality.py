"""Structural equality of two Programs, for the text-format tests.

Two programs are equal when their meshes, functions, blocks and ops match one for one: same op
names, operands that are the corresponding values (SSA names do not matter), same result types
and shardings, and attributes with the same MLIR form (compared through `attributes.to_text`, so
an empty `array<i64>` and an empty `[]` differ, as they do in MLIR). The first difference is
reported with its path, e.g. `@main/op 3 (stablehlo.add)/operand 1`.
"""
from spmdkit.ir.attributes import default_pin, to_text
from spmdkit.ir.mlir_import import DIRECTIONS


def _attr_text(op_name, key, value, pins):
    if op_name == "sdy.propagation_barrier" and key == "allowed_direction" and isinstance(value, str):
        value, pins = DIRECTIONS.index(value), {key: "i32"}
    return to_text(value, pins.get(key) or default_pin(op_name, key), key)


def _attrs(op_name, attrs, pins):
    return {k: _attr_text(op_name, k, v, pins) for k, v in attrs.items()}


def _plain(d):
    return {k: to_text(v, None, k) for k, v in d.items()}


class _Compare:
    def __init__(self):
        self.map = {}  # id(value in a) -> value in b

    def check(self, cond, path, what):
        if not cond:
            raise AssertionError(f"{path}: {what}")

    def program(self, a, b):
        self.check(a.name == b.name, "module", f"name {a.name!r} != {b.name!r}")
        self.check(_plain(a.attrs) == _plain(b.attrs), "module", f"attrs {a.attrs} != {b.attrs}")
        self.check(a.meshes == b.meshes, "module", f"meshes {a.meshes} != {b.meshes}")
        self.check({k: _plain(v) for k, v in a.mesh_attrs.items()} == {k: _plain(v) for k, v in b.mesh_attrs.items()},
                   "module", "mesh attributes differ")
        self.check(list(a.functions) == list(b.functions), "module",
                   f"functions {list(a.functions)} != {list(b.functions)}")
        for name in a.functions:
            self.function(a.functions[name], b.functions[name], f"@{name}")

    def function(self, a, b, path):
        self.check(a.visibility == b.visibility, path, f"visibility {a.visibility} != {b.visibility}")
        self.check(_plain(a.attrs) == _plain(b.attrs), path, "function attrs differ")
        self.check([_plain(d) for d in a.arg_attrs] == [_plain(d) for d in b.arg_attrs], path, "arg attrs differ")
        self.check([_plain(d) for d in a.result_attrs] == [_plain(d) for d in b.result_attrs], path,
                   "result attrs differ")
        self.check(a.result_types == b.result_types, path, f"result types {a.result_types} != {b.result_types}")
        pad = lambda s, n: list(s) + [None] * (n - len(s))
        n = len(a.result_types)
        self.check(pad(a.result_shardings, n) == pad(b.result_shardings, n), path,
                   f"result shardings {a.result_shardings} != {b.result_shardings}")
        self.block(a.body, b.body, path)

    def block(self, a, b, path):
        self.check(len(a.args) == len(b.args), path, f"{len(a.args)} block args != {len(b.args)}")
        for i, (x, y) in enumerate(zip(a.args, b.args)):
            self.value(x, y, f"{path}/arg {i}")
        self.check(len(a.ops) == len(b.ops), path, f"{len(a.ops)} ops != {len(b.ops)}: "
                   f"{[o.name for o in a.ops]} vs {[o.name for o in b.ops]}")
        for i, (x, y) in enumerate(zip(a.ops, b.ops)):
            self.op(x, y, f"{path}/op {i} ({x.name})")

    def value(self, x, y, path):
        self.check(x.type == y.type, path, f"type {x.type} != {y.type}")
        self.check(x.sharding == y.sharding, path, f"sharding {x.sharding} != {y.sharding}")
        self.map[id(x)] = y

    def op(self, a, b, path):
        self.check(a.name == b.name, path, f"op {a.name} != {b.name}")
        self.check(len(a.operands) == len(b.operands), path, "operand count differs")
        for i, (x, y) in enumerate(zip(a.operands, b.operands)):
            self.check(self.map.get(id(x)) is y, f"{path}/operand {i}", "operands are not corresponding values")
        self.check(_attrs(a.name, a.attrs, a.attr_types) == _attrs(b.name, b.attrs, b.attr_types), path,
                   f"attrs {_attrs(a.name, a.attrs, a.attr_types)} != {_attrs(b.name, b.attrs, b.attr_types)}")
        self.check(len(a.results) == len(b.results), path, "result count differs")
        for i, (x, y) in enumerate(zip(a.results, b.results)):
            self.value(x, y, f"{path}/result {i}")
        self.check(len(a.regions) == len(b.regions), path, "region count differs")
        for r, (x, y) in enumerate(zip(a.regions, b.regions)):
            self.check(len(x.blocks) == len(y.blocks), f"{path}/region {r}", "block count differs")
            for k, (bx, by) in enumerate(zip(x.blocks, y.blocks)):
                self.block(bx, by, f"{path}/region {r}/block {k}")


def assert_programs_equal(a, b):
    """Raise AssertionError naming the first structural difference between two Programs."""
    _Compare().program(a, b)
