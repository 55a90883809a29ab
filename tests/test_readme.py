"""The README's result tables are the committed paper_figures tables, not hand-copied numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from pushbench import config
from pushbench.readme import ReadmeError, render, stale_blocks


def test_readme_tables_match_paper_figures() -> None:
    text = (config.ROOT / "README.md").read_text(encoding="utf-8")
    assert "<!-- paper_figures/" in text
    assert stale_blocks(text, config.ROOT) == [], "run `python -m pushbench.readme` after `dvc repro`"


def test_blocks_are_replaced_and_a_stale_block_is_reported(tmp_path: Path) -> None:
    (tmp_path / "paper_figures" / "x").mkdir(parents=True)
    (tmp_path / "paper_figures" / "x" / "t.md").write_text("| a |\n|--:|\n| 2 |\n", encoding="utf-8")
    text = "intro\n<!-- paper_figures/x/t.md -->\n| a |\n|--:|\n| 1 |\n<!-- /paper_figures -->\noutro\n"
    assert stale_blocks(text, tmp_path) == ["paper_figures/x/t.md"]
    fresh = render(text, tmp_path)
    assert fresh == "intro\n<!-- paper_figures/x/t.md -->\n| a |\n|--:|\n| 2 |\n<!-- /paper_figures -->\noutro\n"
    assert stale_blocks(fresh, tmp_path) == []


def test_a_block_naming_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ReadmeError, match="paper_figures/none.md"):
        render("<!-- paper_figures/none.md -->\n<!-- /paper_figures -->", tmp_path)
