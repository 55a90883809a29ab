"""SWE-lite's SimLM reads test output, search results and file regions quoted in a memory's message
(a decision view, a search result) as it reads the originals: where the quotation sits, no more
than it shows, and never as a verdict on its latest edit."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pushbench import guidance as g
from pushbench.memory.acg.units import records
from pushbench.policies.base import tool_call_message
from pushbench.policies.sim import SimLM, get_profile
from pushbench.tasks.swe.env import SweEnv
from pushbench.tasks.swe.mind import READ, TESTOUT, SweMind
from pushbench.tasks.swe.runs import Workspace
from pushbench.tasks.swe.units import inject
from pushbench.tools import ToolCall
from pushbench.verifier import Verifier

from swe_toy import CLAMP_FAULT, toy_spec, write_toy

PERFECT = get_profile("perfect")
FIX = {"path": "src/toy/mathx.py", "old": '    """Limit value to [low, high]."""\n    if value >= low:',
       "new": '    """Limit value to [low, high]."""\n    if value < low:', "unit": "U01"}


@pytest.fixture
def episode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The perfect mind's toy episode up to its first edit: (context before the edit, tools, edit)."""
    monkeypatch.setenv("PUSHBENCH_SWE_TEST_CACHE", "off")
    spec = toy_spec(1, 30)
    ws = Workspace("toy", write_toy(tmp_path / "snaps"))
    inject(ws, [CLAMP_FAULT])
    env = SweEnv(spec, Verifier(spec.task_id, spec.target, lambda _: False, retry_rejected=True), ws,
                 {"U01": CLAMP_FAULT})
    tools = env.schemas()
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are an agent."},
                                      {"role": "user", "content": spec.objective}]
    try:
        for n in range(12):
            name, args = act(PERFECT, messages, tools)
            if name == "edit":
                yield messages, tools, args
                return
            messages += [tool_call_message(name, args, f"c{n}"),
                         {"role": "tool", "tool_call_id": f"c{n}", "content": env.execute(ToolCall(name, json.dumps(args))).text}]
        raise AssertionError("no edit in 12 steps")
    finally:
        ws.close()


def act(profile: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int = 5) -> tuple[str, dict]:
    turn = SimLM(profile).act(messages, tools, seed)
    assert turn.call is not None
    args = turn.call.arguments
    return turn.call.name, args if isinstance(args, dict) else json.loads(args or "{}")


def pairs(messages: list[dict[str, Any]]) -> list[tuple[str, dict, str]]:
    """(tool, arguments, result) of each call in the context."""
    out = []
    for call, result in zip(messages[2::2], messages[3::2]):
        fn = call["tool_calls"][0]["function"]
        out.append((fn["name"], json.loads(fn["arguments"]), result["content"]))
    return out


def view(blocks: list[tuple[int, str, dict, str]]) -> dict[str, Any]:
    """An ACG-like decision view: each block under its provenance line, quoted with ``| ``."""
    lines = [g.acg_view(9, len(blocks), len(blocks)), g.ACG_UNASSIGNED]
    for i, (step, tool, args, text) in enumerate(blocks):
        lines.append(g.acg_evidence(i, step, [], f"{tool} {json.dumps(args, sort_keys=True)}"))
        lines += [g.quoted(line) for line in text.splitlines()]
    return {"role": "user", "content": "\n".join(lines)}


def quoted_context(messages, keep: str, quote: set[str], split=lambda text: [text]):
    """The context with only the ``keep`` call left as it was and the ``quote`` calls' results (cut
    into parts by ``split``) in a view before it."""
    calls = pairs(messages)
    blocks = [(i + 1, tool, args, part) for i, (tool, args, text) in enumerate(calls) if tool in quote
              for part in split(text)]
    kept = [m for i, (tool, _, _) in enumerate(calls) if tool == keep for m in messages[2 + 2 * i: 4 + 2 * i]]
    return messages[:2] + ([view(blocks)] if blocks else []) + kept


def test_the_episode_reads_the_failure_searches_and_reads_before_it_edits(episode) -> None:
    messages, _, edit = episode
    assert [tool for tool, _, _ in pairs(messages)] == ["list_units", "run_tests", "search_files", "read_file"]
    assert edit == FIX


def test_quoted_evidence_alone_gives_the_same_edit(episode) -> None:
    messages, tools, edit = episode
    quoted = quoted_context(messages, "list_units", {"run_tests", "search_files", "read_file"})
    assert not any(m["role"] == "tool" and not m["content"].startswith("backlog") for m in quoted)
    assert act(PERFECT, quoted, tools) == ("edit", edit)
    assert act(PERFECT, quoted_context(messages, "list_units", set()), tools) == ("run_tests", {"unit": "U01"})
    # without the quoted file region it reads the function again, without the search it searches again
    assert act(PERFECT, quoted_context(messages, "list_units", {"run_tests", "search_files"}), tools)[0] == "read_file"
    assert act(PERFECT, quoted_context(messages, "list_units", {"run_tests"}), tools) == \
        ("search_files", {"query": "def clamp("})


def test_a_memgpt_search_result_is_read_like_a_view(episode) -> None:
    messages, tools, edit = episode
    lines = ['conversation_search "clamp": page 1 of 1 (3 results)']
    for rank, (tool, _, text) in enumerate(pairs(messages)[1:], 1):
        lines.append(f"({rank}) step {rank + 1}, tool:")
        lines += [g.quoted(line) for line in text.splitlines()]
    quoted = quoted_context(messages, "list_units", set()) + [
        tool_call_message("conversation_search", {"query": "clamp"}, "m1"),
        {"role": "tool", "tool_call_id": "m1", "content": "\n".join(lines)}]
    mind = SweMind(PERFECT, 5)
    mind.reader.update(quoted, tools)
    kinds = mind.reader.facts.array("kind").tolist()
    assert TESTOUT in kinds and READ in kinds
    assert mind.act(quoted, tools).call.name == "edit"


def late_regions(text: str) -> list[str]:
    """ACG's cut of a read: regions of 12 numbered lines under the header; only the last one here."""
    return records(text)[1:] if text.startswith("src/toy/mathx.py lines") else [text]


def test_a_region_shows_only_its_lines_and_a_split_run_is_not_read(episode) -> None:
    messages, tools, edit = episode
    read = pairs(messages)[3][2]
    assert len(records(read)) == 2 and late_regions(read)[0].startswith("src/toy/mathx.py lines 1-15 of 15\n   13|")
    only_late = quoted_context(messages, "list_units", {"run_tests", "search_files", "read_file"}, late_regions)
    name, args = act(PERFECT, only_late, tools)
    assert (name, args["path"], args["start"]) == ("read_file", "src/toy/mathx.py", 1)  # clamp is not in view
    # ACG keeps a test run (a checker result) as one record with its failure lines: quoted, it is read
    whole = quoted_context(messages, "list_units", {"run_tests"}, records)
    assert len(records(pairs(messages)[1][2])) == 1 and act(PERFECT, whole, tools)[0] != "run_tests"
    # cut into one block per line, a quoted header without the failure under it is not evidence
    fragmented = quoted_context(messages, "list_units", {"run_tests"}, lambda text: text.splitlines())
    assert len(fragmented[2]["content"].splitlines()) > 12
    assert act(PERFECT, fragmented, tools) == ("run_tests", {"unit": "U01"})


def test_a_quoted_failing_run_is_not_a_verdict_on_its_latest_edit(episode) -> None:
    from pushbench.policies.sim.units import Recall

    messages, tools, edit = episode
    edited = messages + [tool_call_message("edit", edit, "c9"),
                         {"role": "tool", "tool_call_id": "c9", "content": "edit: src/toy/mathx.py changed at line 2"}]
    run = next(text for tool, _, text in pairs(messages) if tool == "run_tests")
    for later, failed in (([view([(2, "run_tests", {"unit": "U01"}, run)])], False),
                          ([tool_call_message("run_tests", {"unit": "U01"}, "c10"),
                            {"role": "tool", "tool_call_id": "c10", "content": run}], True)):
        mind = SweMind(PERFECT, 5)
        mind.reader.update(edited + later, tools)
        ctx = Recall(mind, np.ones(len(mind.reader.facts), dtype=bool), mind.reader.assistant_turns)
        assert mind._unchecked_edit("U01", ctx)["failed"] is failed  # only its own later run judges the edit


def test_recall_of_a_quotation_follows_its_place_and_is_deterministic(episode) -> None:
    messages, tools, edit = episode
    quoted = quoted_context(messages, "list_units", {"run_tests", "search_files", "read_file"})
    filler = {"role": "user", "content": "\n".join(f"note {i}: nothing here" for i in range(400))}
    far = quoted[:3] + [filler] + quoted[3:]
    short = replace(PERFECT, window=1_500)  # the view is beyond the window: nothing of it is recalled
    assert act(PERFECT, far, tools) == ("edit", edit)
    assert act(short, far, tools) == ("run_tests", {"unit": "U01"})
    forgetful = get_profile("mini")
    assert len({json.dumps(act(forgetful, quoted, tools, seed)) for seed in (3, 3, 3)}) == 1
    assert [act(forgetful, quoted, tools, s) for s in range(4)] == [act(forgetful, quoted, tools, s) for s in range(4)]
