"""Keep the result tables in the project's Markdown identical to the ones the notebooks wrote into
``paper_figures/``.

The synced files are ``README.md`` and every ``docs/*.md`` (``synced_files``). A block in any of
them such as::

    <!-- paper_figures/04-dataops/dataops_success.md -->
    ...anything...
    <!-- /paper_figures -->

is replaced by that file's text. ``python -m pushbench.analysis.readme`` rewrites every file with a stale
block (``make repro`` runs it after ``dvc repro``); ``--check`` only reports stale blocks and exits
1 if there are any, which is what the test suite uses. A block naming a missing file exits 2.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from pushbench import config

BLOCK = re.compile(r"(<!-- (paper_figures/[\w./-]+\.md) -->\n)(.*?)(<!-- /paper_figures -->)", re.S)


class ReadmeError(ValueError):
    """A block names a file that does not exist."""


def synced_files(root: Path) -> list[Path]:
    """The Markdown files whose blocks are synced: README.md, then docs/*.md in name order."""
    files = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    return [path for path in files if path.is_file()]


def render(text: str, root: Path) -> str:
    """The text with every block's body replaced by its file's current text."""
    def fill(match: re.Match[str]) -> str:
        source = root / match.group(2)
        if not source.is_file():
            raise ReadmeError(f"a block names {match.group(2)}, which does not exist (run `make repro`)")
        body = source.read_text(encoding="utf-8").rstrip("\n") + "\n"
        return match.group(1) + body + match.group(4)
    return BLOCK.sub(fill, text)


def stale_blocks(text: str, root: Path) -> list[str]:
    """paper_figures files whose block in ``text`` differs from the file."""
    current = [(m.group(2), m.group(3)) for m in BLOCK.finditer(text)]
    fresh = [(m.group(2), m.group(3)) for m in BLOCK.finditer(render(text, root))]
    return sorted({name for (name, body), (_, new) in zip(current, fresh) if body != new})


def block_sources(text: str) -> list[str]:
    """The paper_figures files that ``text`` has blocks for, in order of appearance."""
    return [m.group(2) for m in BLOCK.finditer(text)]


def stale_files(root: Path) -> dict[Path, list[str]]:
    """Every synced file with at least one stale block, and those blocks."""
    stale = {}
    for path in synced_files(root):
        names = stale_blocks(path.read_text(encoding="utf-8"), root)
        if names:
            stale[path] = names
    return stale


def main(argv: list[str], root: Path | None = None) -> int:
    root = root or config.ROOT
    try:
        stale = stale_files(root)
    except ReadmeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if "--check" in argv:
        for path, names in stale.items():
            for name in names:
                print(f"{path.relative_to(root)}: block is stale: {name}", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(render(path.read_text(encoding="utf-8"), root), encoding="utf-8")
    blocks = sum(len(names) for names in stale.values())
    print(f"{blocks} table block(s) refreshed from paper_figures/ in {len(stale)} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
