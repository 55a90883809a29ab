"""Texts about a deliverable: what ``check`` shows the agent (totals and commonsense problems, never
the requirements' verdicts) and what the verifier reports (per requirement, by id)."""

from __future__ import annotations

from typing import Any

from pushbench.tasks.planning import rules
from pushbench.tasks.planning.texts import clock, money
from pushbench.tasks.planning.world import World, delivery_date

CHECK_OK = "check: no commonsense problem found."


def _shop_problems(world: World, s: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    out = []
    for p, q in rules.cart_lines(world, plan):
        if q > p.stock:
            out.append(f"{p.id} has {p.stock} in stock, the cart holds {q}")
    cats = [p.category for p, _ in rules.cart_lines(world, plan)]
    for c in sorted(set(cats)):
        if cats.count(c) > 1:
            out.append(f"the cart holds {cats.count(c)} different {c} products; the task wants one")
    for c in plan["coupons"]:
        if (why := rules.coupon_problem(world, plan, c)) is not None:
            out.append(why)
    return out


def _shop_check(world: World, s: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    lines = ["check: cart"]
    for p, q in rules.cart_lines(world, plan):
        lines.append(f"  {q} x {p.id} ({p.category}, {p.brand}) at {money(p.price)} = {money(p.price * q)} | "
                     f"arrives {delivery_date(world.today, p.origin, s['city'])}")
    for c in plan["coupons"]:
        lines.append(f"  coupon {c}: -{money(rules.coupon_discount(world, plan, c))}")
    lines.append(f"  subtotal {money(rules.shop_subtotal(world, plan))} | total {money(rules.shop_total(world, plan))}")
    return lines + [f"problem: {p}" for p in _shop_problems(world, s, plan)]


def _trip_problems(world: World, s: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    names = {"transport": "the trip needs one transport out on day 1 and one back on the last day, on the trip's dates",
             "hotel_nights": f"every night (days 1-{s['days'] - 1}) needs one hotel with a free room",
             "opening_hours": "a restaurant or attraction is visited outside its opening hours",
             "timeline": "activities overlap, leave too little route time, or crowd the arrival or departure "
                         f"(keep {rules.TRANSFER} minutes)"}
    sense = {k: f(world, s, plan) for k, f in rules.TRAVEL_COMMONSENSE.items() if k != "exists"}
    if s["days"] == 1:
        sense.pop("hotel_nights")
    return [names[k] for k, ok in sense.items() if not ok]


def _trip_check(world: World, s: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    lines = ["check: plan"]
    for ln, x in sorted(rules.trip_lines(world, plan), key=lambda t: (t[0]["day"], t[0]["start"] or 0, t[0]["item"])):
        if hasattr(x, "mode"):
            what = f"{x.mode} {x.origin} -> {x.destination} {clock(x.depart)}-{clock(x.arrive)}"
        elif hasattr(x, "free"):
            what = f"hotel {x.name} (night)"
        else:
            what = f"{x.kind} {x.name} {clock(ln['start'])}-{clock(ln['start'] + x.duration)} ({x.district})"
        lines.append(f"  day {ln['day']}: {x.id} {what} | {money(x.price)}")
    lines.append(f"  total {money(rules.trip_cost(world, plan))}")
    return lines + [f"problem: {p}" for p in _trip_problems(world, s, plan)]


def check_text(world: World, s: dict[str, Any], plan: dict[str, Any]) -> str:
    if rules.is_empty(s, plan):
        return f"check: the {'cart' if s['kind'] == 'shopping' else 'plan'} is empty."
    lines = _shop_check(world, s, plan) if s["kind"] == "shopping" else _trip_check(world, s, plan)
    if not any(x.startswith("problem:") for x in lines):
        lines.append(CHECK_OK)
    return "\n".join(lines)


def verdict_text(verdict: dict[str, Any], requirements: list[dict[str, Any]]) -> str:
    """The verifier's report of one deliverable (for logs, docs and the README)."""
    if not verdict["delivered"]:
        return "verdict: FAIL (no deliverable)"
    texts = {r["id"]: r.get("text", r["kind"]) for r in requirements}
    lines = [f"verdict: {'PASS' if verdict['success'] else 'FAIL'} ({verdict['reason']})"]
    lines += [f"  {rid}: {'pass' if ok else 'FAIL'} - {texts.get(rid, '')}" for rid, ok in verdict["requirements"].items()]
    lines += [f"  commonsense {k}: {'pass' if ok else 'FAIL'}" for k, ok in verdict["commonsense"].items()]
    return "\n".join(lines)
