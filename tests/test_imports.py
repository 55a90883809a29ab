"""No module of the package imports back into a cycle (counting imports inside functions too, not
the type checker's own ``if TYPE_CHECKING:`` imports, which never run)."""

from __future__ import annotations

import ast
from pathlib import Path

import pushbench

PACKAGE = Path(pushbench.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, modules: set[str]) -> set[str]:
    """The package modules ``path`` imports, anywhere in the file (a package's __init__ excluded:
    importing ``pushbench.tasks.base`` runs ``pushbench.tasks`` too, which is checked on its own)."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(n) for block in ast.walk(tree) if _type_checking(block)
                   for stmt in block.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in typing_only:  # ``if TYPE_CHECKING:`` imports never run
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        found |= {n for n in names if n in modules}
    return found


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: imports(path, set(files)) - {name} for name, path in files.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_package_has_no_import_cycle() -> None:
    assert cycles(graph()) == []


def test_the_cycle_check_can_fail() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_package_init_imports_its_own_submodules_eagerly_except_contracts() -> None:
    """``pushbench.tasks`` must not load a family; ``pushbench.runner`` loads its parts lazily."""
    edges = graph()
    assert not {m for m in edges["pushbench.tasks"] if m.count(".") >= 3}
    assert edges["pushbench.runner"] == set()


def test_type_checking_imports_are_not_runtime_edges(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from typing import TYPE_CHECKING\nimport a\nif TYPE_CHECKING:\n    import b\n", encoding="utf-8")
    assert imports(module, {"a", "b"}) == {"a"}
