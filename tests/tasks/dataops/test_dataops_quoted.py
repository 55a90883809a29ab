"""DataOps-lite's SimLM reads pages quoted in a memory's message (a decision view, a search result)
as it reads the pages themselves: where the quotation sits, and no more lines than it shows."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from pushbench import guidance as g
from pushbench.memory.acg.units import records
from pushbench.policies.base import tool_call_message
from pushbench.policies.sim import get_profile
from pushbench.policies.sim.attention import recalled_mask
from pushbench.policies.sim.units import Recall
from pushbench.tasks.dataops.mind import DataOpsMind

from dataops_kit import call, dataops_data, dataops_env, dataops_tasks, reference_action  # noqa: F401

PERFECT = get_profile("perfect")
READ_ROW = ("inspect", {"unit": "U03", "path": "iris.csv", "page": 1})  # the page with row 6
TASK = "dataops-n03-b1"  # U02: add a missing PKG-INFO field (pyproject.toml's value); U03: iris.csv row 6


def act(profile: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]], unit: str = "",
        seed: int = 5) -> tuple[str, dict]:
    """The mind's next call on ``unit`` (its work step, under its recall of the context)."""
    mind = DataOpsMind(profile, seed)
    mind.reader.update(messages, tools)
    step = mind.reader.assistant_turns
    ctx = Recall(mind, recalled_mask(profile, mind.reader.facts.array("offset"), mind.reader.total_tokens, seed, step),
                 step)
    return mind.work(unit, mind.reader.state["titles"].get(unit, ""), ctx, 0)


def looked(env: Any, unit: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[tuple[dict, str]], tuple]:
    """The context after list_units and the perfect mind's inspections of ``unit``, the pages it read
    (arguments, text) and its next action (an answer or an edit)."""
    tools = env.schemas()
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are an agent."},
                                      {"role": "user", "content": env.task.objective}]
    pages: list[tuple[dict, str]] = []
    name, args = "list_units", {}
    for n in range(12):
        text = call(env, name, **args).text
        messages += [tool_call_message(name, args, f"c{n}"), {"role": "tool", "tool_call_id": f"c{n}", "content": text}]
        if name == "inspect" and "page" in args:
            pages.append((args, text))
        name, args = act(PERFECT, messages, tools, unit)
        if name != "inspect":
            return messages, tools, pages, (name, args)
        assert args["unit"] == unit
    raise AssertionError("no answer in 12 steps")


def view(blocks: list[tuple[dict, str]]) -> dict[str, Any]:
    """An ACG-like decision view: each quoted block under a provenance line."""
    lines = [g.acg_view(9, len(blocks), len(blocks)), g.ACG_UNASSIGNED]
    for i, (args, text) in enumerate(blocks):
        lines.append(g.acg_evidence(i, 2 + i, [], f"inspect {json.dumps(args, sort_keys=True)}"))
        lines += [g.quoted(line) for line in text.splitlines()]
    return {"role": "user", "content": "\n".join(lines)}


def with_view(messages: list[dict[str, Any]], blocks: list[tuple[dict, str]]) -> list[dict[str, Any]]:
    """The task and the listing, with the pages only in a view before the listing."""
    return messages[:2] + ([view(blocks)] if blocks else []) + messages[2:4]


def test_a_quoted_page_gives_the_answer_the_page_gives(dataops_env) -> None:
    env = dataops_env(TASK)
    messages, tools, pages, action = looked(env, "U03")
    assert action == ("answer", {"unit": "U03", "value": reference_action(env, "U03")[1]})
    assert [a.get("page", 1) for a, _ in pages] == [1]
    assert act(PERFECT, with_view(messages, pages), tools, "U03") == action
    assert act(PERFECT, with_view(messages, []), tools, "U03") == READ_ROW  # it does not know: it reads the page
    regions = [(args, r) for args, text in pages for r in records(text)]
    assert len(regions) == 2  # rows 1-12 and 13-20, each under the page header and the columns line
    assert act(PERFECT, with_view(messages, regions), tools, "U03") == action  # one page from two regions
    assert act(PERFECT, with_view(messages, regions[:1]), tools, "U03") == action  # row 6 is in the first region
    name, args = act(PERFECT, with_view(messages, regions[1:]), tools, "U03")  # rows 13-20: row 6 is not shown
    assert (name, args) == READ_ROW


def test_a_memgpt_search_result_is_read_where_it_sits(dataops_env) -> None:
    env = dataops_env(TASK)
    messages, tools, pages, action = looked(env, "U03")
    result = ['conversation_search "iris": page 1 of 1 (1 results)', "(1) step 2, tool:"]
    result += [g.quoted(line) for line in pages[0][1].splitlines()]
    searched = messages[:4] + [tool_call_message("conversation_search", {"query": "iris"}, "m1"),
                               {"role": "tool", "tool_call_id": "m1", "content": "\n".join(result)}]
    assert act(PERFECT, searched, tools, "U03") == action
    cut = result[:-3] + [result[-3] + g.QUOTE_CUT]  # cut short in row 18: rows 1-17 are shown
    assert act(PERFECT, searched[:-1] + [{**searched[-1], "content": "\n".join(cut)}], tools, "U03") == action


def test_a_missing_field_is_not_concluded_from_part_of_the_file(dataops_env) -> None:
    env = dataops_env(TASK)
    messages, tools, pages, action = looked(env, "U02")
    assert action[0] == "edit" and action[1]["path"] == "PKG-INFO"
    assert act(PERFECT, with_view(messages, pages), tools, "U02") == action
    regions = [(args, r) for args, text in pages for r in records(text)]
    late = [(a, r) for a, r in regions if not (r.startswith("U02 PKG-INFO:") and "   1| " in r)]
    assert len(late) < len(regions)
    name, args = act(PERFECT, with_view(messages, late), tools, "U02")  # PKG-INFO's first lines are not shown
    assert (name, args["path"], args.get("page", 1)) == ("inspect", "PKG-INFO", 1)


def test_quoted_pages_are_recalled_by_their_place_and_deterministically(dataops_env) -> None:
    env = dataops_env(TASK)
    messages, tools, pages, action = looked(env, "U03")
    filler = {"role": "user", "content": "\n".join(f"note {i}: nothing here" for i in range(400))}
    far = messages[:2] + [view(pages), filler] + messages[2:4]
    assert act(PERFECT, far, tools, "U03") == action
    assert act(replace(PERFECT, window=1_500), far, tools, "U03") == READ_ROW  # out of the window
    mind = DataOpsMind(PERFECT, 5)
    mind.reader.update(far, tools)
    offsets = {int(o) for o in mind.reader.facts.array("offset")}
    assert len(offsets) >= 2 and min(offsets) > 0  # the view's facts sit at the view's offset
    mini = get_profile("mini")
    assert [act(mini, with_view(messages, pages), tools, "U03", s) for s in range(4)] == \
        [act(mini, with_view(messages, pages), tools, "U03", s) for s in range(4)]
