"""SWE-lite fault operators and their inverses (repair candidates), on single source lines.

A *fault* is a one-line, behaviour-changing edit of a function in a pinned snapshot:

============  ====================================  =====================================
operator      fault                                 example
============  ====================================  =====================================
``cmp``       negate a comparison                   ``a < b`` -> ``a >= b``, ``is`` -> ``is not``
``return``    drop a returned local variable        ``return result`` -> ``return``
``offby1``    add one to an integer literal          ``s[1:]`` -> ``s[2:]``, ``n > 0`` -> ``n > 1``
``bool``      flip a boolean literal (defaults too)  ``strict=True`` -> ``strict=False``
``not``       drop a negation                       ``if not x:`` -> ``if x:``
``andor``     swap ``and`` / ``or``                 ``a and b`` -> ``a or b``
============  ====================================  =====================================

``repair_candidates`` is the other direction and is what a careful reader of *visible* code can
propose for a function: every single-line edit that would undo one of these fault kinds (negate
any comparison, return a local variable from a bare ``return``, move a literal by one, flip a
boolean, add or drop a ``not``, swap ``and``/``or``). The builder keeps only faults whose true
repair is among them; SimLM's reader ranks them with the evidence it saw (``tasks/swe/reader.py``).
"""

from __future__ import annotations

import ast
import re
import threading
from dataclasses import dataclass
from typing import Iterator, cast

OPERATORS = ("cmp", "return", "offby1", "bool", "not", "andor")
NEGATE = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE,
          ast.LtE: ast.Gt, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
OP_TEXT = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.GtE: ">=", ast.Gt: ">", ast.LtE: "<=",
           ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}
_OP_TOKEN = re.compile(r"==|!=|<=|>=|<|>|\bis\s+not\b|\bnot\s+in\b|\bis\b|\bin\b")
_INT = re.compile(r"^\d+$")
NEGATABLE = (ast.Name, ast.Attribute, ast.Call, ast.Subscript)


@dataclass(frozen=True)
class LineEdit:
    """Replace line ``lineno`` (1-based, in its file) ``old`` by ``new``; ``op`` names the kind."""

    lineno: int
    old: str
    new: str
    op: str
    col: int = 0  # where on the line the change starts (orders edits on one line)


@dataclass(frozen=True)
class FunctionSource:
    qualname: str
    lineno: int  # first line of the def (decorators excluded)
    end_lineno: int
    node: ast.AST

_PARSING = threading.Lock()


def parse_python(text: str) -> ast.Module:
    """``ast.parse`` one thread at a time: CPython 3.11.7's parser can fail with "AST constructor
    recursion depth mismatch" when threads parse at once (the manifests build checks units in threads)."""
    with _PARSING:
        return ast.parse(text)


def functions(tree: ast.Module) -> list[FunctionSource]:
    """Every function and method with its qualified name, in source order."""
    found: list[FunctionSource] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = f"{prefix}{child.name}"
                found.append(FunctionSource(qual, child.lineno, child.end_lineno or child.lineno, child))
                visit(child, qual + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
    visit(tree, "")
    return found


def own_nodes(func: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a function's own body and signature defaults (not of nested defs or lambdas)."""
    args = func.args  # type: ignore[attr-defined]
    stack: list[ast.AST] = [*args.defaults, *[d for d in args.kw_defaults if d is not None], *func.body]  # type: ignore[attr-defined]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.append(child)


def _one_line(*nodes: ast.AST) -> bool:
    return all(getattr(n, "lineno", None) == getattr(n, "end_lineno", -1) == getattr(nodes[0], "lineno", None)
               for n in nodes)


def _splice(line: str, start: int, end: int | None, text: str) -> str:
    return line[:start] + text + line[end:]


def _parents(func: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in own_nodes(func) for child in ast.iter_child_nodes(node)}


# --- faults ------------------------------------------------------------------------------------

def fault_sites(func: ast.AST, lines: list[str]) -> list[LineEdit]:
    """Every fault the operators can inject into this function, in source order."""
    edits: list[LineEdit] = []
    parents = _parents(func)
    for node in own_nodes(func):
        edits.extend(_faults_at(node, lines, parents))
    return sorted(edits, key=lambda e: (e.lineno, e.col, e.op, e.new))


def _faults_at(node: ast.AST, lines: list[str], parents: dict[ast.AST, ast.AST]) -> list[LineEdit]:
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and _one_line(node.left, node.comparators[0]):
        edit = _negate_compare(node, lines)
        return [LineEdit(edit.lineno, edit.old, edit.new, "cmp", edit.col)] if edit else []
    if isinstance(node, ast.Return) and isinstance(node.value, ast.Name) and _one_line(node):
        line = lines[node.lineno - 1]
        return [LineEdit(node.lineno, line, _splice(line, node.col_offset, node.end_col_offset, "return"),
                         "return", node.col_offset)]
    if isinstance(node, ast.Constant) and _one_line(node):
        line = lines[node.lineno - 1]
        text = line[node.col_offset:node.end_col_offset]
        if isinstance(node.value, bool):
            flipped = "False" if node.value else "True"
            return [LineEdit(node.lineno, line, _splice(line, node.col_offset, node.end_col_offset, flipped),
                             "bool", node.col_offset)]
        if type(node.value) is int and _INT.match(text) and _counts(node, parents):
            return [LineEdit(node.lineno, line, _splice(line, node.col_offset, node.end_col_offset,
                                                        str(node.value + 1)), "offby1", node.col_offset)]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and isinstance(node.operand, NEGATABLE) \
            and _one_line(node):
        line = lines[node.lineno - 1]
        return [LineEdit(node.lineno, line, _splice(line, node.col_offset, node.operand.col_offset, ""),
                         "not", node.col_offset)]
    if isinstance(node, ast.BoolOp) and len(node.values) == 2 and _one_line(*node.values):
        edit = _swap_boolop(node, lines)
        return [edit] if edit else []
    return []


def _counts(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """An integer literal used as a count, bound or index (not a flag, code or magic number)."""
    parent = parents.get(node)
    return isinstance(parent, (ast.Compare, ast.Slice, ast.Subscript, ast.BinOp)) and node.value <= 64  # type: ignore[attr-defined]


def _negate_compare(node: ast.Compare, lines: list[str]) -> LineEdit | None:
    line = lines[node.lineno - 1]
    start, end = cast(int, node.left.end_col_offset), node.comparators[0].col_offset  # one-line nodes (_one_line)
    segment = line[start:end]
    tokens = [m for m in _OP_TOKEN.finditer(segment)]
    if len(tokens) != 1 or type(node.ops[0]) not in NEGATE:
        return None
    tok = tokens[0]
    new_op = OP_TEXT[NEGATE[type(node.ops[0])]]
    new_segment = segment[:tok.start()] + new_op + segment[tok.end():]
    return LineEdit(node.lineno, line, line[:start] + new_segment + line[end:], "cmp", start + tok.start())


def _swap_boolop(node: ast.BoolOp, lines: list[str]) -> LineEdit | None:
    line = lines[node.lineno - 1]
    start, end = cast(int, node.values[0].end_col_offset), node.values[1].col_offset  # one-line nodes (_one_line)
    segment = line[start:end]
    word, other = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
    found = list(re.finditer(rf"\b{word}\b", segment))
    if len(found) != 1:
        return None
    tok = found[0]
    new = line[:start] + segment[:tok.start()] + other + segment[tok.end():] + line[end:]
    return LineEdit(node.lineno, line, new, "andor", start + tok.start())


# --- repairs (what a reader of the visible function can propose) -------------------------------

def repair_candidates(func: ast.AST, lines: list[str]) -> list[LineEdit]:
    """Every single-line edit that undoes one fault kind somewhere in this function."""
    edits: list[LineEdit] = []
    assigned = _assignments(func)
    for node in own_nodes(func):
        edits.extend(_repairs_at(node, lines, assigned))
    unique: dict[tuple[int, str], LineEdit] = {}
    for edit in sorted(edits, key=lambda e: (e.lineno, e.col, e.op)):  # stable: keeps preference order
        if edit.new != edit.old:
            unique.setdefault((edit.lineno, edit.new), edit)
    return list(unique.values())


def _assignments(func: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of every local name bound in the function body, in source order."""
    names = []
    for node in own_nodes(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append((node.lineno, node.id))
    return sorted(set(names))


def _repairs_at(node: ast.AST, lines: list[str], assigned: list[tuple[int, str]]) -> list[LineEdit]:
    if isinstance(node, ast.Return) and node.value is None and _one_line(node):
        line = lines[node.lineno - 1]
        before = [name for lineno, name in assigned if lineno < node.lineno]
        seen: list[str] = []
        for name in reversed(before):  # the most recently bound name first
            if name not in seen:
                seen.append(name)
        return [LineEdit(node.lineno, line, _splice(line, node.col_offset, node.end_col_offset, f"return {name}"),
                         "return", node.col_offset) for name in seen]
    if isinstance(node, ast.Constant) and type(node.value) is int and _one_line(node):
        line = lines[node.lineno - 1]
        text = line[node.col_offset:node.end_col_offset]
        if not _INT.match(text):
            return []
        return [LineEdit(node.lineno, line, _splice(line, node.col_offset, node.end_col_offset, str(node.value + d)),
                         "offby1", node.col_offset) for d in (-1, 1) if node.value + d >= 0]
    if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)) and isinstance(node.test, NEGATABLE) \
            and _one_line(node.test):
        line = lines[node.test.lineno - 1]
        return [LineEdit(node.test.lineno, line, _splice(line, node.test.col_offset, node.test.col_offset, "not "),
                         "not", node.test.col_offset)]
    if isinstance(node, ast.BoolOp):
        out = []
        for value in node.values:
            if isinstance(value, NEGATABLE) and _one_line(value):
                line = lines[value.lineno - 1]
                out.append(LineEdit(value.lineno, line, _splice(line, value.col_offset, value.col_offset, "not "),
                                    "not", value.col_offset))
        swap = _swap_boolop(node, lines) if len(node.values) == 2 and _one_line(*node.values) else None
        return out + ([swap] if swap else [])
    # negate a comparison, flip a boolean, drop an existing ``not`` (no parents: no offby1 here)
    return [e for e in _faults_at(node, lines, {}) if e.op in ("cmp", "bool", "not")]


def apply_edit(text: str, edit: LineEdit) -> str:
    """The file text with line ``edit.lineno`` replaced (the line must read ``edit.old``)."""
    lines = text.split("\n")
    if lines[edit.lineno - 1] != edit.old:
        raise ValueError(f"line {edit.lineno} does not read {edit.old!r}")
    lines[edit.lineno - 1] = edit.new
    return "\n".join(lines)


def function_named(tree: ast.Module, qualname: str) -> FunctionSource | None:
    return next((f for f in functions(tree) if f.qualname == qualname), None)
