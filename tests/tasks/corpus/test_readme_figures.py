"""The corpus README's figures are the build's: its `build:` blocks equal what `figures.py` renders
from the built corpus and manifest, and its prose states no count that a block does not hold."""

from __future__ import annotations

import re
from pushbench import config
from pushbench.tasks.corpus import figures
from pushbench.tasks.readme_blocks import BLOCK, main, stale_blocks

README = config.ROOT / "src" / "pushbench" / "tasks" / "corpus" / "README.md"


def test_every_build_block_of_the_readme_matches_the_build(corpus_docs: list, corpus_tasks: list,
                                                           corpus_hidden: dict) -> None:
    text = README.read_text(encoding="utf-8")
    names = [" ".join(filter(None, (m.group(2), m.group(3)))) for m in BLOCK.finditer(text)]
    assert names == ["documents", "questions", "question corpus-002-c4", "question corpus-001-c4", "long"]
    assert stale_blocks(text, figures.block) == [], "run `python -m pushbench.tasks.readme_blocks`"
    assert main(["--check"]) == 0


def test_the_tables_count_what_the_build_holds(corpus_docs: list, corpus_tasks: list) -> None:
    documents = figures.documents_table(corpus_docs).splitlines()
    changelog = sum(d.kind == "changelog" for d in corpus_docs)
    assert next(r for r in documents if "(`changelog`)" in r).endswith(f"| {changelog:,} |")
    assert documents[-1].endswith(f"| **{len(corpus_docs):,}** |")
    short = [t for t in corpus_tasks if "split" not in t.settings]
    questions = figures.questions_table(short).splitlines()
    api = sum(t.settings["entity"] == "api" for t in short)
    assert questions[2].startswith("| API objects |") and questions[2].endswith(f"| {api:,} |")
    assert questions[-1].endswith(f"| **{len(short):,}** |")


COUNT = re.compile(r"(?<![\w.`-])\d{1,3}(?:,\d{3})+(?![\w.])|(?<![\w.`-])\d{3,}(?![\w.%])")


def prose(text: str) -> str:
    """The README without its generated blocks, code blocks and inline code."""
    text = BLOCK.sub("", text)
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def test_the_prose_states_no_build_count(corpus_tasks: list) -> None:
    """Counts of three or more digits (documents, questions) live in the generated tables only; the
    prose may state a setting of params.yaml's ``corpus`` block (budget, page size), as it is now."""
    settings = {f"{v:,}" for v in config.params("corpus").values() if isinstance(v, int)}
    assert set(COUNT.findall(prose(README.read_text(encoding="utf-8")))) - settings == set()


def test_a_typed_count_is_found() -> None:
    assert COUNT.findall(prose("That makes **7,034 documents** and 464 questions; `corpus-001-c4` is not.")) == \
        ["7,034", "464"]
