"""Every question: unique answer (re-proved here by brute force with the reader's rules), weak single
clues, distinct evidence documents that show their clue, and no question naming its answer."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import pytest

from pushbench import config
from pushbench.tasks.base import task_split
from pushbench.tasks.corpus.reader import (CHANGELOG_TITLE, CLUE_LINE, DOCS_TITLE, MODULE_TITLE, RELEASE_KINDS, Clue,
                                           base_title, named, parse_clue, release_of, short_name, supports)


class BruteForce:
    """Which entities a clue fits, by applying ``reader.supports`` to every document that could show
    it (the prefilters are necessary conditions of ``supports``, only there for speed)."""

    def __init__(self, docs: list[Any]):
        self.docstrings = [(d, d.text.lower()) for d in docs if d.kind == "docstring"]
        self.items = [(d, d.text.lower(), release_of(d.title)) for d in docs if d.kind == "changelog" and release_of(d.title)]
        self.modules = [d for d in docs if d.kind == "module"]
        self.entity_module = {d.meta["name"]: d.meta["module"] for d in docs if d.kind == "docstring"}
        self.by_short: dict[str, set[str]] = defaultdict(set)  # of every project: clues name none
        for d in docs:
            if d.kind == "docstring":
                self.by_short[short_name(d.meta["name"])].add(d.meta["name"])
        self.titled: dict[tuple[str, str, str], list[tuple[Any, set[str]]]] = defaultdict(list)
        for d in docs:
            title = base_title(d.title)
            if d.kind == "changelog" and (m := CHANGELOG_TITLE.match(title)):
                self.titled[("changelog", m.group(1), m.group(3))].append((d, named(d.text)))
            elif d.kind == "docs" and (m := DOCS_TITLE.match(title)):
                self.titled[("page", m.group(1), m.group(2))].append((d, named(d.text)))

    def fits(self, clue: Clue) -> set[str]:
        out: set[str] = set()
        if clue.kind in ("terms", "param"):
            for d, low in self.docstrings:
                if clue.a in low and clue.b in low and supports(clue, d.title, d.text, d.meta["name"]):
                    out.add(d.meta["name"])
        elif clue.kind in RELEASE_KINDS:
            for d, low, release in self.items:
                if clue.a.lower() in low and clue.b in low and supports(clue, d.title, d.text, release):
                    out.add(release)
        elif clue.kind == "module":
            for d in self.modules:
                name = MODULE_TITLE.match(base_title(d.title)).group(1)
                if supports(clue, d.title, d.text, name):
                    out |= {n for n, mod in self.entity_module.items() if mod == name}
        else:
            for d, idents in self.titled[(clue.kind, clue.a, clue.b)]:
                for ident in idents:
                    out |= {n for n in self.by_short.get(ident, ()) if supports(clue, d.title, d.text, n)}
        return out


def clues_of(objective: str) -> list[tuple[str, Clue]]:
    found = [(m.group(1), parse_clue(m.group(2))) for line in objective.splitlines() if (m := CLUE_LINE.match(line))]
    assert all(c is not None for _, c in found)
    return found  # type: ignore[return-value]


def short(tasks: list) -> list:
    """The short questions (the long split's have their own tests: test_corpus_long.py)."""
    return [t for t in tasks if task_split(t) == "short"]


def test_there_are_at_least_300_questions_with_2_to_4_clues(corpus_tasks: list) -> None:
    corpus_tasks = short(corpus_tasks)
    assert len(corpus_tasks) >= 300
    counts = {t.settings["n_clues"] for t in corpus_tasks}
    assert counts == {2, 3, 4}
    for t in corpus_tasks:
        clues = clues_of(t.objective)
        assert [cid for cid, _ in clues] == [f"clue:{k}" for k in range(1, len(clues) + 1)]
        assert t.settings["clue_kinds"] == [c.kind for _, c in clues] and t.budget == 100
        assert (t.settings["entity"] == "release") == all(c.kind in RELEASE_KINDS for _, c in clues)
    assert {t.settings["entity"] for t in corpus_tasks} == {"api", "release"}


def test_every_answer_is_unique_and_every_single_clue_is_weak(corpus_docs: list, corpus_tasks: list,
                                                              corpus_hidden: dict) -> None:
    brute = BruteForce(corpus_docs)
    corpus_tasks = short(corpus_tasks)
    cache: dict[Clue, set[str]] = {}
    low = config.params("corpus.min_clue_matches")
    for t in corpus_tasks:
        answer = corpus_hidden[t.task_id]["answer"]
        sets = [cache.setdefault(c, brute.fits(c)) for _, c in clues_of(t.objective)]
        assert set.intersection(*sets) == {answer}, t.task_id
        assert all(len(s) >= low for s in sets), t.task_id
        assert [len(s) for s in sets] == list(corpus_hidden[t.task_id]["clue_fits"].values()), t.task_id


def test_evidence_documents_are_distinct_and_show_their_clue(corpus_docs: list, corpus_tasks: list,
                                                            corpus_hidden: dict) -> None:
    by_id = {d.id: d for d in corpus_docs}
    for t in short(corpus_tasks):
        hidden = corpus_hidden[t.task_id]
        evidence = hidden["evidence"]
        assert len(set(evidence.values())) == len(evidence) == t.settings["n_clues"]
        for cid, clue in clues_of(t.objective):
            doc = by_id[evidence[cid]]
            target = hidden["answer"].rsplit(".", 1)[0] if clue.kind == "module" else hidden["answer"]
            if clue.kind == "module":
                target = MODULE_TITLE.match(base_title(doc.title)).group(1)
                assert hidden["answer"].startswith(target + ".")
            assert supports(clue, doc.title, doc.text, target), (t.task_id, cid)
        for negative in hidden["hard_negatives"]:
            assert negative["entity"] != hidden["answer"] and negative["misses"] in evidence


def test_no_question_names_its_answer(corpus_tasks: list, corpus_hidden: dict) -> None:
    for t in corpus_tasks:
        answer = corpus_hidden[t.task_id]["answer"]
        text = t.objective.lower()
        assert answer.lower() not in text
        short = answer.split(" ", 1)[1] if t.settings["entity"] == "release" else short_name(answer)
        assert not re.search(rf"(?<![\w.]){re.escape(short.lower())}(?!\w)", text), t.task_id


def test_manifest_holds_no_answer_or_evidence(corpus_tasks: list, corpus_hidden: dict) -> None:
    manifest = (config.MANIFESTS / "corpus.jsonl").read_text()
    assert '"evidence"' not in manifest and "hard_negatives" not in manifest
    sample = list(corpus_hidden.values())[:50]
    assert not any(h["evidence"]["clue:1"] in manifest for h in sample)


@pytest.mark.parametrize("text", ['a docstring document of it uses the words "alpha" and "beta"',
                                  'its signature has a parameter named "timeout"',
                                  'it is defined in the module whose docstring begins "Some module."',
                                  "a flask changelog item of a release from 2019 names it in code",
                                  'the pytest documentation page titled "How to use fixtures" names it in code',
                                  'one of its changelog items uses the words "proxy" and "header"',
                                  'one of its changelog items names "send_file" in code'])
def test_clue_texts_parse_back(text: str) -> None:
    clue = parse_clue(text)
    assert clue is not None and clue.text() == text


def test_generation_is_deterministic_on_a_small_corpus() -> None:
    from pushbench.tasks.corpus.build import build_corpus
    from pushbench.tasks.corpus.index import CorpusIndex
    from pushbench.tasks.corpus.questions import generate

    params = {**config.params("corpus"), "projects": ["requests"], "questions": 30, "release_questions": 15}
    docs = build_corpus(params)
    index = CorpusIndex(docs)

    def made(seed: int) -> list[tuple]:
        return [(q.entity.name, tuple(o.clue.text() for o in q.clues), tuple(o.evidence for o in q.clues))
                for q in generate(docs, index, params, seed)]

    first = made(5)
    assert first == made(5) and first != made(6)
    assert len(first) >= 20 and any(" " in name for name, _, _ in first)  # API and release answers
