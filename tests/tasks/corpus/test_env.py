"""The corpus tools on a real question: every error path is an ERROR observation and an invalid
action; requirements are the clues; the index holds corpus text only."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pushbench.scoring import score_events
from pushbench.tools.base import ToolCall


@pytest.fixture
def env(corpus_family: Any, corpus_tasks: list) -> Any:
    task = next(t for t in corpus_tasks if t.settings["n_clues"] == 3)
    return corpus_family.environment(task)


def call(env: Any, name: str, **args: Any) -> Any:
    return env.execute(ToolCall(name, json.dumps(args)))


@pytest.mark.parametrize("name,args,words", [
    ("search", {}, "invalid arguments"),
    ("search", {"query": ""}, "invalid arguments"),
    ("search", {"query": "   "}, "non-empty"),
    ("search", {"query": "a\x00b"}, "control characters"),
    ("search", {"query": "x", "page": 2}, "invalid arguments"),
    ("search", {"query": "fixture", "requirement": "clue:9"}, "unknown requirement"),
    ("get_document", {"doc_id": "d0000000000"}, "no document has the id"),
    ("get_document", {"doc_id": "FIRST", "page": 99}, "out of range"),
    ("get_document", {"doc_id": "FIRST", "page": 0}, "invalid arguments"),
    ("answer", {"text": "x"}, "invalid arguments"),
    ("answer", {"text": "x", "confidence": 1.5}, "invalid arguments"),
    ("answer", {"text": "``", "confidence": 0.5}, "non-empty"),
    ("nope", {}, "unknown tool"),
])
def test_bad_calls_are_error_observations(env: Any, name: str, args: dict, words: str) -> None:
    if args.get("doc_id") == "FIRST":
        args = {**args, "doc_id": env.index.docs[0].id}
    obs = call(env, name, **args)
    assert obs.text.startswith("ERROR:") and words in obs.text and not obs.ok and not env.done
    assert env.verifier.events[-1]["ok"] is False


def test_arguments_that_are_not_json(env: Any) -> None:
    obs = env.execute(ToolCall("search", "{not json"))
    assert obs.text.startswith("ERROR: arguments are not valid JSON")


def test_search_get_document_and_answer(env: Any, corpus_hidden: dict) -> None:
    hidden = corpus_hidden[env.task.task_id]
    obs = call(env, "search", query=env.task.settings["clues"][0], requirement="clue:1")
    assert obs.ok and obs.text.splitlines()[0].startswith('search "') and obs.text.count("\n[") == 5
    evidence = hidden["evidence"]["clue:2"]
    page = call(env, "get_document", doc_id=evidence)
    assert page.text.startswith(f"document {evidence} | ") and "page 1 of" in page.text
    assert env.verifier.events[-1]["info"]["evidence"] is True
    empty = call(env, "search", query="zzzzqqq")
    assert "no documents match" in empty.text and empty.ok
    done = call(env, "answer", text=hidden["answer"].upper(), confidence=0.8)
    assert done.done and "correct" not in done.text and "wrong" not in done.text  # no verdict shown
    after = call(env, "search", query="x")
    assert after.text.startswith("ERROR: the episode has ended")
    metrics = score_events(env.verifier.events, env.task)
    assert metrics["success"] and metrics["search_calls"] == 2 and metrics["documents_opened"] == 1
    assert metrics["evidence_recall"] == round(1 / 3, 6) and metrics["calibration_error"] == 0.2


def test_a_wrong_answer_fails_and_the_budget_ends_the_episode(corpus_family: Any, corpus_tasks: list) -> None:
    env = corpus_family.environment(corpus_tasks[0])
    obs = call(env, "answer", text="flask.app.Flask", confidence=1.0)
    metrics = score_events(env.verifier.events, env.task)
    assert obs.done and not metrics["success"] and metrics["false_completion"] and metrics["calibration_error"] == 1.0
    env = corpus_family.environment(corpus_tasks[0])
    for _ in range(env.task.budget):
        obs = call(env, "search", query="fixture")
    assert env.done and env.termination == "budget" and "budget" in obs.text
    metrics = score_events(env.verifier.events, env.task)
    assert not metrics["answered"] and metrics["confidence"] is None and metrics["search_calls"] == 100


def test_requirements_are_the_clues_and_answer_serves_all(env: Any) -> None:
    reqs = env.requirements()
    assert [r.id for r in reqs] == ["clue:1", "clue:2", "clue:3"] and {r.kind for r in reqs} == {"clue"}
    assert [r.text for r in reqs] == env.task.settings["clues"]
    assert env.action_origins("search", {"query": "x", "requirement": "clue:2"}) == ("clue:2",)
    assert env.action_origins("get_document", {"doc_id": "d1", "requirement": "3"}) == ("clue:3",)
    assert env.action_origins("search", {"query": "x"}) == ()
    assert env.action_origins("search", {"query": "x", "requirement": "clue:7"}) == ()
    assert env.action_origins("answer", {"text": "x", "confidence": 1}) == ("clue:1", "clue:2", "clue:3")
    assert env.action_origins("submit", {"ids": []}) == ()
    schema = {s["function"]["name"]: s["function"]["parameters"] for s in env.schemas()}
    assert all("requirement" in p["properties"] and "requirement" not in p["required"] for p in schema.values())


def test_index_holds_corpus_text_only(env: Any, corpus_docs: list) -> None:
    from pushbench.tasks.corpus.index import tokens

    assert [d.id for d in env.index.docs] == [d.id for d in corpus_docs]
    vocab = {t for d in corpus_docs for t in tokens(f"{d.title}\n{d.text}")}
    assert env.index.vocab - {""} == vocab  # every indexed term comes from a document's title or text
