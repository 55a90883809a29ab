"""Prices a later observation supersedes (the long split's mid-episode changes, ``changes.py``), as the
SimLM planning mind reads and uses them: from messages only, through recall like any fact.

A product's first observation fixes its line (``items``); a later direct observation (a search row,
its page, a ``check`` line) that shows another price is a ``PRICE`` fact at its own position, and
the planner prices a product at the last such fact it recalls, else at its line: the latest
observation it recalls wins, and one it forgot leaves it with the stale price. A quotation (a
memory's view, a summary) carries no time, so it never supersedes what the tools said. Where prices
never change (the short split) no ``PRICE`` fact is ever made, so nothing else moves.

Before submitting, a cart whose prices were read more than ``STALE_AFTER`` tokens ago is checked
(``check`` shows every line at today's price); when a raised price leaves the cart over budget with
the best coupons on, the product goes back if a fitting one it has seen now costs less.
"""

from __future__ import annotations

import re
from typing import Any

from pushbench.tasks.planning.texts import parse_money

PRICE = 9  # a fact kind beside the mind's REQ..ROUTE (0-8): key = product id, aux = cents
STALE_AFTER = 20_000  # tokens of context after which a price read is old enough to check again before submitting
# (the short split's transcripts stay under 18.5k tokens, so it never fires there; a long cart is read from ~4k on)
CHECK_LINE = re.compile(r"^  \d+ x (P\d+) \(.+?\) at \$([\d.]+) = ")


def observe(items: dict[str, dict[str, Any]], pid: str, groups: tuple, line: str, quoted: bool,
            facts: Any, offset: int, step: int, state: dict[str, Any]) -> dict[str, Any]:
    """The entry to store for a product line (its first price kept), recording a direct observation."""
    known = items.get(pid)
    if known is not None:
        if not quoted:
            record(facts, offset, step, state, pid, parse_money(groups[5]))
        groups = (*groups[:5], known["groups"][5], *groups[6:])
    return {"type": "product", "groups": groups, "line": line}


def record(facts: Any, offset: int, step: int, state: dict[str, Any], pid: str, cents: int) -> None:
    """A direct observation of a price: a PRICE fact when it differs from the first or the last one."""
    last = state.setdefault("prices", {})
    first = parse_money(state["items"][pid]["groups"][5])
    if cents != first or cents != last.get(pid, first):
        facts.add(PRICE, offset, step, pid, cents)
    last[pid] = cents


def check_line(ln: str, facts: Any, offset: int, step: int, state: dict[str, Any]) -> None:
    """A ``check`` line of a product it knows: a price observation."""
    if (m := CHECK_LINE.match(ln)) and m.group(1) in state.get("items", {}):
        record(facts, offset, step, state, m.group(1), parse_money(m.group(2)))


def latest(seen: list[tuple[int, str, int, int]]) -> dict[str, int]:
    """Each product's price by the last PRICE fact recalled (context order: the latest wins)."""
    return {key: aux for kind, key, aux, _ in seen if kind == PRICE}


def needs_recheck(planner: Any, cart: dict[str, int]) -> bool:
    """A cart holding a price read more than STALE_AFTER tokens of context ago, not checked since its
    last edit."""
    facts, reader = planner.mind.reader.facts, planner.mind.reader
    kinds, keys, offsets = facts.array("kind"), facts.array("key"), facts.array("offset")
    read: dict[str, int] = {}
    for kind, key, offset in zip(kinds.tolist(), keys.tolist(), offsets.tolist()):
        name = facts.names[key]
        if kind in (1, PRICE) and name in cart:  # ITEM or PRICE: its latest reading
            read[name] = offset
    return bool(read) and not planner.checked and reader.total_tokens - min(read.values()) > STALE_AFTER


def swap(planner: Any, products: dict[str, Any], cart: dict[str, int]) -> tuple[str, dict[str, Any], str] | None:
    """Over budget with the best coupons on: put back a held product whose price a later observation
    raised, when a fitting product it has seen costs less now."""
    raised = latest(planner.seen)
    for pid in sorted(cart):
        p = products.get(pid)
        if p is None or pid not in raised:
            continue
        want = planner._wants(p["category"], cart, products)
        if any(q["category"] == p["category"] and q["id"] != pid and q["price"] < p["price"] and planner._fits(q, want)
               for q in products.values()):
            return "remove", {"item_id": pid}, want["serves"]
    return None
