"""The ``langgraph-store`` context builder and the offline embeddings behind it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from langgraph.store.memory import InMemoryStore

from pushbench.backends.native import run_native
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.memory.base import Event
from pushbench.memory.langgraph_store import HEADER, RECENT_FRACTION, LangGraphStoreMemory
from pushbench.memory.retrieval import HashingEmbedder, VectorIndex
from pushbench.policies.base import tool_call_message
from pushbench.policies.sim import SimLM
from pushbench.tokens import count_message_tokens

from agentkit import make_env

SYSTEM = "You are an agent."
TASK = "Find 10 test functions that take the httpbin fixture."
TOPICS = ["session cookies expire", "json encoding of unicode", "httpbin redirect history",
          "template rendering context", "url routing converters", "cli command groups"]


def fill(mem: LangGraphStoreMemory, texts: list[str]) -> None:
    for step, text in enumerate(texts, 1):
        mem.ingest(Event(step, "action", tool_call_message("search", {"query": f"q{step}"}, f"c{step}")))
        mem.ingest(Event(step, "observation", {"role": "tool", "tool_call_id": f"c{step}", "content": text},
                         {"tool": "search"}))


def builder(**kwargs: Any) -> LangGraphStoreMemory:
    mem = LangGraphStoreMemory(**kwargs)
    mem.start(SYSTEM, TASK)
    return mem


# --------------------------------------------------------------------------- embeddings


def test_hashing_embeddings_are_deterministic_normalised_and_meaningful() -> None:
    emb = HashingEmbedder(256)
    a, b = emb.embed("session cookies expire"), HashingEmbedder(256).embed("session cookies expire")
    assert a.shape == (256,) and a.dtype == np.float32 and np.array_equal(a, b)
    assert abs(float(np.linalg.norm(a)) - 1.0) < 1e-6
    near, far = emb.embed("the cookies of a session"), emb.embed("unicode json encoding")
    assert float(a @ near) > float(a @ far)
    assert not emb.embed("").any() and not emb.embed("!!! ???").any()
    with pytest.raises(ValueError):
        HashingEmbedder(4)


def test_hashing_slots_are_scikit_learns_murmurhash() -> None:
    """mmh3 gives the slots scikit-learn's MurmurHash3 (the hash HashingVectorizer uses) gives, any text."""
    from sklearn.utils import murmurhash3_32

    words = ["session", "cookies", "naïve", "日本語", "straße", "x" * 300, "a1_b2", "ｆｕｌｌ"] + TOPICS
    emb = HashingEmbedder(1024)
    assert [emb._slot(w) for w in words] == [murmurhash3_32(w, seed=0, positive=True) % 1024 for w in words]


def test_vector_index_ranks_pages_and_weights_rare_words() -> None:
    index = VectorIndex()
    for topic in TOPICS:
        index.add(f"test notes: {topic}")
    hits, total = index.search("redirect history", limit=2)
    assert total == 1 and hits[0].index == 2
    hits, total = index.search("test notes cookies", limit=2)
    assert hits[0].index == 0 and total == len(TOPICS)  # the rare word decides the top hit
    page2, _ = index.search("test notes", limit=4, offset=4)
    assert len(page2) == 2
    assert index.search("zebra") == ([], 0) and VectorIndex().search("x") == ([], 0)
    with pytest.raises(ValueError):
        index.search("x", limit=0)


# --------------------------------------------------------------------------- the store


def test_every_event_goes_into_the_langgraph_store_under_the_episode_namespace() -> None:
    mem = builder(namespace=("episodes", "ep-1"))
    assert isinstance(mem.store, InMemoryStore)
    fill(mem, TOPICS)
    items = mem.store.search(("episodes", "ep-1"), limit=100)
    assert len(items) == 2 * len(TOPICS)
    first = mem.store.get(("episodes", "ep-1"), "000001")
    assert first.value["text"] == TOPICS[0] and first.value["kind"] == "observation"
    assert first.value["step"] == 1 and first.value["tool"] == "search" and first.value["role"] == "tool"
    # the store's own semantic search uses the offline embedding function
    found = mem.store.search(("episodes", "ep-1"), query="unicode json", limit=1)
    assert found[0].value["text"] == TOPICS[1] and found[0].score > 0


def test_retrieval_uses_the_task_and_the_current_event_and_skips_the_recent_window() -> None:
    mem = builder(top_k=1)
    fill(mem, TOPICS + ["filler text " * 5] * 3 + ["cookies of the session again"])
    mem.first = len(mem.messages) - 2  # pretend only the last turn is recent
    found = mem.search(mem.first)
    assert found[0] == 5  # task query ("httpbin fixture") -> the httpbin item (message 5)
    assert found[1] == 1  # current event ("cookies of the session") -> the older cookies item
    assert all(i < mem.first for i in found)


def test_render_shows_retrieved_items_after_the_task_and_the_recent_messages() -> None:
    mem = builder()
    fill(mem, [f"{TOPICS[i % len(TOPICS)]} " + "word " * 150 for i in range(40)])
    budget = 8_000
    view = mem.render(budget)
    assert view[0] == {"role": "system", "content": SYSTEM} and view[1]["content"] == TASK
    assert view[2]["role"] == "user" and view[2]["content"].startswith(HEADER)
    assert view[2]["content"].count("(memory from step ") == len(mem.retrieved) > 0
    recent = view[3:]
    assert recent == mem.messages[mem.first:] and recent[0]["role"] == "assistant"
    assert count_message_tokens(recent) <= RECENT_FRACTION * budget
    assert all(i < mem.first for i in mem.retrieved)


def test_the_vectorised_ranking_equals_the_stores_own_search() -> None:
    fast, slow = builder(), builder(use_store_search=True)
    texts = [f"{TOPICS[i % len(TOPICS)]} variant {i % 4}" for i in range(30)] + ["redirect history and cookies"]
    fill(fast, texts)
    fill(slow, texts)
    for before in (1, 10, 40, len(fast.messages)):
        assert fast.search(before) == slow.search(before)
    assert len(fast.search(len(fast.messages))) > 3


def test_a_short_history_has_no_memory_message() -> None:
    mem = builder()
    fill(mem, ["one", "two"])
    view = mem.render(100_000)
    assert [m["role"] for m in view] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    with pytest.raises(ValueError):
        LangGraphStoreMemory(top_k=0)


# --------------------------------------------------------------------------- whole episodes


@pytest.mark.parametrize("profile", ["sim/mini", "sim/pro"])
def test_a_whole_langgraph_store_episode(profile: str) -> None:
    def episode() -> tuple[Any, Any, Any]:
        env = make_env("reposcan-requests-documented-n100")
        mem = make_memory("langgraph-store")
        run = run_native(env, SimLM(profile), make_controller("standard"), mem, 11)
        return env, run, mem

    env, run, mem = episode()
    assert env.done and env.steps <= env.task.budget
    assert mem.first == 0 or mem.retrieved  # once messages left the recent window, items are retrieved
    assert len(mem.store.search(mem.namespace, limit=10_000)) == len(run.transcript)
    assert run.llm_calls == len([m for m in run.transcript if m.get("role") == "assistant"])
    env2, run2, _ = episode()
    assert run2.transcript == run.transcript and env2.verifier.events == env.verifier.events


@pytest.mark.parametrize("memory_name", ["memgpt", "langgraph-store"])
def test_memories_give_the_same_episode_on_the_langgraph_backend(memory_name: str) -> None:
    from pushbench.backends.langgraph import run_langgraph

    outcomes = []
    for backend in (run_native, run_langgraph):
        env = make_env("reposcan-requests-documented-n025")
        run = backend(env, SimLM("sim/base"), make_controller("standard"), make_memory(memory_name), 3)
        outcomes.append((env.verifier.events, run.transcript, run.llm_calls))
    assert outcomes[0] == outcomes[1]
