"""Family READMEs' build figures, generated rather than typed.

A block in ``src/pushbench/tasks/<family>/README.md`` such as::

    <!-- build:questions -->
    ...anything...
    <!-- /build -->

(or ``<!-- build:question corpus-002-c4 -->``, with one argument) holds what the family's
``figures`` module (``pushbench.tasks.<family>.figures``) renders for it from the build:
``block(name, arg)`` returns the block's Markdown. ``python -m pushbench.tasks.readme_blocks``
rewrites every stale block (``make repro`` runs it after the pipeline); ``--check`` only lists them
and exits 1 if there are any. A block its family does not know exits 2; a family whose build is
missing is skipped with a note (each family's test checks its blocks against a build).
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Collection
from pathlib import Path

from pushbench.sandbox.files import write_text_atomic
from pushbench.tasks.base import TaskSpec

BLOCK = re.compile(r"(<!-- build:([\w-]+)(?: ([\w.-]+))? -->\n)(.*?)(<!-- /build -->)", re.S)
TASKS = Path(__file__).resolve().parent

Renderer = Callable[[str, "str | None"], str]


class UnknownBlock(ValueError):
    """A README names a block its family's figures module does not render."""


def built_tasks(family: str, name: str, arg: str | None, blocks: Collection[str]) -> list[TaskSpec]:
    """The family's built tasks, for its block ``name`` (one of ``blocks``, which take no argument)."""
    from pushbench.tasks import load_tasks, manifest_path

    if name not in blocks or arg is not None:
        raise UnknownBlock(f"{family} README: unknown block {name!r}")
    if not manifest_path(family).is_file():
        raise FileNotFoundError(f"no {family} manifest: run `python -m pushbench.tasks.manifests {family}` first")
    return load_tasks(family)


def render(text: str, block: Renderer) -> str:
    """The text with every block's body replaced by what ``block`` renders for it now."""
    def fill(m: re.Match[str]) -> str:
        return m.group(1) + block(m.group(2), m.group(3)).rstrip("\n") + "\n" + m.group(5)
    return BLOCK.sub(fill, text)


def stale_blocks(text: str, block: Renderer) -> list[str]:
    """The blocks of ``text`` (``name`` or ``name arg``) whose body differs from a fresh rendering."""
    return _differing(text, render(text, block))


def _differing(text: str, fresh: str) -> list[str]:
    """The blocks whose body differs between ``text`` and its rendering ``fresh``."""
    return [" ".join(filter(None, (old.group(2), old.group(3))))
            for old, new in zip(BLOCK.finditer(text), BLOCK.finditer(fresh)) if old.group(4) != new.group(4)]


def figure_families(root: Path = TASKS) -> list[str]:
    """Families whose subpackage has a ``figures`` module, by name."""
    return sorted(p.parent.name for p in root.glob("*/figures.py") if (p.parent / "README.md").is_file())


def renderer(family: str) -> Renderer:
    module = importlib.import_module(f"pushbench.tasks.{family}.figures")
    block: Renderer = module.block
    return block


def main(argv: list[str], root: Path = TASKS) -> int:
    check = "--check" in argv
    stale: dict[str, list[str]] = {}
    try:
        for family in figure_families(root):
            readme = root / family / "README.md"
            text = readme.read_text(encoding="utf-8")
            try:
                fresh = render(text, renderer(family))
            except FileNotFoundError as err:  # e.g. rows, outside the pipeline: its family test checks it
                print(f"{family}/README.md: not checked: {err}", file=sys.stderr)
                continue
            names = _differing(text, fresh)
            if names:
                stale[f"{family}/README.md"] = names
                if not check:
                    write_text_atomic(readme, fresh)
    except UnknownBlock as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for where, names in stale.items():
        print(f"{where}: {'stale' if check else 'refreshed'}: {', '.join(names)}", file=sys.stderr if check else sys.stdout)
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
