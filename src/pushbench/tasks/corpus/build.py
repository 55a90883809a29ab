"""The corpus stage: every pinned snapshot's docs, docstrings, changelogs, README and config files,
cut into documents of at most ``max_tokens`` tokens with stable ids, written to
``data/corpus/documents.jsonl`` (one sorted-key JSON object per line, byte-identical on a rebuild).

``python -m pushbench.tasks.corpus.build`` is the DVC stage ``corpus``. Which snapshots it reads and
which files count as what come from ``params.yaml: corpus``; adding a snapshot to the list grows it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from pushbench import config
from pushbench.tasks.corpus.sources import Section, changelog_sections, docstring_sections, page_sections
from pushbench.tokens import count_tokens

CORPUS_DIR = config.DATA / "corpus"
DOCUMENTS = "documents.jsonl"


@dataclass(frozen=True)
class Document:
    id: str
    kind: str
    project: str
    source: str
    title: str
    text: str
    part: int
    parts: int
    meta: dict[str, str]

    def row(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "project": self.project, "source": self.source,
                "title": self.title, "text": self.text, "part": self.part, "parts": self.parts, "meta": self.meta}


def doc_id(project: str, source: str, locator: str, part: int) -> str:
    """Stable id: a hash of where the text comes from (never of what it says)."""
    digest = hashlib.sha1(f"{project}|{source}|{locator}|{part}".encode()).hexdigest()
    return f"d{digest[:10]}"


# --- which files are what ------------------------------------------------------------------
def project_sections(project: str, root: Path, params: dict[str, Any]) -> Iterator[Section]:
    files = sorted(p for p in root.rglob("*") if p.is_file())
    changelogs = set(params["changelog_files"])
    skip = set(params["skip_files"])
    for path in files:
        rel = path.relative_to(root).as_posix()
        parts = rel.split("/")
        if any(p in skip for p in parts) or rel in skip:
            continue
        if path.name in changelogs:
            yield from changelog_sections(project, path, rel)
        elif parts[0] in params["docs_dirs"] and path.suffix in (".rst", ".md"):
            yield from page_sections(project, path, rel, "docs")
        elif parts[0] == "src" and path.suffix == ".py":
            yield from docstring_sections(project, path, rel)
        elif len(parts) == 1 and path.suffix in (".rst", ".md"):
            yield from page_sections(project, path, rel, "readme")
        elif len(parts) == 1 and path.name in params["config_files"]:
            yield from page_sections(project, path, rel, "config")


# --- chunking ------------------------------------------------------------------------------
def _pieces(text: str, max_tokens: int) -> Iterator[str]:
    """Paragraphs, and lines then word runs of any paragraph longer than ``max_tokens``."""
    for para in re.split(r"\n\s*\n", text):
        para = para.strip("\n")
        if not para.strip():
            continue
        if count_tokens(para) <= max_tokens:
            yield para
            continue
        for line in para.splitlines():
            if count_tokens(line) <= max_tokens:
                yield line
                continue
            words = line.split()
            step = max(1, max_tokens // 3)  # a word is rarely more than three tokens
            for i in range(0, len(words), step):
                yield " ".join(words[i:i + step])


def chunk(text: str, max_tokens: int) -> list[str]:
    """Greedy packing of pieces into chunks of at most ``max_tokens`` tokens."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for piece in _pieces(text, max_tokens):
        n = count_tokens(piece) + 1
        if current and size + n > max_tokens:
            chunks.append("\n\n".join(current))
            current, size = [], 0
        current.append(piece)
        size += n
    if current:
        chunks.append("\n\n".join(current))
    return chunks


def documents(sections: Iterable[Section], max_tokens: int) -> Iterator[Document]:
    for section in sections:
        parts = chunk(section.text, max_tokens)
        if section.kind == "docstring" and len(parts) > 1:  # every part shows its object's signature and module
            head, body = "\n".join(section.text.split("\n", 2)[:2]), section.text.split("\n", 2)[2]
            parts = [f"{head}\n\n{p}" for p in chunk(body, max_tokens - count_tokens(head) - 2)]
        for i, text in enumerate(parts, 1):
            title = section.title if len(parts) == 1 else f"{section.title} (part {i} of {len(parts)})"
            yield Document(doc_id(section.project, section.source, section.locator, i), section.kind,
                           section.project, section.source, title, text, i, len(parts), dict(section.meta))


def build_corpus(params: dict[str, Any], snapshot_root: Path | None = None) -> list[Document]:
    root = snapshot_root or config.SNAPSHOT_SRC
    docs: list[Document] = []
    for project in params["projects"]:
        tree = root / project
        if not tree.is_dir():
            raise FileNotFoundError(f"no snapshot of {project} at {tree}; run `pushbench snapshots fetch`")
        docs += documents(project_sections(project, tree, params), int(params["max_tokens"]))
    ids = [d.id for d in docs]
    if len(set(ids)) != len(ids):
        raise AssertionError("two documents share an id")
    return docs


def write_corpus(docs: list[Document], out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / DOCUMENTS
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text("".join(json.dumps(d.row(), sort_keys=True, ensure_ascii=False) + "\n" for d in docs),
                   encoding="utf-8")
    os.replace(tmp, path)
    return path


def read_corpus(path: Path | None = None) -> list[Document]:
    path = path or CORPUS_DIR / DOCUMENTS
    if not path.is_file():
        raise FileNotFoundError(f"no corpus at {path}; run `python -m pushbench.tasks.corpus.build`")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [Document(**row) for row in rows]


def main(argv: list[str]) -> int:
    params = config.params("corpus")
    docs = build_corpus(params)
    path = write_corpus(docs, CORPUS_DIR)
    kinds = {k: sum(1 for d in docs if d.kind == k) for k in sorted({d.kind for d in docs})}
    print(f"corpus: {len(docs)} documents in {path.relative_to(config.ROOT)} ({kinds})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
