"""Code units of a snapshot, from the AST: every function, method and class, with its source.

A unit's identifier is ``relative/path.py::Qualified.name``. Units keep their AST node (for the
task builders' predicates) and the source lines a search hit may show.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

_WORD = re.compile(r"[A-Za-z]+|\d+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# statements with a body of statements: only these can hold a def or class besides the module
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.TryStar, ast.Match,
             ast.excepthandler, ast.match_case)


@lru_cache(maxsize=200_000)
def tokenize(text: str) -> tuple[str, ...]:
    """Lower-case word tokens; snake_case and CamelCase words are split into their parts."""
    out: list[str] = []
    for word in _WORD.findall(text.replace("_", " ")):
        out.extend(_word_tokens(word))
    return tuple(out)


@lru_cache(maxsize=200_000)
def _word_tokens(word: str) -> tuple[str, ...]:
    """One word's tokens: its CamelCase parts, then the whole word when it has several."""
    parts = _CAMEL.findall(word)
    lowered = tuple(p.lower() for p in parts)
    return lowered + (word.lower(),) if len(parts) > 1 else lowered


@dataclass
class CodeUnit:
    uid: str  # path::qualname
    path: str
    qualname: str
    kind: str  # "function" | "class"
    lineno: int
    header: list[tuple[int, str]]  # decorators and signature lines
    doc: str | None  # first line of the docstring, if any
    doc_line: int  # where the docstring starts (0 when there is none)
    body: list[tuple[int, str]]  # remaining source lines (docstring excluded)
    node: Any = field(repr=False, compare=False)  # the def's AST node; None once a search index drops it

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]

    @property
    def is_test(self) -> bool:
        return self.kind == "function" and self.name.startswith("test")

    def text(self) -> str:
        parts = [self.path, self.qualname, *(t for _, t in self.header), self.doc or ""]
        parts.extend(t for _, t in self.body)
        return "\n".join(parts)


def _docstring_span(node: ast.AST) -> tuple[int, int] | None:
    body = getattr(node, "body", [])
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first.lineno, first.end_lineno or first.lineno
    return None


def _make_unit(rel: str, qual: str, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
               lines: list[str]) -> CodeUnit:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    body_start = node.body[0].lineno
    header_end = max(node.lineno, body_start - 1)
    span = _docstring_span(node)
    if span:  # signature ends on the line before the docstring
        header_end = max(node.lineno, span[0] - 1)
    while header_end > node.lineno and lines[header_end - 1].strip().startswith("#"):
        header_end -= 1  # comments between the signature and the body are not signature
    header = [(n, lines[n - 1].rstrip()) for n in range(first, header_end + 1) if lines[n - 1].strip()]
    doc_text = ast.get_docstring(node, clean=True)
    doc = doc_text.strip().splitlines()[0].strip() if doc_text and doc_text.strip() else None
    skip = set(range(span[0], span[1] + 1)) if span else set()
    end = node.end_lineno or node.lineno
    body = [(n, lines[n - 1].rstrip()) for n in range(header_end + 1, end + 1)
            if n not in skip and lines[n - 1].strip()]
    kind = "class" if isinstance(node, ast.ClassDef) else "function"
    doc_line = span[0] if span and doc else 0
    return CodeUnit(f"{rel}::{qual}", rel, qual, kind, node.lineno, header, doc, doc_line, body, node)


def units_of_file(path: Path, rel: str) -> list[CodeUnit]:
    source = path.read_text(encoding="utf-8", errors="replace")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines = source.splitlines()
    units: list[CodeUnit] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = prefix + child.name
                units.append(_make_unit(rel, qual, child, lines))
                walk(child, qual + ".")
            elif isinstance(child, _COMPOUND):  # under if/try/with/for (simple statements hold no def)
                walk(child, prefix)

    walk(tree, "")
    return units


@lru_cache(maxsize=8)
def load_units(root: Path) -> tuple[CodeUnit, ...]:
    """All units of the tree at ``root``, ordered by path then line; ids unique (first wins)."""
    root = Path(root)
    seen: set[str] = set()
    units: list[CodeUnit] = []
    for path in sorted(root.rglob("*.py")):
        if path.is_symlink() or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        for unit in units_of_file(path, rel):
            if unit.uid not in seen:
                seen.add(unit.uid)
                units.append(unit)
    return tuple(units)
