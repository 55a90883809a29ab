"""Tests for pushbench.tasks.reposcan.search: BM25 ranking, deterministic order, finite paginated lists, snippets."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest

from pushbench.tasks.reposcan.codeindex import load_units, tokenize
from pushbench.tasks.reposcan.search import MATCH_LINES, MAX_LINE, CodeSearch, search_for, snippet
from pushbench.tasks.reposcan.env import render_page

from handmade import write_tree


def reference_bm25_order(units, query: str, k1: float = 1.2, b: float = 0.75) -> list[str]:
    """Textbook BM25 (distinct query terms, idf = ln(1 + (N - df + .5) / (df + .5))), ties by id."""
    docs = [Counter(tokenize(u.text())) for u in units]
    n = len(docs)
    avgdl = sum(sum(d.values()) for d in docs) / n
    terms = {t for t in tokenize(query)}
    scored = []
    for unit, doc in zip(units, docs):
        dl = sum(doc.values())
        score = 0.0
        for term in terms:
            df = sum(1 for d in docs if term in d)
            tf = doc.get(term, 0)
            if tf:
                idf = math.log1p((n - df + 0.5) / (df + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
        if score > 0:
            scored.append((-round(score, 9), unit.uid))
    return [uid for _, uid in sorted(scored)]


def uids(search: CodeSearch, query: str) -> list[str]:
    return [search.units[i].uid for i in search.ranked(query)]


# --------------------------------------------------------------------------- ranking on the fixture repo


@pytest.mark.parametrize("query", ["test db", "test api", "return the", "fetch", "api get", "Client fetch base"])
def test_ranking_is_textbook_bm25(fixture_units, query: str) -> None:
    search = CodeSearch(fixture_units, max_results=50, page_size=10)
    assert uids(search, query) == reference_bm25_order(fixture_units, query)


def test_ranking_on_the_fixture_repo_puts_matching_tests_first(fixture_search) -> None:
    top = uids(fixture_search, "test db")[:10]
    assert "tests/conftest.py::db" in top
    assert set(top) <= {"tests/conftest.py::db"} | {u for u in top if u.startswith("tests/test_api.py::")}
    assert "pkg/api.py::multi" not in uids(fixture_search, "test db")


def test_order_does_not_depend_on_the_index_order(fixture_units) -> None:
    forward = CodeSearch(fixture_units)
    backward = CodeSearch(tuple(reversed(fixture_units)))
    for query in ["test db", "api", "return the", "fetch path"]:
        assert uids(forward, query) == uids(backward, query)


def test_ties_are_broken_by_identifier(tmp_path: Path) -> None:
    body = "def same(value):\n    return value + frobnicate(value)\n"
    write_tree(tmp_path, {"zeta/mod.py": body, "alpha/mod.py": body, "mid/mod.py": body,
                          "other.py": "def other():\n    return 1\n"})
    units = load_units(tmp_path)
    for ordering in (units, tuple(reversed(units))):
        assert uids(CodeSearch(ordering), "frobnicate") == ["alpha/mod.py::same", "mid/mod.py::same",
                                                            "zeta/mod.py::same"]


def test_unknown_or_empty_queries_return_nothing(fixture_search) -> None:
    for query in ["", "   ", "zzzqqq", "!!! ???"]:
        assert fixture_search.ranked(query) == ()
        page = fixture_search.page(query, 1)
        assert (page.total, page.pages, page.hits) == (0, 1, [])


def test_max_results_and_page_size_are_honoured(fixture_units) -> None:
    search = CodeSearch(fixture_units, max_results=5, page_size=2)
    pages = [search.page("test api", p) for p in (1, 2, 3, 4)]
    assert [len(p.hits) for p in pages] == [2, 2, 1, 0]
    assert all(p.pages == 3 and p.total == 5 for p in pages)
    assert [h.rank for p in pages for h in p.hits] == [1, 2, 3, 4, 5]
    full = CodeSearch(fixture_units, max_results=50, page_size=10)
    assert [h.uid for p in pages for h in p.hits] == uids(full, "test api")[:5]


# --------------------------------------------------------------------------- snippets


def test_snippet_shows_signature_docstring_and_matching_lines(fixture_search) -> None:
    units = {u.uid: u for u in fixture_search.units}
    for query in ["test db", "api get", "return the", "multi signature", "fetch"]:
        for number in (1, 2, 3):
            for hit in fixture_search.page(query, number).hits:
                unit = units[hit.uid]
                head = [(n, t[:MAX_LINE]) for n, t in unit.header]
                assert hit.snippet[:len(head)] == head
                rest = hit.snippet[len(head):]
                if unit.doc:
                    assert rest[0][0] == unit.doc_line
                    assert rest[0][1].strip() == f'"""{unit.doc}'
                    rest = rest[1:]
                body = [(n, t[:MAX_LINE]) for n, t in unit.body]
                assert set(rest) <= set(body)
                assert len(rest) <= max(MATCH_LINES, 2)
                assert [n for n, _ in rest] == sorted(n for n, _ in rest)


def test_snippet_of_multiline_signature_and_body_choice(fixture_search) -> None:
    units = {u.uid: u for u in fixture_search.units}
    multi = units["pkg/api.py::multi"]
    assert snippet(multi, {"multi"}, "multi") == [
        (42, "def multi("), (43, "    first,"), (44, "    second=None,"), (45, "    *rest,"),
        (46, "    key: int = 0,"), (47, ") -> tuple:"), (48, '    """Multi-line signature.'),
        (49, "    return first, second, rest, key")]
    multiline_test = units["tests/test_api.py::test_multiline"]
    lines = snippet(multiline_test, set(tokenize("fetch")), "fetch")
    assert lines == [(27, "def test_multiline("), (28, "    tmp,"), (29, "    db,"), (30, "):"),
                     (31, '    result = api.Client("b").fetch("p")')]  # only the matching body line
    # no body line matches: the first two body lines are shown
    assert snippet(multiline_test, {"zzz"}, "zzz")[-2:] == [(31, '    result = api.Client("b").fetch("p")'),
                                                            (32, "    assert result")]
    # a method: the doc line is indented one level under its def
    fetch = snippet(units["pkg/api.py::Client.fetch"], {"base"}, "base")
    assert fetch == [(19, "    def fetch(self, path):"), (20, '        """Fetch a path relative to the base.'),
                     (21, "        return get(self.base + path)")]


def test_snippet_keeps_at_most_three_best_lines_in_line_order(tmp_path: Path) -> None:
    source = "def many():\n" + "".join(f"    alpha({'' if i % 2 else 'beta, '}{i})\n" for i in range(8))
    write_tree(tmp_path, {"many.py": source})
    (unit,) = load_units(tmp_path)
    lines = snippet(unit, {"alpha", "beta"}, "alpha beta")
    assert lines[0] == (1, "def many():")
    assert lines[1:] == [(2, "    alpha(beta, 0)"), (4, "    alpha(beta, 2)"), (6, "    alpha(beta, 4)")]


def test_snippet_lines_are_cut(tmp_path: Path) -> None:
    long_name = "x" * 200
    write_tree(tmp_path, {"long.py": f"def f():\n    {long_name} = 1\n"})
    (unit,) = load_units(tmp_path)
    (sig, body) = snippet(unit, {"zzz"}, "zzz")
    assert sig == (1, "def f():")
    assert body == (2, f"    {long_name}"[:MAX_LINE]) and len(body[1]) == MAX_LINE


# --------------------------------------------------------------------------- the real snapshots


@pytest.fixture(scope="module")
def requests_search(snapshot_root: Path) -> CodeSearch:
    return search_for(snapshot_root / "requests", 50, 10)


def test_search_for_is_one_shared_index_per_layout(snapshot_root: Path, requests_search) -> None:
    assert search_for(snapshot_root / "requests", 50, 10) is requests_search
    other = search_for(snapshot_root / "requests", 50, 5)
    assert other is not requests_search and other.page_size == 5


def test_pages_of_ten_from_a_finite_list(requests_search) -> None:
    pages = [requests_search.page("test httpbin", p) for p in range(1, 7)]
    assert [len(p.hits) for p in pages] == [10, 10, 10, 10, 10, 0]
    assert all(p.pages == 5 and p.total == 50 for p in pages)
    ids = [h.uid for p in pages for h in p.hits]
    assert [h.rank for p in pages for h in p.hits] == list(range(1, 51))
    assert len(set(ids)) == 50
    assert ids == uids(requests_search, "test httpbin")
    assert render_page(pages[5]) == 'search "test httpbin": no results on page 6 (50 results in 5 pages).'
    assert requests_search.page("test httpbin", 1000).hits == []


def test_order_is_deterministic_across_fresh_indexes(snapshot_root: Path, requests_search) -> None:
    units = load_units(snapshot_root / "requests")
    fresh = CodeSearch(units, 50, 10)
    reversed_index = CodeSearch(tuple(reversed(units)), 50, 10)
    for query in ["test httpbin", "return the", "test requests", "session redirect"]:
        expected = uids(requests_search, query)
        assert uids(fresh, query) == expected
        assert uids(reversed_index, query) == expected
        assert [h.snippet for h in fresh.page(query, 2).hits] == [h.snippet for h in requests_search.page(query, 2).hits]


def test_valid_items_are_mixed_with_distractors(requests_search, hidden_valid) -> None:
    valid = hidden_valid("reposcan-requests-fixture-n010")
    hits = [h.uid for p in range(1, 6) for h in requests_search.page("test httpbin", p).hits]
    good = [u for u in hits if u in valid]
    bad = [u for u in hits if u not in valid]
    assert good and bad
    assert any(h.uid in valid for h in requests_search.page("test httpbin", 1).hits)


def test_two_queries_overlap_but_differ(requests_search) -> None:
    first = uids(requests_search, "test httpbin")
    second = uids(requests_search, "test httpbin redirect")
    assert set(first) & set(second)
    assert first != second and set(second) - set(first)


def test_real_snippets_start_with_the_signature(requests_search) -> None:
    for number in range(1, 6):
        for hit in requests_search.page("test httpbin", number).hits:
            unit = requests_search.unit(hit.uid)
            assert [t for _, t in hit.snippet[:len(unit.header)]] == [t[:MAX_LINE] for _, t in unit.header]
            assert any(f"def {unit.name}" in t for _, t in hit.snippet[:len(unit.header)])
            assert all(len(t) <= MAX_LINE for _, t in hit.snippet)


# --------------------------------------------------------------------------- the disk cache of the index


def test_the_index_is_loaded_from_disk_and_rebuilt_when_a_file_changes(tmp_path: Path, monkeypatch) -> None:
    from pushbench import config

    monkeypatch.setattr(config, "DATA", tmp_path / "data")
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "mod.py").write_text("def fetch_url(url):\n    return url\n\n\ndef parse_url(url):\n    pass\n")
    built = search_for(tree, 50, 10)
    cache = tmp_path / "data" / "tmp" / "reposcan-search"
    assert len(list(cache.glob("*.pickle"))) == 1
    search_for.cache_clear()
    loaded = search_for(tree, 50, 10)  # a new process would do the same: read, not parse
    assert loaded is not built and loaded.page("url", 1) == built.page("url", 1)
    assert [u.uid for u in loaded.units] == [u.uid for u in built.units] == ["pkg/mod.py::fetch_url", "pkg/mod.py::parse_url"]
    (tree / "pkg" / "mod.py").write_text("def fetch_url(url):\n    return url\n")
    load_units.cache_clear()
    search_for.cache_clear()
    assert [u.uid for u in search_for(tree, 50, 10).units] == ["pkg/mod.py::fetch_url"]  # a new key, rebuilt
    assert len(list(cache.glob("*.pickle"))) == 2
    (next(cache.glob("*.pickle"))).write_bytes(b"not a pickle")
    search_for.cache_clear()
    assert search_for(tree, 50, 10).units  # a damaged entry is rebuilt
