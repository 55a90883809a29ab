"""SimLM on RepoScan: beliefs and behaviour derived from chat messages alone.

Every conversation here is built in the OpenAI chat format from real tool results (a real
RepoScanEnv on the committed `requests` task renders each observation), so SimLM is exercised on
exactly the text formats tools/reposcan.py and the controllers produce.
"""

from __future__ import annotations

import builtins
import io
import os
import pathlib
from typing import Any

import pytest

from agentkit import (SEED_QUERY, Conversation, ScriptedPolicy, actions, call_msg, called, index_for, make_env,
                      page_ids, task, valid_ids)
from pushbench.backends.native import run_native
from pushbench.controllers import make_controller
from pushbench.controllers.base import final_gate
from pushbench.memory import make_memory
from pushbench.policies import make_policy
from pushbench.policies.base import Turn
from pushbench.policies.sim import SimLM, get_profile
from pushbench.tokens import count_message_tokens
from pushbench.tools.base import ToolCall
from pushbench.tasks.reposcan.env import RepoScanEnv
from pushbench.verifier import Verifier

RUBBISH = "tests/test_requests.py::TestRequests.no_such_function"  # well-formed, never valid


@pytest.fixture(scope="module")
def page1() -> dict[str, list[str]]:
    env = make_env()
    valid = set(valid_ids())
    ids = page_ids(env, SEED_QUERY, 1)
    good, bad = [u for u in ids if u in valid], [u for u in ids if u not in valid]
    assert len(good) >= 5 and bad, "the requests fixture task's first page changed"
    return {"good": good, "bad": bad, "all": ids}


def act(profile: Any, conv: Conversation, seed: int = 1) -> tuple[str, dict[str, Any]] | None:
    policy = SimLM(profile if not isinstance(profile, str) else get_profile(profile))
    return called(policy.act(conv.messages, conv.tools, seed))


# --------------------------------------------------------------------------- the model registry


def test_make_policy_and_reader_selection() -> None:
    policy = make_policy("sim/base")
    assert isinstance(policy, SimLM) and policy.name == "sim/base"
    assert policy.context_window == get_profile("base").window
    with pytest.raises(ValueError, match="unknown model"):
        make_policy("nonesuch/model-x")
    with pytest.raises(ValueError, match="no reader"):
        policy.act([{"role": "user", "content": "hi"}], [call_msg("other")["tool_calls"][0]], 0)


def test_without_a_recognisable_objective_it_stops_in_text() -> None:
    env = make_env()
    turn = SimLM("perfect").act([{"role": "user", "content": "Do something nice."}], env.schemas(), 0)
    assert turn.call is None and "cannot tell" in turn.message["content"]


def test_first_move_is_the_seed_query() -> None:
    conv = Conversation(make_env())
    for name in ("mini", "base", "pro", "perfect"):
        assert act(name, conv) == ("search", {"query": SEED_QUERY, "page": 1})


# --------------------------------------------------------------------------- believed count


def test_believed_count_counts_recalled_accepted_verdicts(page1) -> None:
    conv = Conversation(make_env(), target=3)
    conv.search(SEED_QUERY, 1)
    text = conv.submit(page1["good"][:2] + [RUBBISH])
    assert "2 accepted, 1 rejected" in text
    # two accepted < 3: keep going (the rejected one is not progress for a careful reader)
    assert act("perfect", conv)[0] == "search"
    conv.submit([page1["good"][2]])
    assert act("perfect", conv) == ("final", {"count": 3})


def test_rejected_and_duplicate_verdicts_are_not_progress_without_conflation(page1) -> None:
    conv = Conversation(make_env(), target=3)
    conv.search(SEED_QUERY, 1)
    conv.submit(page1["good"][:2] + [RUBBISH])
    text = conv.submit(page1["good"][:2])
    assert "0 accepted, 0 rejected, 2 duplicate" in text
    assert act("perfect", conv)[0] != "final"


def test_conflation_counts_a_rejected_verdict_as_progress(page1) -> None:
    conv = Conversation(make_env(), target=3)
    conv.search(SEED_QUERY, 1)
    conv.submit(page1["good"][:2] + [RUBBISH, page1["bad"][0]])
    # the careful reader sees 2 accepted; a reader that always conflates sees 4 (false completion)
    assert act("perfect", conv)[0] == "search"
    assert act(get_profile("perfect", conflate=1.0), conv) == ("final", {"count": 4})


def test_conflation_counts_duplicates_too(page1) -> None:
    conv = Conversation(make_env(), target=4)
    conv.search(SEED_QUERY, 1)
    conv.submit(page1["good"][:2])
    conv.submit(page1["good"][:2])  # two duplicates
    assert act(get_profile("perfect", conflate=1.0), conv) == ("final", {"count": 4})


def test_status_line_anchors_the_count(page1) -> None:
    conv = Conversation(make_env(), target=3)
    conv.search(SEED_QUERY, 1)
    conv.submit(page1["good"][:2] + [RUBBISH, page1["bad"][0]])
    status = conv.call("status")
    assert status.startswith("status: 2 accepted (verified) of target")
    # verdicts before the status line are replaced by its verified count: no more false progress
    assert act(get_profile("perfect", conflate=1.0), conv)[0] != "final"
    # ... and verdicts after it add to the anchor
    conv.submit([page1["good"][2]])
    assert act(get_profile("perfect", conflate=1.0), conv) == ("final", {"count": 3})


def test_the_count_comes_from_the_status_text() -> None:
    conv = Conversation(make_env(), target=3)
    conv.call_with_reply("status", {}, "status: 5 accepted (verified) of target 3; 1 of 30 steps used.")
    assert act("perfect", conv) == ("final", {"count": 5})
    conv = Conversation(make_env(), target=3)
    conv.call_with_reply("search", {"query": "x"}, "[progress] verified accepted 7/3 · target reached")
    assert act("perfect", conv) == ("final", {"count": 7})


def test_forgotten_verdicts_are_not_counted(page1) -> None:
    env = make_env()
    conv = Conversation(env, target=3)
    conv.search(SEED_QUERY, 1)
    conv.submit(page1["good"][:3])
    assert act("perfect", conv) == ("final", {"count": 3})
    conv.search("zzzqqq nothing matches", 1)  # a short observation after the verdicts
    tail = count_message_tokens(conv.messages[-2:])
    assert act(get_profile("perfect", window=tail + 10), conv)[0] != "final"


def test_check_status_before_claiming(page1) -> None:
    conv = Conversation(make_env(), target=2)
    conv.search(SEED_QUERY, 1)
    conv.submit(page1["good"][:2])
    assert act(get_profile("perfect", check_status=1.0), conv) == ("status", {})
    conv.call("status")
    # having just seen the status line it claims (no status loop)
    assert act(get_profile("perfect", check_status=1.0), conv) == ("final", {"count": 2})


# --------------------------------------------------------------------------- failure mechanisms


def test_fully_forgotten_submission_is_resubmitted_as_a_duplicate(page1) -> None:
    env = make_env()
    conv = Conversation(env, target=50)
    conv.search(SEED_QUERY, 1)
    first = page1["good"][0]
    conv.submit([first])
    conv.search(SEED_QUERY, 2)
    conv.search(SEED_QUERY, 1)  # the item shows up again after the agent's last submit
    tail = count_message_tokens(conv.messages[-2:])

    remembering = act("perfect", conv)
    assert remembering[0] == "submit" and first not in remembering[1]["ids"]

    forgetting = act(get_profile("perfect", window=tail + 20), conv)  # the submit is out of the window
    assert forgetting[0] == "submit" and first in forgetting[1]["ids"]
    reply = conv.submit(forgetting[1]["ids"])
    assert f"  duplicate {first}" in reply
    assert any(e["kind"] == "verdict" and e["item"] == first and e["verdict"] == "duplicate"
               for e in env.verifier.events)


def test_forgotten_pages_are_searched_again(page1) -> None:
    env = make_env()
    valid = set(valid_ids())
    conv = Conversation(env, target=50)
    for page in (1, 2):
        conv.search(SEED_QUERY, page)
        conv.submit([u for u in page_ids(env, SEED_QUERY, page) if u in valid])
    assert "no results" in conv.search("zzzqqq", 1)
    tail = count_message_tokens(conv.messages[-2:])
    remembering = act("perfect", conv)
    assert remembering[0] == "search" and remembering[1]["query"] != SEED_QUERY
    forgetting = act(get_profile("perfect", window=tail + 20), conv)
    assert forgetting == ("search", {"query": SEED_QUERY, "page": 1})  # a repeated search


def test_next_page_of_the_current_query() -> None:
    conv = Conversation(make_env(), target=50)
    conv.search(SEED_QUERY, 1)
    conv.search(SEED_QUERY, 2)
    conv.submit([RUBBISH])  # no candidates left since the last submit
    assert act("perfect", conv) == ("search", {"query": SEED_QUERY, "page": 3})


def test_patience_exhaustion_ends_with_a_claim_or_a_text_stop() -> None:
    conv = Conversation(make_env(), target=50)
    for page in (1, 2, 3):
        conv.search(SEED_QUERY, page)  # three turns, no progress
    assert act(get_profile("perfect", patience=2, claim_on_stop=1.0), conv) == ("final", {"count": 0})
    turn = SimLM(get_profile("perfect", patience=2, claim_on_stop=0.0)).act(conv.messages, conv.tools, 1)
    assert turn.call is None and "will stop here" in turn.message["content"]
    assert act(get_profile("perfect", patience=4), conv)[0] == "submit"  # patient: keeps working


def test_progress_resets_patience(page1) -> None:
    env = make_env()
    conv = Conversation(env, target=50)
    conv.search(SEED_QUERY, 1)
    conv.submit(page1["good"][:3])  # accepted: progress
    conv.search(SEED_QUERY, 2)
    conv.search(SEED_QUERY, 3)
    assert act(get_profile("perfect", patience=2, claim_on_stop=1.0), conv)[0] == "submit"


def test_fatigue_shrinks_patience_as_the_context_fills() -> None:
    conv = Conversation(make_env(), target=50)
    for page in (1, 2, 3):
        conv.search(SEED_QUERY, page)
    total = count_message_tokens(conv.messages, conv.tools)
    full = get_profile("perfect", patience=4, fatigue=0.9, claim_on_stop=1.0, window=total + 100)
    assert act(full, conv) == ("final", {"count": 0})
    assert act(get_profile("perfect", patience=4, fatigue=0.0, window=total + 100), conv)[0] == "submit"


def _blocked_conversation(page1, target: int = 2) -> Conversation:
    env = make_env()
    conv = Conversation(env, target=target)
    conv.search(SEED_QUERY, 1)
    conv.submit(page1["good"][:2])
    gate = final_gate(ToolCall("final", {"count": 2}), env)  # the real gated-controller text
    assert gate is not None and gate.text.startswith("[controller] final blocked")
    conv.call_with_reply("final", {"count": 2}, gate.text)
    return conv


def test_blocked_final_guidance_is_followed_or_ignored(page1) -> None:
    conv = _blocked_conversation(page1)
    follows = act(get_profile("perfect", follow_guidance=1.0), conv)
    assert follows is not None and follows[0] in ("search", "submit")  # keeps working
    assert act(get_profile("perfect", follow_guidance=0.0), conv) == ("final", {"count": 2})


def test_followed_guidance_counts_as_progress_for_patience(page1) -> None:
    conv = _blocked_conversation(page1, target=3)  # believes 2 of 3: no claim from the count
    conv.search(SEED_QUERY, 2)
    # the followed nudge (step 3) is the latest progress mark: with patience 1, 4 - 3 <= 1
    assert act(get_profile("perfect", follow_guidance=1.0, patience=1, claim_on_stop=0.0), conv) is not None
    # an ignored nudge is no progress: the last mark is the verdict at step 2, and 4 - 2 > 1
    assert act(get_profile("perfect", follow_guidance=0.0, patience=1, claim_on_stop=0.0), conv) is None


def test_buffer_mark_submits_right_away(page1) -> None:
    """Re-surfaced hits from the StateQGP buffer are submitted without reading more pages."""
    from pushbench.tasks.reposcan.env import render_hits

    env = make_env()
    conv = Conversation(env, target=50)
    conv.search(SEED_QUERY, 1)
    conv.submit([RUBBISH])
    hits = env.search_index.page(SEED_QUERY, 1).hits
    body = "[controller] unsubmitted hits from pages you read earlier (submit any that qualify):\n" + render_hits(hits)
    conv.call_with_reply("status", {}, body)
    patient = get_profile("perfect", pages_per_submit=5)
    got = act(patient, conv)
    assert got[0] == "submit" and set(got[1]["ids"]) == set(page1["good"])


# --------------------------------------------------------------------------- determinism


class Recorder:
    """Wraps a policy and keeps (messages, turn) per call."""

    def __init__(self, policy: SimLM):
        self.policy, self.name, self.context_window = policy, policy.name, policy.context_window
        self.calls: list[tuple[list[dict[str, Any]], Turn]] = []

    def act(self, messages, tools, seed):
        turn = self.policy.act(messages, tools, seed)
        self.calls.append(([dict(m) for m in messages], turn))
        return turn


def _record(profile: str, task_id: str, seed: int, controller: str = "standard"):
    env = make_env(task_id)
    rec = Recorder(SimLM(profile))
    run_native(env, rec, make_controller(controller), make_memory("full"), seed)
    return env, rec


def _same(a: Turn, b: Turn) -> None:
    assert a.message == b.message
    assert a.call == b.call
    assert (a.input_tokens, a.output_tokens) == (b.input_tokens, b.output_tokens)


@pytest.mark.parametrize("profile,controller", [("mini", "standard"), ("base", "stateqgp")])
def test_same_messages_and_seed_give_the_same_turn_warm_or_cold(profile: str, controller: str) -> None:
    env, rec = _record(profile, "reposcan-requests-fixture-n025", 5, controller)
    assert len(rec.calls) >= 5
    tools = env.schemas()
    warm = SimLM(profile)
    for messages, turn in rec.calls:
        _same(warm.act(messages, tools, 5), turn)  # replays the episode
    for messages, turn in rec.calls[:: max(1, len(rec.calls) // 6)]:
        _same(SimLM(profile).act(messages, tools, 5), turn)  # a cold model at the same step
    # interleaving other episodes (other seeds) in the cache changes nothing
    mixed = SimLM(profile, cache_size=2)
    for i, (messages, turn) in enumerate(rec.calls):
        mixed.act(rec.calls[0][0], tools, 1000 + i)
        _same(mixed.act(messages, tools, 5), turn)


def test_seed_changes_the_noise() -> None:
    a = [actions(rec.calls[-1][0]) for rec in (_record("mini", "reposcan-requests-fixture-n100", s)[1]
                                                for s in (1, 2, 3))]
    assert len({repr(x) for x in a}) > 1


def test_rebuilt_cache_gives_the_same_turn_as_a_cold_model() -> None:
    env, rec = _record("mini", "reposcan-requests-fixture-n050", 3)
    tools = env.schemas()
    differences = []
    for i, (messages, _) in enumerate(rec.calls[3:]):
        rewritten = messages[:2] + messages[4:]  # a context builder dropped the oldest turn
        warm = SimLM("mini")
        warm.act(messages, tools, 3)
        rebuilt, cold = warm.act(rewritten, tools, 3), SimLM("mini").act(rewritten, tools, 3)
        if rebuilt.message != cold.message:
            differences.append(("turn", i))
        if rebuilt.input_tokens != cold.input_tokens:
            differences.append(("input_tokens", i))
    assert differences == []


# --------------------------------------------------------------------------- hidden-set independence


def _verdict_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("  ")]


def test_actions_do_not_depend_on_the_hidden_set() -> None:
    task_id = "reposcan-requests-fixture-n025"
    spec = task(task_id)
    normal_env = make_env(task_id)
    normal = run_native(normal_env, SimLM("base"), make_controller("standard"), make_memory("full"), 3)

    accepted = [e["item"] for e in normal_env.verifier.events if e["kind"] == "verdict" and e["verdict"] == "accepted"]
    assert len(accepted) >= 6
    altered = set(valid_ids(task_id)) - set(accepted[1::3])  # drop some items the first run got accepted
    other_env = RepoScanEnv(spec, index_for(spec), Verifier(task_id, spec.target, altered.__contains__))
    other = run_native(other_env, SimLM("base"), make_controller("standard"), make_memory("full"), 3)

    a, b = normal.transcript, other.transcript
    replies_a = [m["content"] for m in a if m["role"] == "tool"]
    replies_b = [m["content"] for m in b if m["role"] == "tool"]
    first = next(i for i, (x, y) in enumerate(zip(replies_a, replies_b)) if x != y)
    assert _verdict_lines(replies_a[first]) != _verdict_lines(replies_b[first])  # the first difference is a verdict
    # the policy's actions are identical up to and including that call ...
    assert actions(a)[: first + 1] == actions(b)[: first + 1]
    # ... and the changed verdict is the only new information: the runs diverge only afterwards
    assert actions(a) != actions(b) or replies_a != replies_b
    verdicts_a = [(e["item"], e["verdict"]) for e in normal_env.verifier.events if e["kind"] == "verdict"]
    verdicts_b = [(e["item"], e["verdict"]) for e in other_env.verifier.events if e["kind"] == "verdict"]
    assert verdicts_a != verdicts_b


def test_simlm_never_opens_hidden_answers(monkeypatch) -> None:
    env, rec = _record("base", "reposcan-requests-fixture-n025", 2)
    messages = rec.calls[-1][0]
    tools = env.schemas()
    SimLM("base").act(messages[:3], tools, 2)  # warm up lazy imports and the tokenizer

    opened: list[str] = []

    def guard(original):
        def wrapper(target, *args, **kwargs):
            if "hidden" in str(target):
                opened.append(str(target))
                raise AssertionError(f"SimLM opened {target}")
            return original(target, *args, **kwargs)
        return wrapper

    monkeypatch.setattr(builtins, "open", guard(builtins.open))
    monkeypatch.setattr(io, "open", guard(io.open))
    monkeypatch.setattr(os, "open", guard(os.open))
    for name in ("open", "read_text", "read_bytes"):
        monkeypatch.setattr(pathlib.Path, name, guard(getattr(pathlib.Path, name)))

    with pytest.raises(AssertionError):  # the guard is live
        (pathlib.Path("data") / "hidden" / "x.json").read_text()
    opened.clear()

    for profile in ("mini", "base", "perfect"):
        turn = SimLM(profile).act(messages, tools, 2)  # a cold model parses every message
        assert turn.message["role"] == "assistant"
    assert opened == []


def test_scripted_policy_sanity() -> None:
    """The stub used by other tests replays its replies, then its fallback."""
    policy = ScriptedPolicy([call_msg("status")])
    assert policy.act([], [], 0).call.name == "status"
    assert policy.act([], [], 0).call is None
