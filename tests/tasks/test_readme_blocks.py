"""Family READMEs' build-figure blocks: rendered, found stale, and an unknown block is an error."""

from __future__ import annotations

import pytest

from pushbench.tasks.readme_blocks import UnknownBlock, figure_families, render, stale_blocks


def fake(name: str, arg: str | None) -> str:
    if name != "count":
        raise UnknownBlock(f"unknown block {name!r}")
    return f"| tasks |\n| {7 if arg is None else len(arg)} |\n"


def test_blocks_are_filled_and_a_stale_one_is_named() -> None:
    text = "a\n<!-- build:count -->\n| tasks |\n| 6 |\n<!-- /build -->\nb\n<!-- build:count xyz -->\n<!-- /build -->\n"
    assert stale_blocks(text, fake) == ["count", "count xyz"]
    fresh = render(text, fake)
    assert fresh == ("a\n<!-- build:count -->\n| tasks |\n| 7 |\n<!-- /build -->\n"
                     "b\n<!-- build:count xyz -->\n| tasks |\n| 3 |\n<!-- /build -->\n")
    assert stale_blocks(fresh, fake) == []


def test_an_unknown_block_raises() -> None:
    with pytest.raises(UnknownBlock):
        render("<!-- build:other -->\n<!-- /build -->\n", fake)


def test_the_corpus_family_has_build_figures() -> None:
    assert "corpus" in figure_families()


@pytest.mark.parametrize("family", ["dataops", "rows", "swe", "sweissues"])
def test_the_family_readme_blocks_are_the_builds(family: str) -> None:
    """These families' manifests are built by `make test` before the suite (corpus, reposcan and
    planning check theirs against a build of their own, in their folders)."""
    from pushbench import config
    from pushbench.tasks import load_tasks, manifest_path
    from pushbench.tasks.readme_blocks import BLOCK, renderer

    if not manifest_path(family).is_file():
        pytest.skip(f"no {family} manifest; run `python -m pushbench.tasks.manifests {family}`")
    text = (config.ROOT / "src" / "pushbench" / "tasks" / family / "README.md").read_text(encoding="utf-8")
    blocks = [m.group(4) for m in BLOCK.finditer(text)]
    assert blocks and stale_blocks(text, renderer(family)) == [], "run `python -m pushbench.tasks.readme_blocks`"
    short = [t for t in load_tasks(family) if t.settings.get("split", "short") == "short"]
    totals = [line for b in blocks for line in b.splitlines() if line.startswith("| **all** |")]
    assert any(f"| **{len(short)}** |" in line for line in totals)


def test_every_family_with_build_figures_has_blocks() -> None:
    from pushbench import config
    from pushbench.tasks.readme_blocks import BLOCK

    families = figure_families()
    assert families == ["corpus", "dataops", "planning", "reposcan", "rows", "swe", "sweissues"]
    for family in families:
        text = (config.ROOT / "src" / "pushbench" / "tasks" / family / "README.md").read_text(encoding="utf-8")
        assert BLOCK.search(text), family
