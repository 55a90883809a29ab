"""Evidence rules of the ACG-evaluation families (planning, corpus, sweissues) on hand-built
histories and views: a view holding the evidence counts it, one lacking it does not, and a
paraphrase gets no credit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pushbench.log.models import EpisodeRow, Trace
from pushbench.log.rows import row_line
from pushbench.log.traces import write_trace
from pushbench.replay.recall import run_recall
from pushbench.replay.recall.evidence import Seen, evidence_rule, view_text
from pushbench.tasks.base import TaskSpec

HEADPHONES = ("P0171 | Granite Harbor headphones | headphones | brand Granite | colour white | size one size | "
              "$53.34 | rating 3.2 (2194 reviews) | stock 24 | ships from Lyon")
OTHER = ("P0130 | Granite Sable headphones | headphones | brand Granite | colour white | size one size | "
         "$92.54 | rating 3.4 (146 reviews) | stock 13 | ships from Bergen")
COUPON = "C03 | 10% off headphones | min spend $100.00 on headphones | stackable"
SHOP = [Seen(1, "search", f"search products: page 1 of 1 (2 matches)\n{HEADPHONES}\n{OTHER}"),
        Seen(2, "coupons", f"coupons:\n{COUPON}"),
        Seen(3, "add", "cart: added 3 x P0171; the cart holds 3 x P0171."),
        Seen(4, "add", "cart: added 1 x P0130; the cart holds 1 x P0130."),
        Seen(5, "remove", "cart: removed P0130."),
        Seen(6, "apply_coupon", "cart: coupon C03 applied; the total is now $144.02."),
        Seen(7, "add", "REJECTED: P0999 has 0 in stock; the cart would hold 1.")]


def test_planning_submit_needs_the_line_of_each_item_in_the_cart() -> None:
    rule = evidence_rule("planning")
    assert rule.needed("check", {}, SHOP) is None  # not a decision
    needed = rule.needed("submit", {}, SHOP)
    assert [n.unit for n in needed] == ["item:P0171", "item:C03"]  # P0130 was removed; P0999 never added
    item, coupon = needed
    assert item.present(f"x\n{HEADPHONES}\ny")
    assert coupon.present(view_text([{"role": "tool", "content": f"| {COUPON}"}]))  # quoted by a memory search
    assert not item.present(OTHER) and not item.present(HEADPHONES[:60])  # another item; a cut line
    assert not item.present("cart: added 3 x P0171; the cart holds 3 x P0171.")  # the edit shows no facts
    assert not item.present("I added three white Granite headphones (P0171, $53.34, ships from Lyon).")


def test_planning_trip_lines_follow_adds_and_removes_by_day() -> None:
    hotel = "H012 | Hotel Mira | Gdansk | district Harbour | $80.00 per night | rating 4.1"
    nights = "  free nights: 2026-03-11"
    history = [Seen(1, "search", f"search hotels: page 1 of 1 (1 matches)\n{hotel}\n{nights}"),
               Seen(2, "details", "F1437 | flight Turin -> Gdansk | 2026-03-11 09:50-12:06 | $160.00"),
               Seen(3, "add", "plan: added H012 on day 1."), Seen(4, "add", "plan: added F1437 on day 1."),
               Seen(5, "add", "plan: added H012 on day 2."), Seen(6, "remove", "plan: removed H012 from day 1."),
               Seen(7, "add", "plan: added V054 on day 2 at 15:00.")]  # V054 never shown: needs nothing
    needed = evidence_rule("planning").needed("submit", {}, history)
    assert [n.unit for n in needed] == ["item:F1437", "item:H012"]  # H012 is still in the plan on day 2
    stay = needed[1]
    assert stay.present(f"{hotel}\n{nights}")
    assert not stay.present(hotel)  # a hotel's line without the free nights it was shown with
    assert evidence_rule("planning").needed("submit", {}, history[:2]) == []  # an empty plan needs nothing


API = "requests.sessions.Session.request"
API_TITLE = f"{API} (method docstring)"
MODULE_TITLE = "requests.sessions (module docstring)"
OBJECTIVE = ("Find the one Python API object ...\n"
             '- clue:1: a docstring document of it uses the words "prepared" and "cookies"\n'
             '- clue:2: it is defined in the module whose docstring begins "requests.sessions This module provides"\n'
             '- clue:3: its signature has a parameter named "hooks"\n')
API_PAGE = (f"document d0000000001 | {API_TITLE} | page 1 of 1\n"
            "request(self, method, url, params=None, hooks=None)\nConstructs a prepared request, sends it, "
            "merges cookies.\nmodule: requests.sessions")
MODULE_PAGE = (f"document d0000000002 | {MODULE_TITLE} | page 1 of 1\n"
               "requests.sessions This module provides a Session object to manage settings.")
API_HIT = f'search "prepared cookies docstring": top 2 documents\n[1] d0000000001 | {API_TITLE}\n    request(self, ...'
CORPUS = [Seen(1, "search", API_HIT), Seen(2, "get_document", API_PAGE), Seen(3, "get_document", MODULE_PAGE),
          Seen(4, "get_document", "document d0000000003 | requests docs: Quickstart | page 1 of 1\nUse sessions.")]


def test_a_corpus_answer_needs_the_entity_title_and_each_clue_page() -> None:
    rule = evidence_rule("corpus")
    assert rule.needed("search", {"query": "x"}, CORPUS, OBJECTIVE) is None
    needed = {n.unit: n for n in rule.needed("answer", {"text": " Requests.Sessions.Session.request() ",
                                                        "confidence": 0.9}, CORPUS, OBJECTIVE)}
    assert list(needed) == [f"entity:{API}", "clue:1", "clue:2", "clue:3"]
    entity, terms, module, param = needed.values()
    assert entity.present(f"[4] d0000000001 | {API_TITLE}") and entity.present(API_PAGE)
    assert terms.present(API_PAGE) and param.present(API_PAGE) and module.present(MODULE_PAGE)
    assert not terms.present(API_HIT)  # the search hit is not the opened page
    assert not terms.present(API_PAGE.split("\n")[0])  # the header without the page's text
    assert not module.present(API_PAGE) and not entity.present(MODULE_PAGE)
    assert not any(n.present(f"Read {API}: its docstring mentions prepared requests and cookies; "
                             "it takes hooks.") for n in needed.values())


def test_a_corpus_answer_needs_only_what_showed_it() -> None:
    rule = evidence_rule("corpus")
    wrong = rule.needed("answer", {"text": "requests.get", "confidence": 0.2}, CORPUS, OBJECTIVE)
    assert wrong == []  # nothing shown names requests.get or supports a clue for it
    release = ("Find the one release ...\n- clue:1: one of its changelog items uses the words \"chained\" and "
               "\"exceptions\"\n- clue:2: one of its changelog items names \"tmp_path\" in code\n")
    item = ("document deeee1d8638 | pytest 2.9.1 changelog (released 2016-03-17), item 7 | page 1 of 1\n"
            "Fix (:issue:`138`): better reporting for python 3.3+ chained exceptions")
    hit = ('search "chained exceptions changelog": top 1 documents\n'
           "[1] deeee1d8638 | pytest 2.9.1 changelog (released 2016-03-17), item 7\n    Fix ...")
    needed = rule.needed("answer", {"text": "pytest v2.9.1", "confidence": 0.5},
                         [Seen(1, "search", hit), Seen(2, "get_document", item)], release)
    assert [n.unit for n in needed] == ["entity:pytest 2.9.1", "clue:1"]  # no page showed clue 2
    assert needed[1].present(item) and not needed[1].present(hit)
    assert rule.needed("answer", {"text": "  "}, CORPUS, OBJECTIVE) == [] and rule.needed("answer", "x", CORPUS) == []


def test_a_sweissues_submit_needs_the_issue_checker_result() -> None:
    rule = evidence_rule("sweissues")
    history = [Seen(1, "run_tests", "checker I01: FAIL\nthe issue's tests fail\n....F.."),
               Seen(2, "run_tests", "checker I01: PASS\nall of the issue's tests pass\n.......")]
    (needed,) = rule.needed("submit", {"unit": "I01"}, history)
    assert needed.unit == "checker:I01"
    assert needed.present("checker I01: PASS\nall of the issue's tests pass")
    assert not needed.present("checker I01: FAIL\nthe issue's tests fail")
    assert not needed.present("The tests of I01 passed after the edit.")


class _NoRequirements:
    """An environment the replay can bind (no requirements, no origins, no tool schemas)."""

    tools: dict[str, Any] = {}

    def requirements(self) -> list[Any]:
        return []

    def action_origins(self, tool: str, arguments: Any) -> tuple[str, ...]:
        return ()

    def end(self, reason: str) -> None:
        pass


def _turn(i: int, name: str, args: dict[str, Any], reply: str) -> list[dict[str, Any]]:
    call = {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    return [{"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{i}", "content": reply}]


def test_a_planning_decision_through_the_replay(tmp_path: Path) -> None:
    """The search is early, the submit late; full keeps the item's line only with room."""
    filler = "check: cart\n" + "\n".join(f"  note {i}: nothing to report about the cart yet" for i in range(40))
    messages = [*_turn(0, "search", {"catalog": "products"}, SHOP[0].text),
                *_turn(1, "add", {"item_id": "P0171", "quantity": 3}, SHOP[2].text),
                *[m for i in range(2, 8) for m in _turn(i, "check", {}, filler)],
                *_turn(8, "submit", {}, "submit: your cart was submitted; the episode ends.")]
    episode_id = "planning-toy|standard|summary|stub/scripted|native|s0"
    write_trace(tmp_path / "traces", Trace(episode_id, [], objective="Shopping: buy 3 headphones.", messages=messages))
    # recorded with a memory the stage does not replay
    row = EpisodeRow(episode_id, "planning", "planning-toy", "standard", "summary", "stub/scripted", "native", 0, 1, 20,
                     9, 0, 0)
    (tmp_path / "episodes.jsonl").write_text(row_line(row), encoding="utf-8")
    spec = TaskSpec(task_id="planning-toy", family="planning", objective="Shopping: buy 3 headphones.", target=1,
                    budget=20, tools=["search", "add", "check", "submit"], oracle_steps=3, settings={})
    kwargs: dict[str, Any] = {"tasks": {spec.task_id: spec}, "make_env": lambda _t: _NoRequirements()}
    wide = run_recall(tmp_path, ["full", "acg"], 50_000, **kwargs)
    narrow = run_recall(tmp_path, ["full"], 1200, **kwargs)
    assert [(d.memory, d.action, d.needed, d.recalled) for d in wide.decisions] == \
        [("full", 9, ("item:P0171",), ("item:P0171",)), ("acg", 9, ("item:P0171",), ("item:P0171",))]
    assert [(d.action, d.needed, d.recalled) for d in narrow.decisions] == [(9, ("item:P0171",), ())]
