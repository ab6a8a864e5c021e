"""Random StableHLO programs with Shardy annotations, as MLIR text (for comparing our propagation
with the live Shardy's: both read the same text).

A program is a chain of ops drawn from elementwise (add, multiply, tanh), dot_general (with
batch dims), transpose, reshape (merging or splitting a dim), reduce (sum) and broadcast_in_dim,
over values of small power-of-two dims. Arguments get random shardings (open or closed dims,
sometimes a priority), and a few values get a sharding constraint."""
from __future__ import annotations

import re

import numpy as np

SIZES = (2, 4, 8)


def _t(shape) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


class _Program:
    def __init__(self, rng: np.random.Generator, axes: dict[str, int], constraints: bool, priorities: bool):
        self.rng, self.axes = rng, axes
        self.constraints, self.priorities = constraints, priorities
        self.args: list[tuple[str, tuple, str | None]] = []
        self.lines: list[str] = []
        self.values: list[tuple[str, tuple]] = []  # (name, shape), in order

    def sharding(self, shape, allow_priority=True) -> str:
        free = list(self.axes)
        self.rng.shuffle(free)
        dims = []
        for _ in shape:
            axes = []
            if free and self.rng.random() < 0.45:
                axes.append(free.pop())
            names = ", ".join(f'"{a}"' for a in axes)
            open_ = self.rng.random() < 0.5
            body = names + (", ?" if open_ and names else "?" if open_ else "")
            prio = f"p{self.rng.integers(0, 3)}" if self.priorities and allow_priority and axes and self.rng.random() < 0.25 else ""
            dims.append("{" + body + "}" + prio)
        return "<@mesh, [" + ", ".join(dims) + "]>"

    def arg(self, shape) -> str:
        name = f"%arg{len(self.args)}"
        annotated = self.sharding(shape) if self.rng.random() < 0.6 else None
        self.args.append((name, shape, annotated))
        self.values.append((name, shape))
        return name

    def emit(self, text: str, shape) -> str:
        name = f"%v{len(self.lines)}"
        self.lines.append(f"    {name} = {text}")
        self.values.append((name, shape))
        return name

    def pick(self):
        """A value to build on: a recent one, or a new argument."""
        tensors = [v for v in self.values if v[1] != ()]
        if tensors and self.rng.random() < 0.8:
            k = len(tensors) - 1 - min(int(self.rng.exponential(1.5)), len(tensors) - 1)
            name, shape = tensors[k]
            return name, shape
        shape = tuple(int(self.rng.choice(SIZES)) for _ in range(int(self.rng.integers(1, 4))))
        name = self.arg(shape)
        return name, shape

    def step(self) -> None:
        x, shape = self.pick()
        kind = self.rng.choice(["ew", "ew", "dot", "transpose", "reshape", "reduce", "broadcast", "constraint"])
        if kind == "ew":
            if self.rng.random() < 0.3:
                self.emit(f"stablehlo.tanh {x} : {_t(shape)}", shape)
                return
            y = self.arg(shape) if self.rng.random() < 0.5 else self.same_shape(shape, x)
            op = self.rng.choice(["add", "multiply"])
            self.emit(f"stablehlo.{op} {x}, {y} : {_t(shape)}", shape)
        elif kind == "dot":
            batch = list(shape[:-1][:int(self.rng.integers(0, len(shape)))])[:1] if len(shape) >= 2 else []
            k = shape[-1]
            n = int(self.rng.choice(SIZES))
            rhs_shape = tuple(batch) + (k, n)
            y = self.arg(rhs_shape)
            nb = len(batch)
            lhs_free = [d for i, d in enumerate(shape) if i >= nb and i != len(shape) - 1]
            out = tuple(batch) + tuple(lhs_free) + (n,)
            bd = f"batching_dims = [{', '.join(map(str, range(nb)))}] x [{', '.join(map(str, range(nb)))}], " if nb else ""
            self.emit(f"stablehlo.dot_general {x}, {y}, {bd}contracting_dims = [{len(shape) - 1}] x [{nb}] : "
                      f"({_t(shape)}, {_t(rhs_shape)}) -> {_t(out)}", out)
        elif kind == "transpose" and len(shape) >= 2:
            perm = [int(p) for p in self.rng.permutation(len(shape))]
            out = tuple(shape[p] for p in perm)
            self.emit(f"stablehlo.transpose {x}, dims = {perm} : ({_t(shape)}) -> {_t(out)}", out)
        elif kind == "reshape":
            if len(shape) >= 2 and self.rng.random() < 0.5:  # merge the last two dims
                out = shape[:-2] + (shape[-2] * shape[-1],)
            elif shape[-1] >= 4:  # split the last dim
                out = shape[:-1] + (2, shape[-1] // 2)
            else:
                return
            self.emit(f"stablehlo.reshape {x} : ({_t(shape)}) -> {_t(out)}", out)
        elif kind == "reduce" and len(shape) >= 2:
            d = int(self.rng.integers(0, len(shape)))
            out = tuple(s for i, s in enumerate(shape) if i != d)
            zero = self.emit("stablehlo.constant dense<0.000000e+00> : tensor<f32>", ())
            self.emit(f"stablehlo.reduce({x} init: {zero}) applies stablehlo.add across dimensions = [{d}] : "
                      f"({_t(shape)}, tensor<f32>) -> {_t(out)}", out)
        elif kind == "broadcast" and len(shape) <= 2:
            new = int(self.rng.choice(SIZES))
            at = int(self.rng.integers(0, len(shape) + 1))
            out = shape[:at] + (new,) + shape[at:]
            dims = [i if i < at else i + 1 for i in range(len(shape))]
            self.emit(f"stablehlo.broadcast_in_dim {x}, dims = {dims} : ({_t(shape)}) -> {_t(out)}", out)
        elif kind == "constraint" and self.constraints:
            self.emit(f"sdy.sharding_constraint {x} {self.sharding(shape, allow_priority=False)} : {_t(shape)}", shape)

    def same_shape(self, shape, avoid):
        for name, s in reversed(self.values):
            if s == shape and name != avoid:
                return name
        return self.arg(shape)

    def text(self) -> str:
        mesh = ", ".join(f'"{a}"={n}' for a, n in self.axes.items())
        args = ", ".join(f"{n}: {_t(s)}" + (f" {{sdy.sharding = #sdy.sharding{a}}}" if a else "")
                         for n, s, a in self.args)
        # every value is used or returned (Shardy's rewriter would drop a dead op, and the walks
        # of the two programs must line up)
        operands = set(re.findall(r"%\w+", " ".join(line.split("=", 1)[1] for line in self.lines)))
        outs = [(n, s) for n, s in self.values if n not in operands and s != () and not n.startswith("%arg")]
        outs = outs or [self.values[-1]]
        ret = ", ".join(n for n, _ in outs)
        types = ", ".join(_t(s) for _, s in outs)
        body = "\n".join(self.lines)
        return (f"module {{\n  sdy.mesh @mesh = <[{mesh}]>\n  func.func @main({args}) -> ({types}) {{\n{body}\n"
                f"    return {ret} : {types}\n  }}\n}}\n")


def random_stablehlo_program(seed: int, n_ops: int = 8, constraints: bool = True, priorities: bool = True) -> str:
    rng = np.random.default_rng(seed)
    names = ["x", "y", "z"][:int(rng.integers(1, 4))]
    prog = _Program(rng, {a: int(rng.choice([2, 4])) for a in names}, constraints, priorities)
    while len(prog.lines) < n_ops:
        prog.step()
    return prog.text()
