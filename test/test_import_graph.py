"""Each package reads one way: no module imports, directly or through others of its package, a
module that imports it back, counting imports made inside functions too (a lazy import is still a
dependency). Read from the source with `ast`, so it holds for code paths no test runs."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {  # package -> its folder
    "codegen": ROOT / "codegen",
    "spmdkit.ir": ROOT / "python" / "spmdkit" / "ir",
    "spmdkit.propagation": ROOT / "python" / "spmdkit" / "propagation",
    "spmdkit.distributed": ROOT / "python" / "spmdkit" / "distributed",
    "spmdkit.partition": ROOT / "python" / "spmdkit" / "partition",
}


def imports_within(package: str, folder: Path) -> dict[str, set[str]]:
    """module name -> the modules of the same package it imports (the package's __init__ aside:
    it assembles the package and imports everything)."""
    modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    graph = {}
    for name in modules:
        tree = ast.parse((folder / f"{name}.py").read_text())
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:  # from .x import y / from . import x
                targets = [node.module] if node.module else [a.name for a in node.names]
                deps |= {t.split(".")[0] for t in targets if t.split(".")[0] in modules}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith(package + "."):
                deps.add(node.module[len(package) + 1:].split(".")[0])
        graph[name] = deps - {name}
    return graph


def cycle(graph: dict[str, set[str]]):
    """One import cycle as a list of modules, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state:
                found = visit(d)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_package_imports_one_way(package):
    graph = imports_within(package, PACKAGES[package])
    assert graph  # the folder was read
    assert cycle(graph) is None, " -> ".join(cycle(graph))


def test_the_check_finds_a_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None
