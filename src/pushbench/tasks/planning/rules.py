"""What makes a cart or a travel plan right: each requirement kind and each commonsense rule as a
predicate over (world, task settings, plan). The verifier judges a deliverable with these; the
generator uses them to prove its plan satisfies the task and to find the near-miss distractors.

A shopping plan is ``{"cart": {product_id: quantity}, "coupons": [coupon_id, ...]}``; a travel
plan is ``{"lines": [{"day": d, "item": id, "start": minutes or None}, ...]}`` (transport lines
use their timetable, a hotel line's day is its night).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Callable

from pushbench.tasks.planning.texts import TRANSFER
from pushbench.tasks.planning.world import World, delivery_date, route_minutes

Rule = Callable[[World, dict[str, Any], dict[str, Any], dict[str, Any]], bool]


class Judged(dict[str, Any]):
    """The plan ``judge`` applies every rule to, with its lines read once for all of them (a
    generator judges many thousands of candidate plans, each with some twenty rules)."""

    def __init__(self, plan: dict[str, Any], world: World) -> None:
        super().__init__(plan)
        self.world = world

    @cached_property
    def cart(self) -> list[tuple[Any, int]]:
        return _cart_lines(self.world, self)

    @cached_property
    def trip(self) -> list[tuple[dict[str, Any], Any]]:
        return _trip_lines(self.world, self)


# --- shopping ------------------------------------------------------------------------------------
def cart_lines(world: World, plan: dict[str, Any]) -> list[tuple[Any, int]]:
    return plan.cart if isinstance(plan, Judged) and plan.world is world else _cart_lines(world, plan)


def _cart_lines(world: World, plan: dict[str, Any]) -> list[tuple[Any, int]]:
    return [(world.products[p], int(q)) for p, q in sorted(plan.get("cart", {}).items()) if p in world.products]


def coupon_discount(world: World, plan: dict[str, Any], coupon_id: str) -> int:
    coupon = world.coupons[coupon_id]
    eligible = sum(p.price * q for p, q in cart_lines(world, plan) if coupon.category in ("all", p.category))
    if eligible < coupon.threshold or eligible == 0:
        return 0
    return eligible * coupon.percent // 100 if coupon.percent else min(coupon.amount, eligible)


def coupon_problem(world: World, plan: dict[str, Any], coupon_id: str) -> str | None:
    """Why a coupon does not apply to this cart (threshold, category, stacking), or None."""
    coupon = world.coupons[coupon_id]
    eligible = sum(p.price * q for p, q in cart_lines(world, plan) if coupon.category in ("all", p.category))
    if eligible == 0:
        return f"coupon {coupon_id} applies to {coupon.category} and the cart holds none"
    if eligible < coupon.threshold:
        return (f"coupon {coupon_id} needs ${coupon.threshold / 100:.2f} of {coupon.category} in the cart "
                f"(it holds ${eligible / 100:.2f})")
    others = [c for c in plan.get("coupons", []) if c != coupon_id and c in world.coupons]
    if others and (not coupon.stackable or any(not world.coupons[c].stackable for c in others)):
        return f"coupon {coupon_id} cannot be combined with {', '.join(others)} (a coupon is not stackable)"
    return None


def shop_subtotal(world: World, plan: dict[str, Any]) -> int:
    return sum(p.price * q for p, q in cart_lines(world, plan))


def shop_total(world: World, plan: dict[str, Any]) -> int:
    discount = sum(coupon_discount(world, plan, c) for c in plan.get("coupons", []) if c in world.coupons)
    return max(0, shop_subtotal(world, plan) - discount)


def _of(world: World, plan: dict[str, Any], category: str) -> list[tuple[Any, int]]:
    return [(p, q) for p, q in cart_lines(world, plan) if p.category == category]


def _item(w: World, s: dict, plan: dict, r: dict) -> bool:
    return any(all(getattr(p, k) == v for k, v in r["attrs"].items()) for p, _ in _of(w, plan, r["category"]))


def _pairing(w: World, s: dict, plan: dict, r: dict) -> bool:
    lines = _of(w, plan, r["a"]) + _of(w, plan, r["b"])
    return bool(_of(w, plan, r["a"]) and _of(w, plan, r["b"])) and len({p.brand for p, _ in lines}) == 1


SHOP_RULES: dict[str, Rule] = {
    "item": _item,
    "quantity": lambda w, s, plan, r: sum(q for _, q in _of(w, plan, r["category"])) == r["qty"],
    "rating": lambda w, s, plan, r: bool(_of(w, plan, r["category"])) and all(
        p.rating >= r["min"] for p, _ in _of(w, plan, r["category"])),
    "price": lambda w, s, plan, r: bool(_of(w, plan, r["category"])) and all(
        p.price <= r["max"] for p, _ in _of(w, plan, r["category"])),
    "budget": lambda w, s, plan, r: shop_total(w, plan) <= r["max"],
    "delivery": lambda w, s, plan, r: all(
        delivery_date(w.today, p.origin, s["city"]) <= r["by"] for p, _ in cart_lines(w, plan)),
    "exclude_brand": lambda w, s, plan, r: all(p.brand != r["brand"] for p, _ in cart_lines(w, plan)),
    "exclude_origin": lambda w, s, plan, r: all(p.origin != r["city"] for p, _ in cart_lines(w, plan)),
    "pairing": _pairing,
}


def _one_per_item(w: World, s: dict, plan: dict) -> bool:
    cats = [p.category for p, _ in cart_lines(w, plan)]
    return len(cats) == len(set(cats)) and set(cats) <= set(s["categories"])


SHOP_COMMONSENSE: dict[str, Callable[[World, dict, dict], bool]] = {
    "exists": lambda w, s, plan: all(p in w.products for p in plan.get("cart", {}))
    and all(c in w.coupons for c in plan.get("coupons", [])),
    "in_stock": lambda w, s, plan: all(0 < q <= p.stock for p, q in cart_lines(w, plan)),
    "one_product_per_item": _one_per_item,
    "coupons_apply": lambda w, s, plan: all(
        c in w.coupons and coupon_problem(w, plan, c) is None for c in plan.get("coupons", [])),
}


# --- travel --------------------------------------------------------------------------------------
def trip_lines(world: World, plan: dict[str, Any]) -> list[tuple[dict[str, Any], Any]]:
    return plan.trip if isinstance(plan, Judged) and plan.world is world else _trip_lines(world, plan)


def _trip_lines(world: World, plan: dict[str, Any]) -> list[tuple[dict[str, Any], Any]]:
    return [(line, world.item(line["item"])) for line in plan.get("lines", [])]


def outbound(world: World, s: dict, plan: dict) -> Any:
    found = [x for line, x in trip_lines(world, plan) if line["day"] == 1 and getattr(x, "mode", "")
             and x.origin == s["home"]]
    return found[0] if len(found) == 1 else None


def inbound(world: World, s: dict, plan: dict) -> Any:
    found = [x for line, x in trip_lines(world, plan) if line["day"] == s["days"] and getattr(x, "mode", "")
             and x.destination == s["home"]]
    return found[0] if len(found) == 1 else None


def _hotels(world: World, plan: dict) -> list[Any]:
    return [x for _, x in trip_lines(world, plan) if getattr(x, "free", None) is not None]


def _venues(world: World, plan: dict, kind: str) -> list[tuple[dict, Any]]:
    return [(line, x) for line, x in trip_lines(world, plan) if getattr(x, "kind", "") == kind]


def trip_cost(world: World, plan: dict[str, Any]) -> int:
    return sum(x.price for _, x in trip_lines(world, plan) if x is not None)


TRAVEL_RULES: dict[str, Rule] = {
    "mode": lambda w, s, plan, r: (o := outbound(w, s, plan)) is not None and o.mode == r["mode"],
    "arrive_by": lambda w, s, plan, r: (o := outbound(w, s, plan)) is not None and o.arrive <= r["time"],
    "depart_after": lambda w, s, plan, r: (o := inbound(w, s, plan)) is not None and o.depart >= r["time"],
    "hotel_rating": lambda w, s, plan, r: bool(_hotels(w, plan)) and all(h.rating >= r["min"] for h in _hotels(w, plan)),
    "hotel_price": lambda w, s, plan, r: bool(_hotels(w, plan)) and all(h.price <= r["max"] for h in _hotels(w, plan)),
    "visit": lambda w, s, plan, r: any(x.id == r["venue"] for _, x in _venues(w, plan, "attraction")),
    "cuisine": lambda w, s, plan, r: any(x.cuisine == r["cuisine"] for _, x in _venues(w, plan, "restaurant")),
    "restaurant_rating": lambda w, s, plan, r: bool(_venues(w, plan, "restaurant")) and all(
        x.rating >= r["min"] for _, x in _venues(w, plan, "restaurant")),
    "budget": lambda w, s, plan, r: trip_cost(w, plan) <= r["max"],
}


def _transport_ok(w: World, s: dict, plan: dict) -> bool:
    o, i = outbound(w, s, plan), inbound(w, s, plan)
    modes = [x for _, x in trip_lines(w, plan) if getattr(x, "mode", "")]
    return (o is not None and i is not None and len(modes) == 2 and o.destination == s["city"]
            and i.origin == s["city"] and o.date == s["dates"][0] and i.date == s["dates"][-1])


def _hotel_nights(w: World, s: dict, plan: dict) -> bool:
    nights = [(line["day"], x) for line, x in trip_lines(w, plan) if getattr(x, "free", None) is not None]
    days = sorted(d for d, _ in nights)
    return days == list(range(1, s["days"])) and all(
        x.city == s["city"] and s["dates"][d - 1] in x.free for d, x in nights)


def _hours(w: World, s: dict, plan: dict) -> bool:
    return all(x.city == s["city"] and line.get("start") is not None and 1 <= line["day"] <= s["days"]
               and x.opens <= line["start"] and line["start"] + x.duration <= x.closes
               for kind in ("restaurant", "attraction") for line, x in _venues(w, plan, kind))


def _timeline(w: World, s: dict, plan: dict) -> bool:
    """No overlaps, each move fits its route time, and the first/last activity leave the transfer."""
    o, i = outbound(w, s, plan), inbound(w, s, plan)
    for day in range(1, s["days"] + 1):
        visits = sorted(((line["start"], x) for kind in ("restaurant", "attraction")
                         for line, x in _venues(w, plan, kind) if line["day"] == day and line.get("start") is not None),
                        key=lambda v: (v[0], v[1].id))
        for (a_start, a), (b_start, b) in zip(visits, visits[1:]):
            if b_start < a_start + a.duration + route_minutes(a.district, b.district):
                return False
        if visits and day == 1 and o is not None and visits[0][0] < o.arrive + TRANSFER:
            return False
        if visits and day == s["days"] and i is not None and visits[-1][0] + visits[-1][1].duration + TRANSFER > i.depart:
            return False
    return True


TRAVEL_COMMONSENSE: dict[str, Callable[[World, dict, dict], bool]] = {
    "exists": lambda w, s, plan: all(x is not None and not hasattr(x, "stock") and not hasattr(x, "threshold")
                                     for _, x in trip_lines(w, plan)),
    "transport": _transport_ok,
    "hotel_nights": _hotel_nights,
    "opening_hours": _hours,
    "timeline": _timeline,
}


# --- judging -------------------------------------------------------------------------------------
def is_empty(settings: dict[str, Any], plan: dict[str, Any] | None) -> bool:
    if not plan:
        return True
    return not plan.get("cart") if settings["kind"] == "shopping" else not plan.get("lines")


def judge(world: World, settings: dict[str, Any], requirements: list[dict[str, Any]],
          plan: dict[str, Any] | None) -> dict[str, Any]:
    """Per requirement (by id) and per commonsense rule: pass or fail; success = all pass."""
    if is_empty(settings, plan):
        return {"delivered": False, "requirements": {r["id"]: False for r in requirements}, "commonsense": {},
                "success": False, "reason": "no deliverable"}
    assert plan is not None
    plan = Judged(plan, world)
    shopping = settings["kind"] == "shopping"
    rules, common = (SHOP_RULES, SHOP_COMMONSENSE) if shopping else (TRAVEL_RULES, TRAVEL_COMMONSENSE)
    sense = {name: bool(rule(world, settings, plan)) for name, rule in common.items()}
    valid = sense["exists"]
    verdicts = {r["id"]: bool(valid and rules[r["kind"]](world, settings, plan, r)) for r in requirements}
    success = all(verdicts.values()) and all(sense.values())
    failed = [k for k, ok in verdicts.items() if not ok] + [f"commonsense:{k}" for k, ok in sense.items() if not ok]
    return {"delivered": True, "requirements": verdicts, "commonsense": sense, "success": success,
            "reason": "all requirements met" if success else "failed " + ", ".join(failed)}
