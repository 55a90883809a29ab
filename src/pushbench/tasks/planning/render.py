"""How the planning tools show the world: one line per product, coupon, transport, hotel or venue,
and the patterns that read them back (the SimLM mind parses tool results with these)."""

from __future__ import annotations

import re
from typing import Any

from pushbench.tasks.planning.texts import clock, money, stars


def line(x: Any) -> str:
    if hasattr(x, "stock"):
        return (f"{x.id} | {x.name} | {x.category} | brand {x.brand} | colour {x.colour} | size {x.size} | "
                f"{money(x.price)} | rating {stars(x.rating)} ({x.reviews} reviews) | stock {x.stock} | "
                f"ships from {x.origin}")
    if hasattr(x, "threshold"):
        off = f"{x.percent}% off" if x.percent else f"{money(x.amount)} off"
        return (f"{x.id} | {off} {x.category} | min spend {money(x.threshold)} on {x.category} | "
                f"{'stackable' if x.stackable else 'not stackable'}")
    if hasattr(x, "mode"):
        return (f"{x.id} | {x.mode} {x.origin} -> {x.destination} | {x.date} {clock(x.depart)}-{clock(x.arrive)} | "
                f"{money(x.price)}")
    if hasattr(x, "free"):
        return (f"{x.id} | {x.name} | {x.city} | district {x.district} | {money(x.price)} per night | "
                f"rating {stars(x.rating)}")
    extra = f"cuisine {x.cuisine} | {money(x.price)} per person" if x.kind == "restaurant" else \
        f"ticket {money(x.price)} | visit {x.duration} min"
    return (f"{x.id} | {x.kind} {x.name} | {x.city} | district {x.district} | {extra} | rating {stars(x.rating)} | "
            f"open {clock(x.opens)}-{clock(x.closes)}")


def free_nights(hotel: Any, dates: list[str]) -> str:
    shown = [d for d in dates if d in hotel.free]
    return f"  free nights: {', '.join(shown) if shown else 'none of ' + ', '.join(dates)}"


_P = r"\$([\d.]+)"
PRODUCT = re.compile(rf"^(P\d+) \| .+? \| (.+?) \| brand (\w+) \| colour (\w+) \| size (.+?) \| {_P} \| "
                     r"rating ([\d.]+) \(\d+ reviews\) \| stock (\d+) \| ships from (\w+)$")
PRODUCT_BRIEF = re.compile(rf"^(P\d+) \| .+? \| (.+?) \| brand (\w+) \| colour (\w+) \| size (.+?) \| {_P} \| "
                           r"rating ([\d.]+) \(\d+ reviews\) \| stock and shipping on its page$")  # the long split's
COUPON = re.compile(rf"^(C\d+) \| (?:(\d+)% off|{_P} off) (.+?) \| min spend {_P} on .+? \| (stackable|not stackable)$")
TRANSPORT = re.compile(rf"^([FT]\d+) \| (flight|train) (\w+) -> (\w+) \| (\S+) (\d\d:\d\d)-(\d\d:\d\d) \| {_P}$")
HOTEL = re.compile(rf"^(H\d+) \| .+? \| (\w+) \| district (.+?) \| {_P} per night \| rating ([\d.]+)$")
FREE = re.compile(r"^  free nights: (.*)$")
VENUE = re.compile(rf"^(V\d+) \| (restaurant|attraction) (.+?) \| (\w+) \| district (.+?) \| "
                   rf"(?:cuisine (\w+) \| {_P} per person|ticket {_P} \| visit (\d+) min) \| rating ([\d.]+) \| "
                   r"open (\d\d:\d\d)-(\d\d:\d\d)$")
SHIPPING = re.compile(r"^route (\w+) -> (\w+): parcels take (\d+) days?")
USER = re.compile(r"^user (U\d+) \| .+? \| lives in (\w+) \| today is (\S+)$")
