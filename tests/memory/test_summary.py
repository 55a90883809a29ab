"""The rolling-summary memory: when it condenses, what replaces the older turns, how the summary
call is counted, what SimLM's summary keeps, and that the verdicts stay the only hidden information."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from agentkit import actions, index_for, make_env, task, valid_ids
from pushbench import guidance
from pushbench.backends.langgraph import run_langgraph
from pushbench.backends.native import run_native
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.memory.base import Event
from pushbench.memory.summary import SummaryMemory, SummarySettings
from pushbench.policies.sim import SimLM, get_profile
from pushbench.policies.sim.attention import recalled_mask
from pushbench.policies.sim.summary import SALT, quoted_summary
from pushbench.tasks import get_family, load_tasks
from pushbench.tasks.reposcan.env import RepoScanEnv
from pushbench.tokens import count_message_tokens
from pushbench.verifier import Verifier

SMALL = SummarySettings(trigger_tokens=3_000, keep_fraction=0.5, summary_tokens=800)


def turn(i: int, words: int = 60) -> list[Event]:
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", "type": "function", "function": {
        "name": "search", "arguments": f'{{"query": "q{i}"}}'}}]}
    result = {"role": "tool", "tool_call_id": f"c{i}", "content": f"result {i}: " + " ".join(["word"] * words)}
    return [Event(i, "action", call), Event(i, "observation", result, {"tool": "search"})]


class Recorder:
    """A side LLM that records each request and answers with a fixed summary."""

    def __init__(self) -> None:
        self.requests: list[list[dict[str, Any]]] = []

    def __call__(self, messages, tools, purpose):
        self.requests.append(messages)
        return {"role": "assistant", "content": f"summary {len(self.requests)}", "name": f"memory-{purpose}"}


def fed(memory: SummaryMemory, turns: int, llm: Recorder | None = None, budget: int = 100_000) -> list[list[dict]]:
    memory.start("system", "the task")
    if llm is not None:
        memory.bind(llm)
    views = []
    for i in range(turns):
        views.append(list(memory.render(budget)))
        for event in turn(i):
            memory.ingest(event)
    views.append(list(memory.render(budget)))
    return views


def test_it_condenses_only_once_the_threshold_is_passed() -> None:
    llm = Recorder()
    memory = SummaryMemory(SMALL)
    memory.start("system", "the task")
    memory.bind(llm)
    totals = []
    while not llm.requests:
        for event in turn(len(totals)):
            memory.ingest(event)
        totals.append(memory.total)
        memory.render(100_000)
    assert totals[-1] > SMALL.trigger_tokens >= totals[-2]  # the first render past the threshold, not before
    assert len(llm.requests) == 1 and memory.log[0]["condensed"] + memory.log[0]["kept"] == 2 * len(totals)
    assert memory.total <= SMALL.keep_fraction * SMALL.trigger_tokens


def test_the_summary_replaces_the_older_turns_and_the_kept_part_starts_at_a_call() -> None:
    llm = Recorder()
    memory = SummaryMemory(SMALL)
    views = fed(memory, 80, llm)
    last = views[-1]
    assert last[0] == {"role": "system", "content": "system"} and last[1]["content"] == "the task"
    assert guidance.CONDENSED.match(last[2]["content"].splitlines()[0])
    assert last[2]["content"].endswith(f"summary {len(llm.requests)}")
    assert last[3]["role"] == "assistant"  # a tool result stays with its call
    condensed = sum(entry["condensed"] for entry in memory.log)
    assert len(last) - 3 == 160 - condensed and last[3]["tool_calls"][0]["id"] == f"c{condensed // 2}"
    assert memory.total <= SMALL.trigger_tokens
    # each request holds the previous summary and the condensed turns, and asks for the size
    second = llm.requests[1]
    assert second[0]["content"] == guidance.SUMMARY_SYSTEM and second[2]["content"].endswith("summary 1")
    assert guidance.SUMMARY_LIMIT.match(second[-1]["content"]).group(1) == str(SMALL.summary_tokens)


def test_without_a_model_the_summary_is_a_placeholder_and_settings_are_checked() -> None:
    views = fed(SummaryMemory(SMALL), 80)
    assert "without a model" in views[-1][2]["content"]
    with pytest.raises(ValueError, match="keep_fraction"):
        SummaryMemory(SummarySettings(keep_fraction=1.0))
    assert make_memory("summary").settings == SummarySettings.from_params()


def test_a_small_window_condenses_earlier_and_the_view_fits() -> None:
    memory = SummaryMemory(SMALL)
    views = fed(memory, 80, Recorder(), budget=2_000)
    assert all(count_message_tokens(v) <= 2_000 + 50 for v in views)
    assert memory.log


def request(history: list[dict[str, Any]], limit: int = 10_000) -> list[dict[str, Any]]:
    return [{"role": "system", "content": guidance.SUMMARY_SYSTEM}, {"role": "user", "content": "the task"},
            *history, {"role": "user", "content": guidance.condense_request(limit)}]


def history(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        out += [{"role": "assistant", "content": f'called inspect {{"unit": "U{i:02d}"}}'},
                {"role": "user", "content": f"Tool result:\nsubmit U{i:02d}: accepted (checker passed).\n"
                                            + " ".join(["filler"] * 120)}]
    return out


def test_simlm_summary_quotes_exactly_what_it_recalls() -> None:
    messages = request(history(60))
    perfect = quoted_summary(get_profile("sim/perfect"), 1, messages).message["content"]
    assert all(f"| submit U{i:02d}: accepted (checker passed)." in perfect for i in range(60))
    mini = get_profile("sim/mini")
    text = quoted_summary(mini, 1, messages).message["content"]
    kept = {i for i in range(60) if f"| submit U{i:02d}: accepted" in text}
    assert 0 < len(kept) < 60  # a lossy summary: what SimLM failed to recall is gone
    # the kept results are the recalled ones (attention over the pieces' offsets)
    offsets, at = [], count_message_tokens(messages[:2])
    for message in messages[2:-1]:
        offsets.append(at)
        at += count_message_tokens([message]) - 3
    recalled = recalled_mask(mini, np.array(offsets), count_message_tokens(messages), 1, SALT + len(messages))
    assert kept == {i for i in range(60) if recalled[2 * i + 1]}
    small = quoted_summary(get_profile("sim/perfect"), 1, request(history(60), limit=300)).message["content"]
    assert "U59" in small and "U00" not in small  # newest first within the size asked for


def test_simlm_reads_its_summary_back() -> None:
    """A work-unit mind reads the quoted verdicts of its summary as units done."""
    from pushbench.policies.sim.units import PROGRESS
    from pushbench.tasks.dataops.mind import DataOpsMind

    text = quoted_summary(get_profile("sim/perfect"), 1, request(history(3))).message["content"]
    mind = DataOpsMind(get_profile("sim/perfect"), 1)
    view = [{"role": "system", "content": "s"}, {"role": "user", "content": "the task"},
            {"role": "user", "content": guidance.condensed_summary(6, 3000, text)}]
    mind.reader.update(view, [])
    facts = mind.reader.facts
    done = {facts.names[int(k)] for k, kind in zip(facts.array("key"), facts.array("kind")) if kind == PROGRESS}
    assert done == {"U00", "U01", "U02"}


def dataops_task(task_id: str = "dataops-n20-b5"):
    try:
        return next(t for t in load_tasks("dataops") if t.task_id == task_id)
    except (FileNotFoundError, StopIteration):
        pytest.skip("the dataops manifest is not built")


def test_a_simlm_episode_counts_each_summary_call_on_both_backends() -> None:
    spec = dataops_task()
    results = []
    for backend in (run_native, run_langgraph):
        env = get_family("dataops").environment(spec)
        memory = SummaryMemory(SMALL)
        run = backend(env, SimLM("sim/base"), make_controller("standard"), memory, 3)
        summaries = [m for m in run.transcript if m.get("name") == "memory-summary"]
        external = [m for m in run.transcript if m.get("role") == "assistant" and not m.get("name")]
        assert memory.log and len(summaries) == len(memory.log)
        assert run.llm_calls == len(external) + len(summaries)  # auxiliary calls are LLM calls, not actions
        assert env.steps == len([e for e in env.verifier.events if e["kind"] == "call"])
        results.append((env.verifier.events, run.llm_calls, run.input_tokens, run.output_tokens))
    assert results[0] == results[1]


def test_actions_do_not_depend_on_the_hidden_set_under_summary() -> None:
    task_id = "reposcan-requests-fixture-n050"
    spec = task(task_id)
    normal_env = make_env(task_id)
    memory = SummaryMemory(SMALL)
    normal = run_native(normal_env, SimLM("base"), make_controller("standard"), memory, 3)
    assert memory.log  # the summary took part
    accepted = [e["item"] for e in normal_env.verifier.events if e["kind"] == "verdict" and e["verdict"] == "accepted"]
    altered = set(valid_ids(task_id)) - set(accepted[1::3])
    other_env = RepoScanEnv(spec, index_for(spec), Verifier(task_id, spec.target, altered.__contains__))
    other = run_native(other_env, SimLM("base"), make_controller("standard"), SummaryMemory(SMALL), 3)
    replies_a = [m["content"] for m in normal.transcript if m["role"] == "tool"]
    replies_b = [m["content"] for m in other.transcript if m["role"] == "tool"]
    first = next(i for i, (x, y) in enumerate(zip(replies_a, replies_b)) if x != y)
    assert "rejected" in replies_b[first] or "accepted" in replies_b[first]  # the first difference is a verdict
    assert actions(normal.transcript)[: first + 1] == actions(other.transcript)[: first + 1]
