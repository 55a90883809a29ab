"""Raw sections of the corpus, read from one pinned snapshot tree (never importing its code).

A section is one unit of meaning before chunking: a documentation page's section, the docstring of
a module or of a public function, class or method (read with ``ast``), one changelog item of one
release, or a README / configuration file's section. ``chunk.py`` cuts sections into documents.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, cast

_UNDERLINE = re.compile(r"^([=\-~^*+#`'\"])\1{2,}\s*$")
_MD_HEADING = re.compile(r"^(#{1,4})\s+(.+?)\s*#*\s*$")
_ITEM = re.compile(r"^(\s{0,3})[-*]\s+")
_NAMED_RELEASE = re.compile(r"^[A-Za-z][\w.-]* v?(\d+\.\d+(?:\.\d+)?\w*) \((\d{4}-\d{2}-\d{2})\)\s*$")  # pytest 8.3.3 (DATE)
_FLASK_RELEASE = re.compile(r"^Version (\d+\.\d+(?:\.\d+)?\w*)\s*$")
_FLASK_DATE = re.compile(r"^Released (\d{4}-\d{2}-\d{2})")
_REQUESTS_RELEASE = re.compile(r"^(\d+\.\d+(?:\.\d+)?) \((\d{4}-\d{2}-\d{2})\)\s*$")
# "[1.2.3] - DATE", "[1.2.3]", "v1.2.3 - DATE" (a bare "2.6" heading is not taken for a release: its
# items stay with the release above it, as pytest's oldest entries have always been read)
_KEEP_A_CHANGELOG = re.compile(r"^(?:\[v?(\d+\.\d+(?:\.\d+)?\w*)\]|v?(\d+\.\d+(?:\.\d+)?\w*)(?= - ))"
                               r"(?: - (\d{4}-\d{2}-\d{2}))?\s*$")
_RELEASE_FORMS = (_NAMED_RELEASE, _REQUESTS_RELEASE, _FLASK_RELEASE, _KEEP_A_CHANGELOG)


@dataclass(frozen=True)
class Section:
    kind: str  # "docs" | "module" | "docstring" | "changelog" | "readme" | "config"
    project: str
    source: str  # path inside the snapshot
    locator: str  # stable position inside the source (section number, qualified name, version/item)
    title: str  # what search hits and get_document show as the document's title
    text: str
    meta: dict[str, str] = field(default_factory=dict)


# --- headings --------------------------------------------------------------------------------
def split_headings(text: str) -> list[tuple[str, str]]:
    """(heading, body) pairs of an rst or markdown text; the text before any heading has heading ''."""
    lines = text.splitlines()
    out: list[tuple[str, list[str]]] = [("", [])]
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        md = _MD_HEADING.match(line)
        if line.strip() and not _UNDERLINE.match(line) and _UNDERLINE.match(nxt) and len(nxt.strip()) >= len(line.strip()):
            out.append((line.strip(), []))
            i += 2
            continue
        if _UNDERLINE.match(line) and _UNDERLINE.match(lines[i + 2] if i + 2 < len(lines) else "") and nxt.strip():
            out.append((nxt.strip(), []))  # an overlined heading
            i += 3
            continue
        if md:
            out.append((md.group(2).strip(), []))
        else:
            out[-1][1].append(line)
        i += 1
    return [(h, "\n".join(body).strip()) for h, body in out if h or "\n".join(body).strip()]


def page_sections(project: str, path: Path, rel: str, kind: str = "docs") -> Iterator[Section]:
    parts = split_headings(path.read_text(encoding="utf-8", errors="replace"))
    page = next((h for h, _ in parts if h), rel)
    for n, (heading, body) in enumerate(parts):
        if not body:
            continue
        where = page if not heading or heading == page else f"{page} > {heading}"
        yield Section(kind, project, rel, f"s{n:03d}", f"{project} {kind}: {where}",
                      body, {"page": page, "heading": heading or page})


# --- docstrings ------------------------------------------------------------------------------
def _public(name: str) -> bool:
    return not name.startswith("_")


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    names += [f"*{args.vararg.arg}"] if args.vararg else ([] if not args.kwonlyargs else ["*"])
    names += [a.arg for a in args.kwonlyargs]
    names += [f"**{args.kwarg.arg}"] if args.kwarg else []
    return ", ".join(names)


def module_name(rel: str) -> str:
    """``src/flask/json/tag.py`` -> ``flask.json.tag`` (a package's ``__init__`` is the package)."""
    parts = Path(rel).with_suffix("").parts
    parts = parts[1:] if parts and parts[0] == "src" else parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def docstring_sections(project: str, path: Path, rel: str) -> Iterator[Section]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except SyntaxError:
        return
    module = module_name(rel)
    if doc := ast.get_docstring(tree):
        yield Section("module", project, rel, module, f"{module} (module docstring)", doc,
                      {"module": module})
    for node in tree.body:
        yield from _object_sections(project, rel, module, node, "")


def _object_sections(project: str, rel: str, module: str, node: ast.AST, owner: str) -> Iterator[Section]:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not _public(node.name):
        return
    qualname = f"{owner}.{node.name}" if owner else node.name
    is_class = isinstance(node, ast.ClassDef)
    what = "class" if is_class else ("method" if owner else "function")
    doc = ast.get_docstring(node)
    if doc:
        params = "" if isinstance(node, ast.ClassDef) else _signature(node)
        head = f"class {node.name}" if is_class else f"def {node.name}({params})"
        name = f"{module}.{qualname}"
        yield Section("docstring", project, rel, qualname, f"{name} ({what} docstring)", f"{head}\nmodule: {module}\n\n{doc}",
                      {"module": module, "qualname": qualname, "name": name, "object": what,
                       "params": params})
    if is_class and not owner:
        for child in node.body:
            yield from _object_sections(project, rel, module, child, qualname)


# --- changelogs ------------------------------------------------------------------------------
def _releases(text: str) -> Iterator[tuple[str, str, list[str]]]:
    """(version, date, lines) per release of a changelog."""
    lines = text.splitlines()
    version: str | None = None
    date, body = "", list[str]()
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        heading = release_heading(line, nxt)
        if heading:
            if version:
                yield version, date, body
            (version, date), body = heading, []
            continue
        if version and not date and (d := _FLASK_DATE.match(line)):
            date = d.group(1)
        if version:
            body.append(line)
    if version:
        yield version, date, body


def release_heading(line: str, nxt: str) -> tuple[str, str] | None:
    """A release heading in any of the common changelog forms, whatever the project: an underlined
    reStructuredText title or a Markdown heading holding "<project> X.Y.Z (DATE)", "X.Y.Z (DATE)",
    "Version X.Y.Z" (its date on a later "Released DATE" line) or "[X.Y.Z] - DATE": (version, date
    or "")."""
    md = _MD_HEADING.match(line)
    text = md.group(2) if md else line
    if not md and not _UNDERLINE.match(nxt):
        return None
    m = next((m for pattern in _RELEASE_FORMS if (m := pattern.match(text))), None)
    if m is None:
        return None
    found = [g for g in m.groups() if g]
    return found[0], (found[1] if len(found) > 1 else "")


def _items(lines: list[str]) -> list[str]:
    """Top-level list items of a release's body, each with its continuation lines."""
    items: list[list[str]] = []
    open_item = False
    for line in lines:
        m = _ITEM.match(line)
        if m and len(m.group(1)) <= 1:
            items.append([line[m.end():]])
            open_item = True
        elif open_item and line.strip() and line[:1].isspace() and not _UNDERLINE.match(line):
            items[-1].append(line.strip())
        elif line.strip() and not line[:1].isspace():  # a subheading or paragraph ends the item
            open_item = False
    return [" ".join(item).strip() for item in items if " ".join(item).strip()]


def changelog_sections(project: str, path: Path, rel: str) -> Iterator[Section]:
    text = path.read_text(encoding="utf-8", errors="replace")
    for version, date, body in _releases(text):
        released = date or "unreleased"
        for n, item in enumerate(_items(body), 1):
            if item.startswith("[Short description"):
                continue
            yield Section("changelog", project, rel, f"{version}#{n:03d}",
                          f"{project} {version} changelog (released {released}), item {n}", item,
                          {"version": version, "date": date, "year": date[:4], "item": str(n)})
