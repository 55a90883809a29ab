"""The corpus builder: real snapshots in, byte-identical documents with stable ids out."""

from __future__ import annotations

from pathlib import Path

from pushbench import config
from pushbench.tasks.corpus.build import build_corpus, chunk, doc_id, write_corpus
from pushbench.tasks.corpus.sources import _items, split_headings
from pushbench.tokens import count_tokens


def requests_params() -> dict:
    return {**config.params("corpus"), "projects": ["requests"]}


def test_real_builder_is_byte_identical_on_rebuild(tmp_path: Path) -> None:
    first = write_corpus(build_corpus(requests_params()), tmp_path / "a").read_bytes()
    second = write_corpus(build_corpus(requests_params()), tmp_path / "b").read_bytes()
    assert first == second and len(first) > 100_000
    assert b'"source": "/' not in first and str(config.ROOT).encode() not in first  # no absolute paths


def test_documents_are_chunks_of_at_most_max_tokens_with_unique_stable_ids() -> None:
    docs = build_corpus(requests_params())
    limit = config.params("corpus.max_tokens")
    assert len({d.id for d in docs}) == len(docs)
    assert all(count_tokens(d.text) <= limit for d in docs)
    assert {d.kind for d in docs} >= {"docstring", "module", "changelog", "readme", "config"}
    assert all(d.id.startswith("d") and len(d.id) == 11 for d in docs)


def test_changelog_is_split_per_release_and_item() -> None:
    docs = [d for d in build_corpus(requests_params()) if d.kind == "changelog"]
    release = [d for d in docs if d.meta["version"] == "2.32.3"]
    assert [d.meta["item"] for d in release] == ["1", "2"]
    assert release[0].title == "requests 2.32.3 changelog (released 2024-05-29), item 1"
    assert release[0].id == doc_id("requests", "HISTORY.md", "2.32.3#001", 1)  # from its place, not its text
    assert release[0].text.startswith("Fixed bug breaking the ability to specify custom SSLContexts")


def test_docstring_parts_each_show_the_signature_and_module() -> None:
    docs = [d for d in build_corpus(requests_params()) if d.kind == "docstring"]
    assert any(d.parts > 1 for d in docs)
    for d in docs:
        head = d.text.split("\n")
        assert head[0].startswith(("def ", "class ")) and head[1] == f"module: {d.meta['module']}"


def test_full_corpus_has_at_least_5000_documents(corpus_docs: list) -> None:
    assert len(corpus_docs) >= 5000
    assert {d.project for d in corpus_docs} == {"requests", "flask", "pytest"}


def test_headings_items_and_chunks() -> None:
    text = "Title\n=====\n\nintro\n\nPart\n----\n\nbody one\n\n## Md heading\nmd body"
    assert split_headings(text) == [("Title", "intro"), ("Part", "body one"), ("Md heading", "md body")]
    assert _items(["- first item", "  continues here", "", "- second", "**Bugfixes**", "- third"]) == \
        ["first item continues here", "second", "third"]
    long = "\n\n".join(f"paragraph {i} " + "word " * 60 for i in range(10))
    parts = chunk(long, 100)
    assert len(parts) > 5 and all(count_tokens(p) <= 100 for p in parts)
    assert "".join(parts).replace("\n", "") == long.replace("\n", "")


def test_adding_a_snapshot_grows_the_corpus_and_keeps_every_earlier_document() -> None:
    alone = build_corpus(requests_params())
    grown = build_corpus({**requests_params(), "projects": ["requests", "flask"]})
    assert len(grown) > len(alone)
    assert [d.row() for d in grown[: len(alone)]] == [d.row() for d in alone]  # same ids, same bytes
    assert {d.project for d in grown[len(alone):]} == {"flask"}
