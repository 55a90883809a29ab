"""The ``memgpt`` context builder: core blocks, archival and recall search, eviction with a policy-written
summary, the loop's handling of internal memory calls, and SimLM's memory behaviours."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pushbench.backends.native import EpisodeRun, record_turn, run_native, take_turn
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.memory.base import MAX_MEMORY_CALLS_PER_STEP, Event
from pushbench.memory.memgpt import (BLOCK_LIMIT, SUMMARY_SYSTEM, TOOLS, WARNING, MemGPTMemory,
                                     message_text)
from pushbench.policies.base import text_message, tool_call_message
from pushbench.policies.sim import SimLM
from pushbench.policies.sim.memory_skills import is_summary_request, note_facts
from pushbench.tokens import count_message_tokens
from pushbench.tools.base import ToolCall

from agentkit import Conversation, ScriptedPolicy, call_msg, make_env, raw_call

SYSTEM, TASK = "You are an agent.", "Find 10 things."


def memory(**kwargs: Any) -> MemGPTMemory:
    mem = MemGPTMemory(**kwargs)
    mem.start(SYSTEM, TASK)
    return mem


def call(mem: MemGPTMemory, name: str, **args: Any) -> str | None:
    return mem.handle(ToolCall(name, args, "c"))


def turn_pair(mem: MemGPTMemory, step: int, text: str) -> None:
    """One assistant tool call and its tool reply (``text``)."""
    mem.ingest(Event(step, "action", tool_call_message("search", {"query": f"q{step}"}, f"c{step}")))
    mem.ingest(Event(step, "observation", {"role": "tool", "tool_call_id": f"c{step}", "content": text},
                     {"tool": "search"}))


class FakeLLM:
    """Records summary requests; answers with a fixed summary."""

    def __init__(self, reply: str = "progress: 4 accepted of target 10"):
        self.requests: list[list[dict[str, Any]]] = []
        self.reply = reply

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], purpose: str) -> dict[str, Any]:
        assert tools == [] and purpose == "summary"
        self.requests.append(messages)
        return text_message(self.reply)


# --------------------------------------------------------------------------- core memory


def test_blocks_are_rendered_into_the_system_prompt_with_usage_and_limit() -> None:
    mem = memory()
    view = mem.render(100_000)
    assert [m["role"] for m in view] == ["system", "user"] and view[1]["content"] == TASK
    system = view[0]["content"]
    assert system.startswith(SYSTEM)
    assert f'<task characters="{len(TASK)}/{BLOCK_LIMIT}">\n{TASK}\n</task>' in system
    assert f'<progress characters="0/{BLOCK_LIMIT}">' in system and "<persona characters=" in system
    assert {t["function"]["name"] for t in mem.tools()} == {
        "core_memory_append", "core_memory_replace", "archival_memory_insert", "archival_memory_search",
        "conversation_search"}


def test_append_and_replace_edit_a_block_and_recompile_the_prompt() -> None:
    mem = memory()
    assert call(mem, "core_memory_append", label="progress", content="progress: 3 accepted") == \
        f"core memory block 'progress' updated: 20/{BLOCK_LIMIT} characters."
    assert call(mem, "core_memory_append", label="progress", content="read: \"q\" p2/5") is not None
    assert mem.blocks["progress"].value == 'progress: 3 accepted\nread: "q" p2/5'
    out = call(mem, "core_memory_replace", label="progress", old_content="3 accepted", new_content="7 accepted")
    assert out.startswith("core memory block 'progress' updated")
    system = mem.render(100_000)[0]["content"]
    assert 'progress: 7 accepted\nread: "q" p2/5' in system and "3 accepted" not in system


@pytest.mark.parametrize(("name", "args", "fragment"), [
    ("core_memory_replace", {"label": "progress", "old_content": "absent", "new_content": "x"}, "not found"),
    ("core_memory_replace", {"label": "progress", "old_content": "", "new_content": "x"}, "old_content is empty"),
    ("core_memory_append", {"label": "human", "content": "x"}, "no core memory block 'human'"),
    ("core_memory_append", {"label": "progress"}, "invalid arguments for core_memory_append"),
    ("core_memory_append", {"label": "progress", "content": 5}, "invalid arguments"),
    ("archival_memory_insert", {"content": "   "}, "non-empty content"),
    ("archival_memory_search", {"query": "x", "page": 0}, "invalid arguments"),
])
def test_bad_memory_calls_are_error_observations_that_change_nothing(name: str, args: dict, fragment: str) -> None:
    mem = memory()
    call(mem, "core_memory_append", label="progress", content="keep me")
    before = mem.render(100_000)[0]["content"]
    out = mem.handle(ToolCall(name, args, "c"))
    assert out.startswith("ERROR: ") and fragment in out
    assert mem.render(100_000)[0]["content"] == before and mem.archival == []


def test_raw_bad_json_and_foreign_tools() -> None:
    mem = memory()
    assert mem.handle(ToolCall("core_memory_append", "{nope", "c")).startswith("ERROR: arguments are not valid JSON")
    assert mem.handle(ToolCall("core_memory_append", "[1]", "c")) == "ERROR: arguments must be a JSON object"
    assert mem.handle(ToolCall("search", {"query": "x"}, "c")) is None  # not a memory tool: goes to the env


def test_character_limit_refuses_an_overlong_edit() -> None:
    mem = memory(block_limit=50)
    assert call(mem, "core_memory_append", label="progress", content="a" * 40).endswith("40/50 characters.")
    out = call(mem, "core_memory_append", label="progress", content="b" * 20)
    assert out.startswith("ERROR: edit refused") and "61 characters" in out and "limit is 50" in out
    out = call(mem, "core_memory_replace", label="progress", old_content="a" * 40, new_content="c" * 51)
    assert out.startswith("ERROR: edit refused")
    assert mem.blocks["progress"].value == "a" * 40
    assert len(memory(block_limit=50).blocks["persona"].value) <= 50  # initial values respect the limit too


# --------------------------------------------------------------------------- archival and recall


def test_archival_insert_and_search_with_pages() -> None:
    mem = memory()
    topics = ["httpbin fixture tests", "session cookies", "json encoding", "template rendering",
              "url routing", "cli commands", "blueprint registration"]
    for topic in topics:
        assert call(mem, "archival_memory_insert", content=f"notes about {topic}").startswith("archival memory: passage")
    assert "7 passages in archival memory" in mem.render(100_000)[0]["content"]
    out = call(mem, "archival_memory_search", query="cookies of the session")
    lines = out.splitlines()
    assert lines[0].startswith('archival_memory_search "cookies of the session": page 1 of')
    assert lines[1] == "(1) passage 2:" and lines[2] == "notes about session cookies"
    many = call(mem, "archival_memory_search", query="notes about")
    assert many.splitlines()[0].endswith("page 1 of 2 (7 results)")
    page2 = call(mem, "archival_memory_search", query="notes about", page=2)
    assert page2.count("passage") == 2 and "(6) passage" in page2
    assert "no results on page 3" in call(mem, "archival_memory_search", query="notes about", page=3)
    assert call(mem, "archival_memory_search", query="zebra").endswith(": no results")


def test_conversation_search_finds_every_message_even_after_eviction() -> None:
    mem = memory()
    mem.bind(FakeLLM())
    for step in range(1, 41):
        turn_pair(mem, step, f"result {step} " + ("filler " * 60) + (" unicorn" if step == 3 else ""))
    mem.render(3_000)  # forces eviction
    assert mem.evicted > 0 and all("unicorn" not in message_text(m) for m in mem.messages)
    out = call(mem, "conversation_search", query="unicorn")
    lines = out.splitlines()
    assert lines[0].startswith('conversation_search "unicorn": page 1 of 1')
    assert lines[1] == "(1) step 3, tool:" and lines[2].startswith("| result 3 filler")
    assert all(line.startswith(("(", "|")) for line in lines[1:])  # results are quotations


# --------------------------------------------------------------------------- eviction and summary


def _view_tokens(mem: MemGPTMemory, view: list[dict[str, Any]]) -> int:
    return count_message_tokens(view, TOOLS)


def test_eviction_summarises_the_oldest_messages_with_the_policy_and_cuts_at_an_assistant() -> None:
    mem, llm = memory(), FakeLLM("progress: 4 accepted of target 10\nsubmitted: a.py::f")
    mem.bind(llm)
    for step in range(1, 31):
        turn_pair(mem, step, f"result {step} " + "word " * 80)
    before = len(mem.messages)
    budget = _view_tokens(mem, mem.render(10**6)) - 200
    view = mem.render(budget)
    assert len(llm.requests) == 1
    request = llm.requests[0]
    assert request[0] == {"role": "system", "content": SUMMARY_SYSTEM} and request[1]["content"] == TASK
    evicted = mem.log[0]["evicted"]
    assert evicted >= 0.3 * before and evicted < before
    assert len(request) == evicted + 3  # system, task, the evicted messages as text, the request
    assert request[2] == {"role": "assistant", "content": 'called search {"query": "q1"}'}
    assert request[3]["content"].startswith("Tool result:\nresult 1 ")
    assert view[2]["role"] == "user" and view[2]["content"].endswith(llm.reply)
    assert "earlier messages were evicted" in view[2]["content"]
    assert view[3]["role"] == "assistant"  # the kept part starts at an assistant message
    assert _view_tokens(mem, view) <= budget


def test_eviction_fraction_is_raised_until_the_rest_fits() -> None:
    mem = memory()
    mem.bind(FakeLLM())
    for step in range(1, 21):  # old turns are tiny, recent ones are large
        turn_pair(mem, step, "tiny" if step <= 10 else "large " * 300)
    budget = _view_tokens(mem, mem.render(10**6)) - 1_500
    view = mem.render(budget)
    assert mem.log[0]["evicted"] > 0.5 * 40  # 30% of the messages would not have freed enough
    assert _view_tokens(mem, view) <= budget and view[3]["role"] == "assistant"


def test_a_second_eviction_summarises_the_previous_summary_too() -> None:
    mem, llm = memory(), FakeLLM("first summary")
    mem.bind(llm)
    for step in range(1, 31):
        turn_pair(mem, step, "word " * 80)
    budget = _view_tokens(mem, mem.render(10**6)) - 200
    mem.render(budget)
    llm.reply = "second summary"
    for step in range(31, 61):
        turn_pair(mem, step, "word " * 80)
    view = mem.render(budget)
    assert len(llm.requests) >= 2
    assert "first summary" in llm.requests[1][2]["content"]  # the old summary is the first evicted message
    assert view[2]["content"].endswith("second summary") and "first summary" not in view[2]["content"]


def test_without_a_bound_model_eviction_still_fits_and_says_so() -> None:
    mem = memory()
    for step in range(1, 31):
        turn_pair(mem, step, "word " * 80)
    budget = _view_tokens(mem, mem.render(10**6)) - 200
    view = mem.render(budget)
    assert "no summary" in view[2]["content"] and _view_tokens(mem, view) <= budget


def test_memory_pressure_warning_is_added_once_per_cycle() -> None:
    mem = memory()
    for step in range(1, 11):
        turn_pair(mem, step, "word " * 80)
    budget = int(_view_tokens(mem, mem.render(10**6)) / 0.92)
    view = mem.render(budget)
    assert view[-1] == {"role": "user", "content": WARNING}
    turn_pair(mem, 11, "word")
    assert [m.get("content") for m in mem.render(budget)].count(WARNING) == 1


# --------------------------------------------------------------------------- the loop


def test_internal_memory_calls_cost_llm_calls_not_steps(make_fixture_env) -> None:
    env = make_fixture_env()
    mem = MemGPTMemory()
    mem.start(SYSTEM, TASK)
    policy = ScriptedPolicy([call_msg("core_memory_append", {"label": "progress", "content": "hi"}, "m1"),
                             call_msg("archival_memory_insert", {"content": "submitted: x.py::f"}, "m2"),
                             call_msg("status", {}, "s1")])
    run = EpisodeRun(env)
    turn = take_turn(run, policy, mem, env.schemas(), 0)
    assert turn.call.name == "status" and env.steps == 0 and run.llm_calls == 3
    assert [m["role"] for m in run.transcript] == ["assistant", "tool", "assistant", "tool", "assistant"]
    assert run.transcript[1]["content"].startswith("core memory block 'progress' updated")
    assert mem.archival == ["submitted: x.py::f"]
    assert env.verifier.events == []  # memory calls never reach the verifier log


def test_memory_calls_are_capped_per_step_then_the_tools_are_withdrawn(make_fixture_env) -> None:
    env = make_fixture_env()
    mem = MemGPTMemory()
    mem.start(SYSTEM, TASK)

    class Greedy(ScriptedPolicy):
        def act(self, messages, tools, seed):
            self.tools_seen = getattr(self, "tools_seen", []) + [len(tools)]
            return super().act(messages, tools, seed)

    loop = call_msg("archival_memory_insert", {"content": "again"}, "m")
    policy = Greedy([loop] * 20)
    run = EpisodeRun(env)
    turn = take_turn(run, policy, mem, env.schemas(), 0)
    assert len(mem.archival) == MAX_MEMORY_CALLS_PER_STEP
    assert policy.tools_seen == [len(env.schemas()) + len(TOOLS)] * MAX_MEMORY_CALLS_PER_STEP + [len(env.schemas())]
    assert turn.call.name == "archival_memory_insert" and env.steps == 0
    # the call after the cap goes to the environment, which does not know the tool: an invalid action
    from pushbench.backends.native import apply, control

    apply(run, turn, control(turn, make_controller("standard"), env), make_controller("standard"), mem)
    assert env.steps == 1 and run.transcript[-1]["content"].startswith("ERROR: unknown tool")


def test_full_memory_takes_exactly_the_old_single_turn_path(make_fixture_env) -> None:
    """``full`` offers no tools and binds nothing: one policy call per step, tools unchanged."""
    env = make_fixture_env()
    full = make_memory("full")
    full.start(SYSTEM, TASK)
    policy = ScriptedPolicy([raw_call("core_memory_append", '{"label": "x", "content": "y"}')])
    run = EpisodeRun(env)
    turn = take_turn(run, policy, full, env.schemas(), 0)
    assert run.llm_calls == 1 and len(policy.seen) == 1 and turn.call.name == "core_memory_append"
    assert run.transcript == [turn.message]


# --------------------------------------------------------------------------- SimLM


def test_note_lines_parse_into_facts() -> None:
    assert note_facts("progress: 12 accepted of target 50") == [("count", "", 12)]
    assert note_facts("submitted: a.py::f, b.py::g") == [("done", "a.py::f", 0), ("done", "b.py::g", 0)]
    assert note_facts('read: "test x" p3/5; "y" p5/5') == [("page", "test x", 3005), ("page", "y", 5005)]
    assert note_facts("|   accepted  a.py::f") == [("done", "a.py::f", 0)]
    assert note_facts("  accepted  a.py::f") == [] and note_facts("submit: 1 accepted") == []


def _summary_request(conv: Conversation) -> list[dict[str, Any]]:
    from pushbench.memory.memgpt import SUMMARY_REQUEST, plain

    return [{"role": "system", "content": SUMMARY_SYSTEM}, conv.messages[1],
            *(plain(m) for m in conv.messages[2:]), {"role": "user", "content": SUMMARY_REQUEST}]


def test_simlm_writes_the_summary_from_what_it_recalls_lossy_by_profile() -> None:
    env = make_env()
    conv = Conversation(env)
    submitted: list[str] = []
    for page in range(1, 6):
        text = conv.search("test httpbin", page)
        ids = [line.split()[1] for line in text.splitlines() if line.startswith("[")][:6]
        conv.submit(ids)
        submitted += ids
    request = _summary_request(conv)
    assert is_summary_request(request, [])
    def summary(profile: str) -> str:  # the episode's model: it acted on the task before the summary
        sim = SimLM(profile)
        sim.act(conv.messages, env.schemas(), 3)
        return sim.act(request, [], 3).message["content"]

    assert "recall nothing specific" in SimLM("sim/perfect").act(request, [], 3).message["content"]
    perfect = summary("sim/perfect")
    lines = perfect.splitlines()
    accepted = env.verifier.valid_count
    assert lines[0] == f"progress: {accepted} accepted of target 10"
    assert lines[1] == 'read: "test httpbin" p5/5'
    assert set(lines[2].removeprefix("submitted: ").split(", ")) == set(submitted)
    mini = summary("sim/mini")
    mini_ids = next(line for line in mini.splitlines() if line.startswith("submitted: "))
    assert 0 < len(mini_ids.split(", ")) < len(submitted)  # lossy: forgets some of what it submitted


def test_simlm_reads_remembered_progress_from_core_memory() -> None:
    from pushbench.tasks.reposcan.mind import MEM_COUNT, MEM_DONE, RepoScanMind
    from pushbench.policies.sim import get_profile

    env = make_env()
    conv = Conversation(env)
    conv.messages[0] = {"role": "system", "content": "sys\n<progress characters=\"9/2000\">\n"
                        "progress: 9 accepted of target 10\nsubmitted: tests/x.py::test_a\n</progress>"}
    mind = RepoScanMind(get_profile("sim/perfect"), 1)
    mind.reader.update(conv.messages, conv.tools)
    kinds = mind.reader.facts.array("kind").tolist()
    assert MEM_COUNT in kinds and MEM_DONE in kinds
    turn = mind.act(conv.messages, conv.tools)  # believes 9 of 10: keeps searching rather than finishing
    assert turn.call.name == "search"
    conv.messages[0]["content"] = conv.messages[0]["content"].replace("progress: 9", "progress: 10")
    mind = RepoScanMind(get_profile("sim/perfect"), 1)
    turn = mind.act(conv.messages, conv.tools)
    assert turn.call.name == "final" and json.loads(turn.call.arguments) == {"count": 10}


# --------------------------------------------------------------------------- whole episodes


@pytest.mark.parametrize("profile", ["sim/mini", "sim/pro"])
def test_a_whole_memgpt_episode_uses_memory_and_is_deterministic(profile: str) -> None:
    def episode() -> tuple[Any, Any]:
        env = make_env("reposcan-requests-documented-n100")
        run = run_native(env, SimLM(profile), make_controller("standard"), make_memory("memgpt"), 11)
        return env, run

    env, run = episode()
    assert env.done and env.steps <= env.task.budget
    calls = [m["tool_calls"][0]["function"]["name"] for m in run.transcript if m.get("tool_calls")]
    assert {"core_memory_append", "archival_memory_insert", "archival_memory_search"} <= set(calls)
    assert run.llm_calls == len([m for m in run.transcript if m.get("role") == "assistant"])
    assert run.llm_calls > env.steps  # internal calls are LLM calls, not steps
    env2, run2 = episode()
    assert run2.transcript == run.transcript and env2.verifier.events == env.verifier.events


def test_memgpt_evicts_with_a_simlm_summary_on_a_long_episode() -> None:
    env = make_env("reposcan-requests-calls-n100")
    mem = make_memory("memgpt")
    run = run_native(env, SimLM("sim/mini"), make_controller("gated"), mem, 5)
    summaries = [m for m in run.transcript if m.get("name") == "memory-summary"]
    assert mem.log and len(summaries) == len(mem.log)
    assert summaries[0]["content"].startswith("progress: ")
    assert mem.summary["content"].endswith(summaries[-1]["content"])
