"""Travel tasks (1-4 day trips), generated backwards: pick the trip first (outbound and return
transport, one hotel for every night, attractions and meals in a fixed day template that leaves
room for every route), then state requirements that trip satisfies, each with a near miss (one
line swapped or dropped) that breaks it and nothing else.
"""

from __future__ import annotations

import math
import random
from typing import Any

from pushbench.tasks.planning import rules
from pushbench.tasks.planning.nearmiss import choose, failure_sets
from pushbench.tasks.planning.texts import day_slots, fits
from pushbench.tasks.planning.world import World

VENUE_SWAPS = 6  # alternatives tried per meal or visit when looking for near misses


def _pick_trip(world: World, rng: random.Random, home: str, city: str, dates: list[str]) -> dict | None:
    out = [t for t in world.transports.values() if (t.origin, t.destination, t.date) == (home, city, dates[0])
           and t.arrive <= 14 * 60]
    back = [t for t in world.transports.values() if (t.origin, t.destination, t.date) == (city, home, dates[-1])
            and t.depart >= 15 * 60]
    nights = dates[:-1]
    hotels = [h for h in world.hotels.values() if h.city == city and set(nights) <= set(h.free)]
    if not out or not back or (nights and not hotels):
        return None
    go, ret = rng.choice(out), rng.choice(back)
    lines: list[dict[str, Any]] = [{"day": 1, "item": go.id, "start": None},
                                   {"day": len(dates), "item": ret.id, "start": None}]
    if nights:
        hotel = rng.choice(hotels)
        lines += [{"day": d, "item": hotel.id, "start": None} for d in range(1, len(dates))]
    used: set[str] = set()
    for day in range(1, len(dates) + 1):
        for start, kind in day_slots(day, len(dates), go.arrive, ret.depart):
            options = [v for v in world.venues.values() if v.city == city and v.kind == kind
                       and v.id not in used and fits(v, start)]
            if not options:
                continue
            venue = rng.choice(options)
            used.add(venue.id)
            lines.append({"day": day, "item": venue.id, "start": start})
    return {"lines": lines}


def _pool(world: World, plan: dict, settings: dict) -> list[dict[str, Any]]:
    lines = rules.trip_lines(world, plan)
    go = rules.outbound(world, settings, plan)
    back = rules.inbound(world, settings, plan)
    pool: list[dict[str, Any]] = [{"kind": "mode", "mode": go.mode},
                                  {"kind": "arrive_by", "time": int(math.ceil(go.arrive / 15) * 15)},
                                  {"kind": "depart_after", "time": back.depart // 15 * 15}]
    hotels = [x for _, x in lines if getattr(x, "free", None) is not None]
    if hotels:
        pool += [{"kind": "hotel_rating", "min": hotels[0].rating - 1},
                 {"kind": "hotel_price", "max": int(math.ceil((hotels[0].price + 1) / 1000) * 1000)}]
    sights = [x for _, x in lines if getattr(x, "kind", "") == "attraction"]
    meals = [x for _, x in lines if getattr(x, "kind", "") == "restaurant"]
    if sights:
        sight = sights[len(sights) // 2]
        pool.append({"kind": "visit", "venue": sight.id, "name": sight.name})
    if meals:
        pool += [{"kind": "cuisine", "cuisine": meals[-1].cuisine},
                 {"kind": "restaurant_rating", "min": min(m.rating for m in meals)}]
    return pool


def mutations(world: World, settings: dict, plan: dict) -> list[dict[str, Any]]:
    """One-change variants: a transport, the hotel or one venue swapped for another of its kind
    (same route and date; same city; same slot), or one venue dropped."""
    out: list[dict[str, Any]] = []
    lines = plan["lines"]
    for i, line in enumerate(lines):
        x = world.item(line["item"])
        if getattr(x, "mode", ""):
            alts = [t.id for t in world.transports.values()
                    if (t.origin, t.destination, t.date) == (x.origin, x.destination, x.date) and t.id != x.id]
        elif getattr(x, "free", None) is not None:
            if line["day"] != 1:
                continue  # the hotel is swapped for every night at once, from its first night
            alts = [h.id for h in world.hotels.values() if h.city == x.city and h.id != x.id]
            for h in alts:
                out.append({"lines": [{**ln, "item": h} if ln["item"] == x.id else ln for ln in lines]})
            continue
        else:
            alts = [v.id for v in world.venues.values() if v.city == x.city and v.kind == x.kind and v.id != x.id
                    and fits(v, line["start"])][:VENUE_SWAPS]
            out.append({"lines": lines[:i] + lines[i + 1:]})
        out += [{"lines": lines[:i] + [{**line, "item": a}] + lines[i + 1:]} for a in alts]
    return out


def make_task(world: World, rng: random.Random, days: int, n_range: tuple[int, int]) -> dict[str, Any] | None:
    cities = list(world.travel_cities())
    home, city = rng.sample(cities, 2)
    first = rng.randrange(0, world.params.days - days + 1)
    dates = [world.date(first + d) for d in range(days)]
    plan = _pick_trip(world, rng, home, city, dates)
    if plan is None:
        return None
    settings = {"kind": "travel", "level": days, "home": home, "city": city, "days": days, "dates": dates}
    pool = _pool(world, plan, settings)
    rng.shuffle(pool)
    slack = rng.randrange(2, 8) * 500  # room for a near miss of another requirement to cost a little more
    pool.insert(0, {"kind": "budget", "scope": "trip", "max": int(math.ceil(rules.trip_cost(world, plan) / 500) * 500) + slack})
    for k, r in enumerate(pool):
        r["id"] = f"p{k}"
    lo, hi = n_range
    failures = failure_sets(world, settings, pool, mutations(world, settings, plan))
    chosen, near = choose(pool, rng.randrange(lo, hi + 1), failures)
    if len(chosen) < lo or len(near) < len(chosen):
        return None
    reqs = [dict(r, id=f"req:{k}") for k, r in enumerate(chosen, 1)]
    rename = {r["id"]: f"req:{k}" for k, r in enumerate(chosen, 1)}
    return {"settings": settings, "requirements": reqs, "plan": plan,
            "near_misses": {rename[k]: v for k, v in sorted(near.items())}}
