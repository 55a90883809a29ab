"""The result tables in README.md and docs/*.md are the committed paper_figures tables, not
hand-copied numbers; the README stays short and its links resolve."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pushbench import config
from pushbench.analysis.readme import ReadmeError, block_sources, main, render, stale_blocks, stale_files, synced_files

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)\s]*)?\)")


def test_every_synced_file_matches_paper_figures() -> None:
    files = synced_files(config.ROOT)
    assert config.ROOT / "README.md" in files
    assert config.ROOT / "docs" / "results.md" in files
    stale = {str(path.relative_to(config.ROOT)): names for path, names in stale_files(config.ROOT).items()}
    assert stale == {}, "run `python -m pushbench.analysis.readme` after `dvc repro`"


def test_results_page_holds_every_paper_figures_table_it_used_to() -> None:
    sources = block_sources((config.ROOT / "docs" / "results.md").read_text(encoding="utf-8"))
    assert sources, "docs/results.md has no paper_figures blocks"
    for name in ("01-reposcan-main/reposcan_main_table.md", "01-reposcan-main/reposcan_costs.md",
                 "02-reposcan-scaling/reposcan_paired_deltas.md", "03-reposcan-ablation/reposcan_ablation_deltas.md",
                 "04-dataops/dataops_success.md", "05-swe/swe_success.md", "05-swe/swe_paired_deltas.md",
                 "06-blackbox/table7_checklist_deltas.md"):
        assert f"paper_figures/{name}" in sources


def test_every_acg_result_table_lives_in_the_results_page_not_in_the_design_note() -> None:
    sources = block_sources((config.ROOT / "docs" / "results.md").read_text(encoding="utf-8"))
    for name in ("07-acg/acg_methods.md", "09-acg-eval/table1_success.md", "09-acg-eval/deltas_vs_full.md",
                 "10-acg-long/long_table1_success.md", "11-window-sweep/sensitivity.md"):
        assert f"paper_figures/{name}" in sources
    assert block_sources((config.ROOT / "docs" / "acg.md").read_text(encoding="utf-8")) == []


DECIMAL = re.compile(r"(?<![\w.§])\d+\.\d+(?![\d%×])")
BLOCK_SPAN = re.compile(r"<!-- paper_figures/[^>]+ -->\n.*?<!-- /paper_figures -->", re.S)


def numbers_not_in_tables(section: str) -> list[str]:
    """Decimals in the section's prose that none of its synced tables holds (the paper's own numbers,
    in *Paper:* paragraphs or as percentages, are the paper's, not ours)."""
    held = set(DECIMAL.findall("".join(BLOCK_SPAN.findall(section))))
    prose = [p for p in BLOCK_SPAN.sub("", section).split("\n\n") if not p.startswith(("*Paper:*", "#"))]
    return sorted({n for paragraph in prose for n in DECIMAL.findall(paragraph)} - held)


def test_the_acg_sections_quote_only_numbers_their_tables_hold() -> None:
    text = (config.ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    sections = [s for s in re.split(r"\n(?=## )", text) if "acg" in s.splitlines()[0]]
    assert len(sections) == 3  # 07-acg, 09-acg-eval, 10-acg-long with 11-window-sweep
    for part in (part for section in sections for part in re.split(r"\n(?=### )", section)):
        assert numbers_not_in_tables(part) == [], part.splitlines()[0]  # prose against its own tables


def test_a_number_no_table_holds_is_found() -> None:
    section = ("## x\n\n*Paper:* 0.5 and 12.4%.\n\nOurs: 0.250 against 0.201.\n\n"
               "<!-- paper_figures/x/t.md -->\n| a |\n| 0.250 |\n<!-- /paper_figures -->\n")
    assert numbers_not_in_tables(section) == ["0.201"]


def test_blocks_are_replaced_and_a_stale_block_is_reported(tmp_path: Path) -> None:
    (tmp_path / "paper_figures" / "x").mkdir(parents=True)
    (tmp_path / "paper_figures" / "x" / "t.md").write_text("| a |\n|--:|\n| 2 |\n", encoding="utf-8")
    text = "intro\n<!-- paper_figures/x/t.md -->\n| a |\n|--:|\n| 1 |\n<!-- /paper_figures -->\noutro\n"
    assert stale_blocks(text, tmp_path) == ["paper_figures/x/t.md"]
    fresh = render(text, tmp_path)
    assert fresh == "intro\n<!-- paper_figures/x/t.md -->\n| a |\n|--:|\n| 2 |\n<!-- /paper_figures -->\noutro\n"
    assert stale_blocks(fresh, tmp_path) == []


def test_a_stale_block_in_any_docs_page_fails_the_check_and_is_rewritten(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "paper_figures" / "x").mkdir(parents=True)
    (tmp_path / "paper_figures" / "x" / "t.md").write_text("| a |\n|--:|\n| 2 |\n", encoding="utf-8")
    (tmp_path / "docs").mkdir()
    fresh_block = "<!-- paper_figures/x/t.md -->\n| a |\n|--:|\n| 2 |\n<!-- /paper_figures -->\n"
    stale_block = "<!-- paper_figures/x/t.md -->\n| a |\n|--:|\n| 1 |\n<!-- /paper_figures -->\n"
    (tmp_path / "README.md").write_text("# x\n" + fresh_block, encoding="utf-8")
    (tmp_path / "docs" / "a.md").write_text("# a\nno tables\n", encoding="utf-8")
    (tmp_path / "docs" / "b.md").write_text("# b\n" + stale_block + "after\n", encoding="utf-8")
    assert [p.name for p in synced_files(tmp_path)] == ["README.md", "a.md", "b.md"]
    assert main(["--check"], tmp_path) == 1
    assert "docs/b.md: block is stale: paper_figures/x/t.md" in capsys.readouterr().err
    assert main([], tmp_path) == 0
    assert (tmp_path / "docs" / "b.md").read_text(encoding="utf-8") == "# b\n" + fresh_block + "after\n"
    assert (tmp_path / "docs" / "a.md").read_text(encoding="utf-8") == "# a\nno tables\n"
    assert main(["--check"], tmp_path) == 0


def test_a_block_naming_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ReadmeError, match="paper_figures/none.md"):
        render("<!-- paper_figures/none.md -->\n<!-- /paper_figures -->", tmp_path)
    (tmp_path / "README.md").write_text("<!-- paper_figures/none.md -->\n<!-- /paper_figures -->\n", encoding="utf-8")
    assert main(["--check"], tmp_path) == 2


def test_readme_is_short_and_states_the_simlm_caveat() -> None:
    text = (config.ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert "SimLM" in text and "not from a real model" in text
    assert "make repro" in text and "make test" in text


def test_relative_links_in_the_docs_resolve() -> None:
    pages = [*synced_files(config.ROOT), *sorted((config.ROOT / "src" / "pushbench" / "tasks").glob("*/README.md"))]
    broken = []
    for page in pages:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(config.ROOT)} -> {target}")
    assert broken == []
