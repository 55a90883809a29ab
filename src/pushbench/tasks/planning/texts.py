"""The words of the planning family: requirement sentences (rendered from a requirement's fields
and parsed back from its text), money and clock formats. The generator writes with these, the
SimLM mind reads the task with them: a careful reader of the sentence gets the same fields.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from pushbench.tasks.planning.world import CATEGORIES, COLOURS, CUISINES

_CATS = "|".join(re.escape(c) for c in sorted(CATEGORIES, key=len, reverse=True))
_COLS = "|".join(COLOURS)


def money(cents: int) -> str:
    return f"${cents / 100:.2f}"


def clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def parse_money(text: str) -> int:
    return int(round(float(text.replace("$", "").replace(",", "")) * 100))


def parse_clock(text: str) -> int:
    hours, mins = text.split(":")
    return int(hours) * 60 + int(mins)


def stars(tenths: int) -> str:
    return f"{tenths / 10:.1f}"


def item_text(r: dict[str, Any]) -> str:
    a = r["attrs"]
    words = [a["colour"]] if "colour" in a else []
    words.append(r["category"])
    if "brand" in a:
        words.append(f"from {a['brand']}")
    if "size" in a:
        words.append(f"in size {a['size']}")
    return "the cart holds a " + " ".join(words)


TEMPLATES: dict[str, Any] = {
    "item": item_text,
    "quantity": lambda r: f"buy exactly {r['qty']} of the {r['category']}",
    "rating": lambda r: f"the {r['category']} is rated at least {stars(r['min'])}",
    "price": lambda r: f"the {r['category']} costs at most {money(r['max'])} each",
    "budget": lambda r: (f"the total after coupons is at most {money(r['max'])}" if r["scope"] == "cart"
                         else f"the whole trip costs at most {money(r['max'])}"),
    "delivery": lambda r: f"every item arrives by {r['by']}",
    "exclude_brand": lambda r: f"nothing in the cart is from {r['brand']}",
    "exclude_origin": lambda r: f"nothing in the cart ships from {r['city']}",
    "pairing": lambda r: f"the {r['a']} and the {r['b']} are from the same brand",
    "mode": lambda r: f"travel there by {r['mode']}",
    "arrive_by": lambda r: f"arrive by {clock(r['time'])} on the first day",
    "depart_after": lambda r: f"leave no earlier than {clock(r['time'])} on the last day",
    "hotel_rating": lambda r: f"every hotel night is at a hotel rated at least {stars(r['min'])}",
    "hotel_price": lambda r: f"every hotel night costs at most {money(r['max'])}",
    "visit": lambda r: f"visit {r['name']} ({r['venue']})",
    "cuisine": lambda r: f"have at least one meal at {'an' if r['cuisine'][0] in 'aeiou' else 'a'} {r['cuisine']} restaurant",
    "restaurant_rating": lambda r: f"every restaurant you eat at is rated at least {stars(r['min'])}",
}


def requirement_text(r: dict[str, Any]) -> str:
    return TEMPLATES[r["kind"]](r)


_M = r"\$([\d.]+)"
PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("item", re.compile(rf"^the cart holds a (?:({_COLS}) )?({_CATS})(?: from (\w+))?(?: in size (.+))?$")),
    ("quantity", re.compile(rf"^buy exactly (\d+) of the ({_CATS})$")),
    ("rating", re.compile(rf"^the ({_CATS}) is rated at least ([\d.]+)$")),
    ("price", re.compile(rf"^the ({_CATS}) costs at most {_M} each$")),
    ("budget", re.compile(rf"^the (total after coupons is|whole trip costs) at most {_M}$")),
    ("delivery", re.compile(r"^every item arrives by (\d{4}-\d\d-\d\d)$")),
    ("exclude_brand", re.compile(r"^nothing in the cart is from (\w+)$")),
    ("exclude_origin", re.compile(r"^nothing in the cart ships from (\w+)$")),
    ("pairing", re.compile(rf"^the ({_CATS}) and the ({_CATS}) are from the same brand$")),
    ("mode", re.compile(r"^travel there by (flight|train)$")),
    ("arrive_by", re.compile(r"^arrive by (\d\d:\d\d) on the first day$")),
    ("depart_after", re.compile(r"^leave no earlier than (\d\d:\d\d) on the last day$")),
    ("hotel_rating", re.compile(r"^every hotel night is at a hotel rated at least ([\d.]+)$")),
    ("hotel_price", re.compile(rf"^every hotel night costs at most {_M}$")),
    ("visit", re.compile(r"^visit (.+) \((V\d+)\)$")),
    ("cuisine", re.compile(rf"^have at least one meal at an? ({'|'.join(CUISINES)}) restaurant$")),
    ("restaurant_rating", re.compile(r"^every restaurant you eat at is rated at least ([\d.]+)$")),
]
REQUIREMENT_LINE = re.compile(r"^- (req:\d+): (.+)$")
POINTER = "a standing preference in your profile (user_info)"  # a long task's profile requirement, in its text


def parse_requirement(text: str) -> dict[str, Any] | None:
    """The fields of a requirement sentence (what a careful reader takes from it), or None."""
    for kind, pattern in PATTERNS:
        m = pattern.match(text.strip())
        if not m:
            continue
        g = m.groups()
        if kind == "item":
            attrs = {k: v for k, v in (("colour", g[0]), ("brand", g[2]), ("size", g[3])) if v}
            return {"kind": kind, "category": g[1], "attrs": attrs}
        simple: dict[str, Callable[[], dict[str, Any]]] = {"quantity": lambda: {"qty": int(g[0]), "category": g[1]},
                  "rating": lambda: {"category": g[0], "min": int(round(float(g[1]) * 10))},
                  "price": lambda: {"category": g[0], "max": parse_money(g[1])},
                  "budget": lambda: {"max": parse_money(g[1]), "scope": "cart" if g[0].startswith("total") else "trip"},
                  "delivery": lambda: {"by": g[0]}, "exclude_brand": lambda: {"brand": g[0]},
                  "exclude_origin": lambda: {"city": g[0]}, "pairing": lambda: {"a": g[0], "b": g[1]},
                  "mode": lambda: {"mode": g[0]}, "arrive_by": lambda: {"time": parse_clock(g[0])},
                  "depart_after": lambda: {"time": parse_clock(g[0])},
                  "hotel_rating": lambda: {"min": int(round(float(g[0]) * 10))},
                  "hotel_price": lambda: {"max": parse_money(g[0])},
                  "visit": lambda: {"name": g[0], "venue": g[1]}, "cuisine": lambda: {"cuisine": g[0]},
                  "restaurant_rating": lambda: {"min": int(round(float(g[0]) * 10))}}
        return {"kind": kind, **simple[kind]()}
    return None


# --- the day template of a trip (the generator plans with it; a careful planner can too) ---------
TRANSFER = 30  # minutes between a station or airport and the first/last activity of the trip
SLOTS = ((10 * 60, "attraction"), (12 * 60 + 30, "restaurant"), (15 * 60, "attraction"), (19 * 60, "restaurant"))


def fits(venue: Any, start: int) -> bool:
    return venue.opens <= start and start + venue.duration <= venue.closes


def day_slots(day: int, days: int, arrive: int, depart: int) -> list[tuple[int, str]]:
    """The template's slots that fit between the arrival (day 1) and the departure (last day); a
    slot is long enough for a 120-minute visit and leaves route time before the next one."""
    out = []
    for start, kind in SLOTS:
        if day == 1 and start < arrive + TRANSFER:
            continue
        if day == days and start + 120 + TRANSFER > depart:
            continue
        out.append((start, kind))
    return out


def profile_lines(settings: dict[str, Any]) -> list[str]:
    """What user_info adds for a long task: the profile's requirements, one line each."""
    return ["standing preferences (each counts as the requirement it names):",
            *(f"- {p['id']}: {p['text']}" for p in settings.get("profile", []))]
