"""Controllers between policy and environment: standard, gated, StateQGP and its ablations.

Each test drives the native backend's ``step`` with a scripted policy on a real RepoScan task
(``requests``, fixture ``httpbin``, N = 10), so every effect is checked where the model would see
it: in the text of the messages.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from agentkit import DEFAULT_TASK, ScriptedPolicy, call_msg, make_env, page_ids, raw_call, valid_ids
from pushbench.backends.native import EpisodeRun, step, system_prompt
from pushbench.controllers import CONTROLLERS, Controller, Intercept, make_controller
from pushbench.controllers.gated import GatedController
from pushbench.controllers.stateqgp import StateQGPController
from pushbench.memory import make_memory
from pushbench.policies.base import text_message
from pushbench.tools.base import Observation, ToolCall

Q = "test httpbin"  # 5 pages
ONE_PAGE = "pyopenssl"  # 4 results, 1 page
OTHER_ONE_PAGE = "idna"  # 7 results, 1 page
PROGRESS = re.compile(r"^\[progress\] verified accepted (\d+)/(\d+)")
BUFFER = "[controller] unsubmitted hits from pages you read earlier"


class Episode:
    """A live episode: ``do(message)`` runs one native step with that assistant message."""

    def __init__(self, controller: str, task_id: str = DEFAULT_TASK, **changes: Any):
        self.env = make_env(task_id, **changes)
        self.controller = make_controller(controller)
        self.memory = make_memory("full")
        self.memory.start(system_prompt(self.controller), self.env.task.objective)
        self.run = EpisodeRun(self.env)
        self.tools = self.env.schemas()
        self.valid = valid_ids(task_id)

    def do(self, message: dict[str, Any]) -> str:
        before = len(self.run.transcript)
        step(self.run, ScriptedPolicy([message]), self.controller, self.memory, self.tools, 0)
        new = self.run.transcript[before:]
        return new[-1]["content"] if len(new) == 2 else ""

    def search(self, query: str, page: int = 1) -> str:
        return self.do(call_msg("search", {"query": query, "page": page}))

    def submit(self, ids: list[str]) -> str:
        return self.do(call_msg("submit", {"ids": ids}))

    def final(self, count: int) -> str:
        return self.do(call_msg("final", {"count": count}))

    def calls(self) -> list[dict[str, Any]]:
        return [e for e in self.env.verifier.events if e["kind"] == "call"]

    def verdicts(self) -> list[tuple[str, str]]:
        return [(e["item"], e["verdict"]) for e in self.env.verifier.events if e["kind"] == "verdict"]

    def good(self, query: str = Q, page: int = 1) -> list[str]:
        return [u for u in page_ids(self.env, query, page) if u in set(self.valid)]

    def buffer_blocks(self) -> list[str]:
        return [m["content"][m["content"].index(BUFFER):] for m in self.run.transcript
                if m["role"] == "tool" and BUFFER in (m["content"] or "")]


def reach_target(ep: Episode) -> None:
    ep.submit(ep.valid[: ep.env.task.target])
    assert ep.env.verifier.valid_count >= ep.env.task.target


# --------------------------------------------------------------------------- registry


@pytest.mark.parametrize("name,switches", [
    ("stateqgp", (True, True, True)),
    ("stateqgp-dedupe", (True, False, False)),
    ("stateqgp-pages", (False, True, False)),
    ("stateqgp-nobuffer", (True, True, False)),
])
def test_ablation_names_map_to_switches(name: str, switches: tuple[bool, bool, bool]) -> None:
    ctl = make_controller(name)
    assert isinstance(ctl, StateQGPController) and ctl.name == name
    assert (ctl.dedupe, ctl.pages, ctl.buffer) == switches
    assert "[progress]" in ctl.system_note()


def test_registry_makes_fresh_controllers() -> None:
    assert set(CONTROLLERS) >= {"standard", "gated", "stateqgp", "stateqgp-dedupe", "stateqgp-pages",
                                "stateqgp-nobuffer"}
    assert type(make_controller("standard")) is Controller and make_controller("standard").name == "standard"
    assert isinstance(make_controller("gated"), GatedController) and make_controller("gated").name == "gated"
    a, b = make_controller("stateqgp"), make_controller("stateqgp")
    a.submitted.add("x")
    assert a is not b and b.submitted == set()
    with pytest.raises(KeyError, match="unknown controller"):
        make_controller("magic")
    assert make_controller("standard").system_note() == "" == make_controller("gated").system_note()
    assert system_prompt(make_controller("stateqgp")).endswith(make_controller("stateqgp").system_note())


# --------------------------------------------------------------------------- standard


def test_standard_passes_everything_through() -> None:
    ep = Episode("standard")
    ctl = ep.controller
    for call in (ToolCall("search", {"query": Q}), ToolCall("submit", {"ids": ["a.py::f"]}),
                 ToolCall("final", {"count": 3}), ToolCall("status", {}), ToolCall("nope", "{bad")):
        assert ctl.before(call, ep.env) is call
    obs = Observation("text")
    assert ctl.after(ToolCall("search", {"query": Q}), obs, ep.env) is obs and obs.text == "text"
    assert ctl.on_stop(ep.env) is None

    reply = ep.search(Q)
    assert reply.startswith(f'search "{Q}": page 1 of 5') and "[progress]" not in reply
    ep.final(3)  # below target: ends the episode (a false completion)
    assert ep.env.done and ep.env.termination == "final"
    end = [e for e in ep.env.verifier.events if e["kind"] == "end"]
    assert len(end) == 1 and end[0]["reported"] == 3 and end[0]["reason"] == "final"


def test_standard_text_stop_ends_the_episode() -> None:
    ep = Episode("standard")
    ep.do(text_message("I give up."))
    assert ep.env.done and ep.env.termination == "give_up" and ep.env.steps == 0


# --------------------------------------------------------------------------- gated


def test_gated_blocks_final_below_target_and_lets_it_through_at_target() -> None:
    ep = Episode("gated")
    ep.submit(ep.good()[:3])
    reply = ep.final(10)
    assert reply == ("[controller] final blocked: the verifier has accepted 3 of the target 10. "
                     "The episode continues; keep working toward 10.")
    assert not ep.env.done
    blocked = ep.calls()[-1]
    assert blocked["tool"] == "final" and blocked["info"] == {"intercepted_by": "gated"}
    assert ep.env.steps == 2  # the blocked call cost a step

    reach_target(ep)
    assert ep.final(ep.env.verifier.valid_count).startswith("final: episode ended")
    assert ep.env.done and ep.env.termination == "final"


def test_gated_at_exact_target() -> None:
    ep = Episode("gated")
    ep.submit(ep.valid[:9])
    assert "accepted 9 of the target 10" in ep.final(9)
    ep.submit(ep.valid[9:10])
    ep.final(10)
    assert ep.env.termination == "final"


def test_gated_leaves_other_tools_alone() -> None:
    ep = Episode("gated")
    for call in (ToolCall("search", {"query": Q}), ToolCall("submit", {"ids": ["a.py::f"]}), ToolCall("status", {})):
        assert ep.controller.before(call, ep.env) is call
    assert "[progress]" not in ep.search(Q)


@pytest.mark.parametrize("name", ["gated", "stateqgp", "stateqgp-dedupe", "stateqgp-pages", "stateqgp-nobuffer"])
def test_text_stop_is_blocked_below_target(name: str) -> None:
    ep = Episode(name)
    reply = ep.do(text_message("I think I am done."))
    assert reply.startswith("[controller] final blocked: the verifier has accepted 0 of the target 10")
    assert ep.run.transcript[-1]["role"] == "user"
    assert not ep.env.done and ep.env.steps == 1
    assert ep.calls()[-1]["tool"] == "(stop)" and ep.calls()[-1]["info"] == {"intercepted_by": name}
    reach_target(ep)
    assert ep.controller.on_stop(ep.env) is None
    ep.do(text_message("Done."))
    assert ep.env.done and ep.env.termination == "give_up"


@pytest.mark.parametrize("name", ["stateqgp", "stateqgp-dedupe", "stateqgp-pages", "stateqgp-nobuffer"])
def test_every_stateqgp_variant_gates_final(name: str) -> None:
    ep = Episode(name)
    assert ep.final(5).startswith("[controller] final blocked: the verifier has accepted 0 of the target 10")
    assert not ep.env.done
    reach_target(ep)
    ep.final(10)
    assert ep.env.termination == "final"


# --------------------------------------------------------------------------- StateQGP: progress block


def test_progress_block_on_every_observation() -> None:
    ep = Episode("stateqgp")
    ep.search(Q)
    ep.submit(ep.good()[:4] + ["tests/test_requests.py::TestRequests.nope"])
    ep.do(call_msg("status"))
    ep.do(raw_call("search", "{not json"))  # an invalid action still gets the block
    ep.do(call_msg("frobnicate"))
    ep.final(10)  # intercepted
    ep.search(Q)  # rewritten to page 2
    tool_msgs = [m["content"] for m in ep.run.transcript if m["role"] == "tool"]
    assert len(tool_msgs) == 7
    counts = []
    for text in tool_msgs:
        last = text.splitlines()[-1]
        match = PROGRESS.match(last)
        assert match, text
        counts.append(int(match.group(1)))
        assert match.group(2) == "10" and last.endswith("final is blocked until the target is verified")
    assert counts == [0, 4, 4, 4, 4, 4, 4]
    assert "ids submitted 5" in tool_msgs[-1]
    assert f'read: "{Q}" p1,2/5' in tool_msgs[-1]
    reach_target(ep)
    assert ep.run.transcript[-1]["content"].splitlines()[-1].endswith("target reached")


def test_progress_block_reflects_the_switches() -> None:
    pages_only = Episode("stateqgp-pages")
    text = pages_only.search(Q).splitlines()[-1]
    assert PROGRESS.match(text) and "ids submitted" not in text and f'"{Q}" p1/5' in text
    dedupe_only = Episode("stateqgp-dedupe")
    text = dedupe_only.search(Q).splitlines()[-1]
    assert PROGRESS.match(text) and "ids submitted 0" in text and "read:" not in text


# --------------------------------------------------------------------------- StateQGP: dedupe


def test_dedupe_filters_submitted_and_repeated_ids() -> None:
    ep = Episode("stateqgp")
    a, b, c, d = ep.good()[:4]
    ep.submit([a, b])
    reply = ep.submit([a, c, c, b, d])
    assert "[controller] removed 3 id(s) already submitted." in reply
    assert reply.startswith("submit: 2 accepted, 0 rejected, 0 duplicate")
    assert ep.verdicts() == [(a, "accepted"), (b, "accepted"), (c, "accepted"), (d, "accepted")]
    assert ep.calls()[-1]["args"] == {"ids": [c, d]}
    assert not any(v == "duplicate" for _, v in ep.verdicts())


def test_dedupe_all_filtered_redirects_to_the_next_unseen_page() -> None:
    ep = Episode("stateqgp")
    ep.search(Q)
    ep.submit(ep.good()[:2])
    reply = ep.submit(ep.good()[:2])
    assert reply.startswith(f'search "{Q}": page 2 of 5')
    assert f'[controller] nothing new to submit; reading page 2 of "{Q}" instead.' in reply
    assert ep.calls()[-1]["tool"] == "search" and ep.calls()[-1]["args"] == {"query": Q, "page": 2}
    assert len(ep.verdicts()) == 2


def test_dedupe_all_filtered_without_pages_is_intercepted() -> None:
    ep = Episode("stateqgp-dedupe")
    ep.search(Q)
    ep.submit(ep.good()[:2])
    reply = ep.submit(ep.good()[:2])
    assert reply.startswith("[controller] all ids in this submit were already submitted; nothing was sent.")
    assert ep.calls()[-1]["info"] == {"intercepted_by": "stateqgp-dedupe"}
    assert len(ep.verdicts()) == 2


def test_dedupe_all_filtered_when_every_page_is_read() -> None:
    ep = Episode("stateqgp")
    ep.search(ONE_PAGE)
    ids = page_ids(ep.env, ONE_PAGE)
    ep.submit(ids[:1])
    assert ep.submit(ids[:1]).startswith("[controller] all ids in this submit were already submitted")


def test_dedupe_ignores_failed_submits() -> None:
    ep = Episode("stateqgp")
    a = ep.good()[0]
    assert ep.submit([a, "../etc/passwd.py::x"]).startswith("ERROR: ")  # nothing was submitted
    assert ep.submit([a]).startswith("submit: 1 accepted")


def test_pages_variant_does_not_dedupe() -> None:
    ep = Episode("stateqgp-pages")
    a = ep.good()[0]
    ep.submit([a])
    assert "1 duplicate" in ep.submit([a])


# --------------------------------------------------------------------------- StateQGP: pages


def test_repeated_page_is_rewritten_to_the_next_unseen_one() -> None:
    ep = Episode("stateqgp")
    ep.search(Q, 1)
    ep.search(Q, 3)
    reply = ep.search(Q, 1)
    assert reply.startswith(f'search "{Q}": page 2 of 5')
    assert f'[controller] page 1 of "{Q}" was already read; showing page 2.' in reply
    assert ep.search(f"  {Q} ", 2).startswith(f'search "{Q}": page 4 of 5')  # same query after strip
    ep.search(Q, 5)
    reply = ep.search(Q, 2)
    assert reply.startswith(f'[controller] all 5 pages of "{Q}" were already read; try a different query.')
    assert ep.calls()[-1]["info"] == {"intercepted_by": "stateqgp"}
    searched = [(c["args"]["query"], c["args"]["page"]) for c in ep.calls()
                if c["tool"] == "search" and not (c.get("info") or {}).get("intercepted_by")]
    assert sorted(p for _, p in searched) == [1, 2, 3, 4, 5]  # every page shown exactly once


def test_new_page_and_new_query_pass_through() -> None:
    ep = Episode("stateqgp")
    call = ToolCall("search", {"query": Q, "page": 1})
    assert ep.controller.before(call, ep.env) is call
    ep.search(Q, 1)
    for fresh in (ToolCall("search", {"query": Q, "page": 2}), ToolCall("search", {"query": ONE_PAGE})):
        assert ep.controller.before(fresh, ep.env) is fresh


def test_dedupe_variant_does_not_track_pages() -> None:
    ep = Episode("stateqgp-dedupe")
    ep.search(Q, 1)
    assert ep.search(Q, 1).startswith(f'search "{Q}": page 1 of 5')


# --------------------------------------------------------------------------- StateQGP: buffer


def test_buffer_resurfaces_unsubmitted_hits_once() -> None:
    ep = Episode("stateqgp")
    ep.search(Q, 1)
    first = page_ids(ep.env, Q, 1)
    ep.submit(first[:3])
    reply = ep.search(Q, 2)
    assert BUFFER in reply
    block = reply[reply.index(BUFFER):]
    shown = re.findall(r"^\[\d+\] (\S+)$", block, re.M)
    assert shown == first[3:]  # unsubmitted ones, in rank order, with their snippets
    assert "    L" in block
    ep.search(Q, 3)  # page 2 was not submitted: its hits come back, page 1's do not
    blocks = ep.buffer_blocks()
    assert len(blocks) == 2
    again = re.findall(r"^\[\d+\] (\S+)$", blocks[1], re.M)
    assert again == page_ids(ep.env, Q, 2)
    every = [u for b in blocks for u in re.findall(r"^\[\d+\] (\S+)$", b, re.M)]
    assert len(every) == len(set(every))


def test_buffer_skips_submitted_hits() -> None:
    ep = Episode("stateqgp")
    ep.search(ONE_PAGE)
    submitted = page_ids(ep.env, ONE_PAGE)
    ep.submit(submitted)  # everything on the page was submitted
    assert BUFFER not in ep.search(OTHER_ONE_PAGE)
    reply = ep.search("morsel")  # the idna page was not submitted: it comes back, in rank order
    expected = [u for u in page_ids(ep.env, OTHER_ONE_PAGE) if u not in submitted]
    assert set(page_ids(ep.env, OTHER_ONE_PAGE)) & set(submitted)  # the pages overlap ...
    assert re.findall(r"^\[\d+\] (\S+)$", reply[reply.index(BUFFER):], re.M) == expected  # ... minus those


@pytest.mark.parametrize("name", ["stateqgp-nobuffer", "stateqgp-dedupe", "stateqgp-pages"])
def test_no_buffer_in_ablations_without_it(name: str) -> None:
    ep = Episode(name)
    ep.search(Q, 1)
    ep.search(Q, 2)
    ep.search(Q, 3)
    assert ep.buffer_blocks() == []


def test_intercepted_search_does_not_resurface_hits_again() -> None:
    ep = Episode("stateqgp")
    ep.search(ONE_PAGE)
    ep.search(OTHER_ONE_PAGE)  # page of ONE_PAGE re-surfaced here (once)
    assert ep.search(ONE_PAGE).startswith("[controller] all 1 pages")  # intercepted: nothing shown
    ep.search("morsel")
    every = [u for b in ep.buffer_blocks() for u in re.findall(r"^\[\d+\] (\S+)$", b, re.M)]
    assert every.count(page_ids(ep.env, ONE_PAGE)[0]) == 1


def test_controller_state_does_not_leak_between_controllers() -> None:
    one, two = Episode("stateqgp"), Episode("stateqgp")
    a = one.good()[0]
    one.submit([a])
    assert two.submit([a]).startswith("submit: 1 accepted")


def test_intercept_type() -> None:
    ep = Episode("gated")
    decision = ep.controller.before(ToolCall("final", {"count": 1}), ep.env)
    assert isinstance(decision, Intercept) and "accepted 0 of the target 10" in decision.text
