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
