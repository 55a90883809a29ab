"""Keep the README's result tables identical to the ones the notebooks wrote into ``paper_figures/``.

A block in the README such as::

    <!-- paper_figures/04-dataops/dataops_success.md -->
    ...anything...
    <!-- /paper_figures -->

is replaced by that file's text. ``python -m pushbench.readme`` rewrites the README (``make repro``
runs it after ``dvc repro``); ``--check`` only reports stale blocks and exits 1 if there are any,
which is what the test suite uses.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from pushbench import config

BLOCK = re.compile(r"(<!-- (paper_figures/[\w./-]+\.md) -->\n)(.*?)(<!-- /paper_figures -->)", re.S)


class ReadmeError(ValueError):
    """A block names a file that does not exist."""


def render(text: str, root: Path) -> str:
    """The README text with every block's body replaced by its file's current text."""
    def fill(match: re.Match[str]) -> str:
        source = root / match.group(2)
        if not source.is_file():
            raise ReadmeError(f"README block names {match.group(2)}, which does not exist (run `make repro`)")
        body = source.read_text(encoding="utf-8").rstrip("\n") + "\n"
        return match.group(1) + body + match.group(4)
    return BLOCK.sub(fill, text)


def stale_blocks(text: str, root: Path) -> list[str]:
    """Files whose README block differs from the file."""
    current = {m.group(2): m.group(3) for m in BLOCK.finditer(text)}
    fresh = {m.group(2): m.group(3) for m in BLOCK.finditer(render(text, root))}
    return sorted(name for name in current if current[name] != fresh[name])


def main(argv: list[str]) -> int:
    readme = config.ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    try:
        stale = stale_blocks(text, config.ROOT)
    except ReadmeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if "--check" in argv:
        for name in stale:
            print(f"README block is stale: {name}", file=sys.stderr)
        return 1 if stale else 0
    if stale:
        readme.write_text(render(text, config.ROOT), encoding="utf-8")
    print(f"README: {len(stale)} table block(s) refreshed from paper_figures/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
