"""SimLM on the planning family: it knows a product, coupon, transport, hotel or venue only from a
tool result it recalls, and a requirement only from the task text it recalls.

Every step it rebuilds its beliefs from recalled facts (bounded attention, ``attention.py``): the
requirements (each a fact at the objective's position: a forgotten one is no longer planned for),
the items search and details showed, the searches it ran, the edits the tools confirmed (a
forgotten add is added again; a memory's quoted view adds items, never edits, so nothing counts
twice) and the checks it recalls (a check after its last edit counts as checked). Then it plans
the cheapest deliverable that meets every requirement it recalls, searches for what it lacks,
edits the cart or plan, applies coupons while its believed total (sums of recalled prices with
the profile's arithmetic noise) is over a recalled budget, checks with the profile's
``check_status`` and submits when it believes every recalled requirement is met. Calls name the
requirement they serve (the ``requirement`` argument) with the profile's ``follow_guidance``; a
controller's repeat refusal (``guidance.REPEATED``) is followed with the same probability.

In the long split (``long.py``) the user profile states requirements (``- req:K: ...`` lines of
``user_info``), read as requirements where that result sits, and the objective names their ids
only: an id it does not recall the text of sends it to ``user_info`` while it recalls no profile.
A product listed briefly (no stock, no shipping city) is looked up with ``details`` before it is added.
A price a later direct observation contradicts (the long split's mid-episode change) is a fact of its
own, and the latest one recalled wins; a cart read long ago is checked before submitting and repaired
when a raised price breaks the budget (``superseded.py``).

Memories' outputs are read where they sit, as quotations (items, user profile and routes only, never
edits, so nothing counts twice): a quoted block of a user message (ACG's decision view, the rolling
summary), a LangGraph store's retrieved tool results, quoted lines in the system message (its own
memgpt ``progress`` block) and in a memory tool's reply (archival passages, conversation search).
With memgpt's tools offered it keeps notes of its own (``notes.py``).
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from pushbench.guidance import REPEATED, quoted_blocks, retrieved_items
from pushbench.policies.base import Turn, text_message, tool_call_message, turn_from_message
from pushbench.policies.sim.attention import recalled_mask, stable_uniform
from pushbench.policies.sim.memory import ContextReader, Mind
from pushbench.policies.sim.memory_skills import MEMORY_TOOLS, offered
from pushbench.tasks.planning import notes, render, superseded
from pushbench.tasks.planning.planner import ShopPlanner, TripPlanner, _call_key, call_key
from pushbench.tasks.planning.texts import POINTER, REQUIREMENT_LINE, parse_money, parse_requirement

REQ, ITEM, QUERY, ADDED, REMOVED, COUPON_ON, COUPON_OFF, CHECKED, ROUTE = range(9)
_TRIP = re.compile(r"^Plan a (\d+)-day trip from (\w+) to (\w+), (\S+) to (\S+),")
_ADD_CART = re.compile(r"^cart: added (\d+) x (P\d+)")
_ADD_PLAN = re.compile(r"^plan: added (\w+) on day (\d+)(?: at (\d\d:\d\d))?\.$")
_REMOVED = re.compile(r"^(?:cart|plan): removed (\w+)(?: from day (\d+))?\.$")
_COUPON = re.compile(r"^cart: coupon (C\d+) (applied|removed)")
_ITEM_PATTERNS = {"P": ("product", render.PRODUCT), "C": ("coupon", render.COUPON), "F": ("transport", render.TRANSPORT),
                  "T": ("transport", render.TRANSPORT), "H": ("hotel", render.HOTEL), "V": ("venue", render.VENUE)}


class PlanningMind(Mind):
    def _parse(self, reader: ContextReader, message: dict[str, Any], offset: int, step: int) -> None:
        role, facts, state = message.get("role"), reader.facts, reader.state
        content = str(message.get("content") or "")
        if role == "assistant":
            state["memory_reply"] = False
            for call in message.get("tool_calls") or []:
                fn = call.get("function", {})
                if fn.get("name") in MEMORY_TOOLS:
                    state["memory_turns"] = state.get("memory_turns", 0) + 1
                    state["memory_reply"] = True
                else:
                    state["last_call"] = fn
            return
        if role == "system" or (role == "tool" and state.get("memory_reply")):  # core blocks, memory replies
            for block in quoted_blocks(content):
                self._parse_result(reader, block, offset, step, quoted=True)
            return
        if role == "user" and "reqs" not in state:
            state["reqs"] = {}
            for ln in content.splitlines():
                if (m := REQUIREMENT_LINE.match(ln)) and (parsed := parse_requirement(m.group(2))):
                    state["reqs"][m.group(1)] = parsed
                    facts.add(REQ, offset, step, m.group(1))
                elif m and m.group(2) == POINTER:  # stated in the profile (a long task): known once read
                    state.setdefault("profile_ids", []).append(m.group(1))
            trip = _TRIP.match(content)
            state["trip"] = trip.groups() if trip else None
            return
        if role == "user":  # a memory's view: the tool results it quotes or shows again are read as results
            shown = [*quoted_blocks(content), *(item for _, who, item in retrieved_items(content) if who == "tool")]
            for block in shown:
                self._parse_result(reader, block, offset, step, quoted=True)
            return
        if role != "tool":
            return
        self._parse_result(reader, content, offset, step)

    def _parse_result(self, reader: ContextReader, content: str, offset: int, step: int, quoted: bool = False) -> None:
        """Facts of one tool result; a quoted one (no call known) gives items, edits and checks only."""
        facts, state = reader.facts, reader.state
        items: dict[str, dict[str, Any]] = state.setdefault("items", {})
        call = {} if quoted else (state.get("last_call") or {})
        if not quoted and (content.startswith(("search ", "check:", "route ", "user ", "traveller", "coupons:"))
                           or content.startswith(tuple("PCFTHV"))):
            facts.add(QUERY, offset, step, _call_key(call))
        last_hotel = None
        if not quoted and (m := re.match(r"^search \w+: page \d+ of (\d+)", content)):
            args = json.loads(call.get("arguments") or "{}") if isinstance(call.get("arguments"), str) else {}
            if isinstance(args, dict):
                args = {k: v for k, v in args.items() if k not in ("page", "requirement")}
                state.setdefault("pages", {})[call_key("search", {**args, "page": 1})] = int(m.group(1))
        for ln in content.splitlines():
            if not quoted and ln.strip() == REPEATED and stable_uniform(self.seed, "follow", step) < self.profile.follow_guidance:
                facts.add(QUERY, offset, step, _call_key(call))
            head = ln[:1]  # every pattern below starts with a fixed first character
            if head in _ITEM_PATTERNS:
                kind, pattern = _ITEM_PATTERNS[head]
                if m := pattern.match(ln):
                    items[m.group(1)] = superseded.observe(items, m.group(1), m.groups(), ln, quoted, facts, offset,
                                                           step, state) if kind == "product" else \
                        {"type": kind, "groups": m.groups(), "line": ln}
                    facts.add(ITEM, offset, step, m.group(1))
                    last_hotel = m.group(1) if kind == "hotel" else None
                elif head == "P" and (m := render.PRODUCT_BRIEF.match(ln)):  # stock and city: on its page
                    if m.group(1) not in items:
                        items[m.group(1)] = {"type": "product", "groups": (*m.groups(), None, None), "line": ln}
                    elif not quoted:  # a price it may have seen otherwise before (superseded.py)
                        superseded.record(facts, offset, step, state, m.group(1), parse_money(m.group(6)))
                    facts.add(ITEM, offset, step, m.group(1))
            elif head == "-":  # a requirement the profile states (a long task's user_info)
                if (m := REQUIREMENT_LINE.match(ln)) and (parsed := parse_requirement(m.group(2))):
                    state.setdefault("reqs", {})[m.group(1)] = parsed
                    facts.add(REQ, offset, step, m.group(1))
            elif head == " ":
                if not quoted and content.startswith("check:"):  # the cart at today's prices
                    superseded.check_line(ln, facts, offset, step, state)
                if (m := render.FREE.match(ln)) and last_hotel:
                    items[last_hotel]["free"] = [d.strip() for d in m.group(1).split(",") if re.match(r"\d{4}-", d.strip())]
            elif head == "u":
                if m := render.USER.match(ln):
                    state["user_city"] = m.group(2)
                    state["today"] = m.group(3)
                    items["user"] = {"type": "user", "groups": m.groups(), "line": ln}
                    facts.add(ITEM, offset, step, "user")
            elif head == "r":
                if m := render.SHIPPING.match(ln):
                    state.setdefault("shipping", {})[m.group(1)] = int(m.group(3))
                    facts.add(ROUTE, offset, step, m.group(1))
            elif head in ("c", "p") and not quoted:
                self._parse_edit(facts, ln, offset, step)
        if content.startswith("check:") and not quoted:
            facts.add(CHECKED, offset, step, str(len(state.setdefault("checks", []))))
            state["checks"].append(content)
        if content.startswith("REJECTED:") and not quoted:
            rejected = state.setdefault("rejected", [])
            rejected.append(_call_key(call))

    @staticmethod
    def _parse_edit(facts: Any, ln: str, offset: int, step: int) -> None:
        """A cart or plan line of a tool result: an item added or removed, a coupon applied or removed."""
        if m := _ADD_CART.match(ln):
            facts.add(ADDED, offset, step, m.group(2), int(m.group(1)))
        if m := _ADD_PLAN.match(ln):
            facts.add(ADDED, offset, step, f"{m.group(1)}|{m.group(2)}|{m.group(3) or ''}")
        if m := _REMOVED.match(ln):
            facts.add(REMOVED, offset, step, m.group(1) if m.group(2) is None else f"{m.group(1)}|{m.group(2)}")
        if m := _COUPON.match(ln):
            facts.add(COUPON_ON if m.group(2) == "applied" else COUPON_OFF, offset, step, m.group(1))

    # --- beliefs ---------------------------------------------------------------------------------
    def recalled(self, step: int) -> list[tuple[int, str, int, int]]:
        """(kind, key, aux, step) of every recalled fact, in context order."""
        facts = self.reader.facts
        mask = recalled_mask(self.profile, facts.array("offset"), self.reader.total_tokens, self.seed, step)
        kind, key, aux, at = facts.array("kind"), facts.array("key"), facts.array("aux"), facts.array("step")
        return [(int(kind[i]), facts.names[int(key[i])], int(aux[i]), int(at[i])) for i in np.flatnonzero(mask)]

    def noise(self, *parts: object) -> float:
        """Relative error of a sum done in the head (the profile's reader noise as arithmetic slips)."""
        spread = self.profile.false_positive
        return (stable_uniform(self.seed, "sum", *parts) * 2 - 1) * spread

    def cite(self, step: int) -> bool:
        return stable_uniform(self.seed, "cite", step) < self.profile.follow_guidance

    # --- deciding --------------------------------------------------------------------------------
    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        self.reader.update(messages, tools)
        state = self.reader.state
        step = self.reader.assistant_turns - state.get("memory_turns", 0)
        if not state.get("reqs"):
            return Turn(text_message("I cannot tell what the task asks for."), None)
        seen = self.recalled(step)
        planner_cls = TripPlanner if state.get("trip") else ShopPlanner
        action = planner_cls(self, seen, step).next_action()
        if action is None:  # stuck: submit what it has (per claim_on_stop) or stop
            if stable_uniform(self.seed, "claim", step) < self.profile.claim_on_stop:
                return turn_from_message(tool_call_message("submit", {}, f"call_{step}"))
            return Turn(text_message("I could not build a deliverable that meets the requirements."), None)
        name, args, serves = action
        if offered(tools) and (note := notes.memory_turn(self, messages, seen, step, name, args)) is not None:
            return note
        if serves and self.cite(step):
            args = {**args, "requirement": serves}
        return turn_from_message(tool_call_message(name, args, f"call_{step}"))
