"""The SimLM planning mind's two planners: one step's beliefs (from recalled facts only) and the next
action they call for, for a cart (``ShopPlanner``) and for a trip (``TripPlanner``)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from pushbench.policies.sim.attention import stable_uniform
from pushbench.tasks.planning import superseded
from pushbench.tasks.planning.texts import day_slots, parse_clock, parse_money

REQ, ITEM, QUERY, ADDED, REMOVED, COUPON_ON, COUPON_OFF, CHECKED, ROUTE = range(9)
MAX_PAGES = 6  # result pages a planner reads for one need before giving it up
Action = tuple[str, dict[str, Any], str]  # tool, arguments, the requirement id it serves ("" for none)


class _Base:
    def __init__(self, mind: Any, seen: list[tuple[int, str, int, int]], step: int):
        self.mind, self.step, self.key = mind, step, call_key
        state = mind.reader.state
        self.state = state
        self.reqs = {key: state["reqs"][key] for kind, key, _, _ in seen if kind == REQ and key in state["reqs"]}
        self.items = {key: state["items"][key] for kind, key, _, _ in seen if kind == ITEM and key in state.get("items", {})}
        self.queries = {key for kind, key, _, _ in seen if kind == QUERY}
        self.seen = seen
        self.last_edit = max((at for kind, _, _, at in seen if kind in (ADDED, REMOVED, COUPON_ON, COUPON_OFF)), default=-1)
        self.checked = any(kind == CHECKED and at > self.last_edit for kind, _, _, at in seen)

    def of_kind(self, kind: str) -> list[str]:
        return [rid for rid, r in sorted(self.reqs.items()) if r["kind"] == kind]

    def first(self, kind: str) -> dict[str, Any] | None:
        ids = self.of_kind(kind)
        return self.reqs[ids[0]] if ids else None

    def search(self, args: dict[str, Any], serves: str, again: bool = False) -> Action | None:
        """The first page of this search not run yet (as far as it recalls), or None when every page is
        read; with ``again`` the first page once more (what it read there is forgotten)."""
        for page in range(1, MAX_PAGES + 1):
            trial = {**args, "page": page}
            if self.key("search", trial) not in self.queries:
                if page > 1 and not self._more_pages(args, page):
                    break
                return "search", trial, serves
        return ("search", {**args, "page": 1}, serves) if again and self.patient() else None

    def patient(self) -> bool:
        """Steps since its last edit within a patience that shrinks as the context fills (fatigue)."""
        p = self.mind.profile
        fill = min(1.0, self.mind.reader.total_tokens / p.window)
        return self.step - max(self.last_edit, 0) < p.patience * (1 - p.fatigue * fill)

    def _more_pages(self, args: dict[str, Any], page: int) -> bool:
        """Did the page before show that there are more pages? (read from the recalled result header)"""
        return page <= self.state.get("pages", {}).get(self.key("search", {**args, "page": 1}), MAX_PAGES)

    def finish(self) -> Action:
        if not self.checked and stable_uniform(self.mind.seed, "check", self.step) < self.mind.profile.check_status:
            return "check", {}, ""
        return "submit", {}, ""


class ShopPlanner(_Base):
    def products(self) -> list[dict[str, Any]]:
        out, prices = [], superseded.latest(self.seen)  # a later price it recalls supersedes the first
        for pid, item in self.items.items():
            if item["type"] == "product":
                g = item["groups"]
                brief = g[7] is None  # seen in a long task's result list only: its page shows stock and city
                out.append({"id": pid, "category": g[1], "brand": g[2], "colour": g[3], "size": g[4],
                            "price": prices.get(pid, parse_money(g[5])), "rating": int(round(float(g[6]) * 10)),
                            "stock": 10**9 if brief else int(g[7]), "origin": "" if brief else g[8], "brief": brief})
        return out

    def cart(self) -> tuple[dict[str, int], list[str]]:
        cart: dict[str, int] = {}
        coupons: list[str] = []
        for kind, key, aux, _ in self.seen:
            if kind == ADDED and key.startswith("P"):
                cart[key] = cart.get(key, 0) + aux
            elif kind == REMOVED:
                cart.pop(key, None)
            elif kind == COUPON_ON and key not in coupons:
                coupons.append(key)
            elif kind == COUPON_OFF and key in coupons:
                coupons.remove(key)
        return cart, coupons

    def next_action(self) -> Action | None:
        delivery = self.first("delivery")
        if delivery and "user" not in self.items:
            return "user_info", {}, self.of_kind("delivery")[0]
        unread = [rid for rid in self.state.get("profile_ids", []) if rid not in self.reqs]
        if unread and "user" not in self.items:  # the profile's requirements, not recalled: read it
            return "user_info", {}, unread[0]
        products = {p["id"]: p for p in self.products()}
        cart, coupons = self.cart()
        cats = sorted({r["category"] for r in self.reqs.values() if "category" in r},
                      key=lambda c: min(rid for rid, r in self.reqs.items() if r.get("category") == c))
        for c in cats:
            action = self._item(c, products, cart)
            if action is not None:
                return action
        budget = self.first("budget")
        if budget:
            total = sum(products[p]["price"] * q * (1 + self.mind.noise(p, q)) for p, q in cart.items() if p in products)
            total -= sum(self._discount(c, products, cart) for c in coupons)
            if total > budget["max"]:
                action = self._coupon(products, cart, coupons) or superseded.swap(self, products, cart)
                if action is not None:
                    return action
        if superseded.needs_recheck(self, cart):  # prices read long ago may have changed since
            return "check", {}, ""
        return self.finish()

    def _wants(self, c: str, cart: dict[str, int], products: dict[str, Any]) -> dict[str, Any]:
        want: dict[str, Any] = {"attrs": {}, "qty": 1, "min": 0, "max": 10**9, "serves": ""}
        for rid, r in sorted(self.reqs.items()):
            if r.get("category") == c:
                want["serves"] = want["serves"] or rid
                if r["kind"] == "item":
                    want["attrs"].update(r["attrs"])
                elif r["kind"] == "quantity":
                    want["qty"] = r["qty"]
                elif r["kind"] == "rating":
                    want["min"] = r["min"]
                elif r["kind"] == "price":
                    want["max"] = r["max"]
            if r["kind"] == "pairing" and c == r["b"]:
                partner = [products[p] for p in cart if p in products and products[p]["category"] == r["a"]]
                if partner:
                    want["attrs"]["brand"] = partner[0]["brand"]
        return want

    def _fits(self, p: dict[str, Any], want: dict[str, Any]) -> bool:
        excluded = {r.get("brand") for r in self.reqs.values() if r["kind"] == "exclude_brand"}
        away = {r.get("city") for r in self.reqs.values() if r["kind"] == "exclude_origin"}
        return (all(p[k] == v for k, v in want["attrs"].items()) and p["rating"] >= want["min"]
                and p["price"] <= want["max"] and p["stock"] >= want["qty"] and p["brand"] not in excluded
                and p["origin"] not in away and self._arrives(p) is not False)

    def _arrives(self, p: dict[str, Any]) -> bool | None:
        delivery = self.first("delivery")
        if not delivery:
            return True
        days = self.state.get("shipping", {}).get(p["origin"]) if self._route_known(p["origin"]) else None
        if days is None or "today" not in self.state:
            return None
        by = dt.date.fromisoformat(self.state["today"]) + dt.timedelta(days=1 + days)
        return by.isoformat() <= delivery["by"]

    def _route_known(self, origin: str) -> bool:
        return any(kind == ROUTE and key == origin for kind, key, _, _ in self.seen)

    def _item(self, c: str, products: dict[str, Any], cart: dict[str, int]) -> Action | None:
        want = self._wants(c, cart, products)
        held = [p for p in cart if p in products and products[p]["category"] == c]
        if held and self._fits(products[held[0]], want) and cart[held[0]] == want["qty"] and len(held) == 1:
            return None
        if held:
            return "remove", {"item_id": held[0]}, want["serves"]
        fitting = sorted((p for p in products.values() if p["category"] == c and self._fits(p, want)),
                         key=lambda p: (p["price"], p["id"]))
        pair = self.first("pairing")
        if pair and c == pair["a"]:  # choose the pair together: every page of both items, then the cheapest match
            for cat, w in ((c, want), (pair["b"], self._wants(pair["b"], {}, products))):
                if (action := self.search(self._search_args(cat, w), w["serves"])) is not None:
                    return action
            want_b = self._wants(pair["b"], {}, products)
            b_cost: dict[str, Any] = {}
            for p in products.values():
                if p["category"] == pair["b"] and self._fits(p, want_b):
                    b_cost[p["brand"]] = min(b_cost.get(p["brand"], 10**12), p["price"] * want_b["qty"])
            fitting = sorted((p for p in fitting if p["brand"] in b_cost),
                             key=lambda p: (p["price"] * want["qty"] + b_cost[p["brand"]], p["id"]))
        for p in fitting:
            if p["brief"]:
                return "details", {"item_id": p["id"]}, want["serves"]
            if self._arrives(p) is None:
                return "route", {"origin": p["origin"], "destination": self.state.get("user_city", "")}, \
                    (self.of_kind("delivery") or [""])[0]
            if self.key("add", {"item_id": p["id"], "quantity": want["qty"]}) not in self.state.get("rejected", []):
                return "add", {"item_id": p["id"], "quantity": want["qty"]}, want["serves"]
        return self.search(self._search_args(c, want), want["serves"], again=True)

    @staticmethod
    def _search_args(c: str, want: dict[str, Any]) -> dict[str, Any]:
        args: dict[str, Any] = {"catalog": "products", "category": c, "sort": "price_asc", **want["attrs"]}
        if want["min"]:
            args["min_rating"] = want["min"] / 10
        if want["max"] < 10**9:
            args["max_price"] = want["max"] / 100
        return args

    def _coupon_data(self) -> dict[str, dict[str, Any]]:
        out = {}
        for cid, item in self.items.items():
            if item["type"] == "coupon":
                g = item["groups"]
                out[cid] = {"percent": int(g[1] or 0), "amount": parse_money(g[2]) if g[2] else 0, "category": g[3],
                            "threshold": parse_money(g[4]), "stackable": g[5] == "stackable"}
        return out

    def _discount(self, cid: str, products: dict[str, Any], cart: dict[str, int]) -> int:
        c = self._coupon_data().get(cid)
        if c is None:
            return 0
        eligible = sum(products[p]["price"] * q for p, q in cart.items()
                       if p in products and c["category"] in ("all", products[p]["category"]))
        if eligible < c["threshold"] or not eligible:
            return 0
        return eligible * c["percent"] // 100 if c["percent"] else min(c["amount"], eligible)

    def _coupon(self, products: dict[str, Any], cart: dict[str, int], applied: list[str]) -> Action | None:
        data = self._coupon_data()
        serves = self.of_kind("budget")[0]
        if not data:
            return ("coupons", {}, serves) if self.key("coupons", {}) not in self.queries else None
        usable = [cid for cid in sorted(data) if self._discount(cid, products, cart) > 0
                  and self.key("apply_coupon", {"coupon_id": cid}) not in self.state.get("rejected", [])]
        sets = [[c] for c in usable] + [[a, b] for i, a in enumerate(usable) for b in usable[i + 1:]
                                          if data[a]["stackable"] and data[b]["stackable"]]
        if not sets:
            return None
        best = max(sets, key=lambda cs: (sum(self._discount(c, products, cart) for c in cs), cs))
        extra = [c for c in applied if c not in best]
        if extra:
            return "remove_coupon", {"coupon_id": extra[0]}, serves
        missing = [c for c in best if c not in applied]
        return ("apply_coupon", {"coupon_id": missing[0]}, serves) if missing else None


class TripPlanner(_Base):
    def __init__(self, mind: Any, seen: list[tuple[int, str, int, int]], step: int):
        super().__init__(mind, seen, step)
        days, self.home, self.city, first, _ = self.state["trip"]
        self.days = int(days)
        start = dt.date.fromisoformat(first)
        self.dates = [(start + dt.timedelta(days=d)).isoformat() for d in range(self.days)]

    def plan(self) -> list[tuple[str, int, str]]:
        lines: list[tuple[str, int, str]] = []
        for kind, key, _, _ in self.seen:
            if kind == ADDED and "|" in key:
                item, day, start = key.split("|")
                lines.append((item, int(day), start))
            elif kind == REMOVED and "|" in key:
                item, day = key.split("|")
                lines = [x for x in lines if (x[0], x[1]) != (item, int(day))]
        return lines

    def _of(self, kind: str) -> list[tuple[str, tuple]]:
        return [(i, x["groups"]) for i, x in self.items.items() if x["type"] == kind]

    def next_action(self) -> Action | None:
        plan = self.plan()
        held = {(i, d) for i, d, _ in plan}
        outs, backs = self._transports(True), self._transports(False)
        for options in (outs, backs):
            if isinstance(options, tuple):
                return options
        if not outs or not backs:
            return None
        needs = []
        for need in self._venue_needs():
            options = self._venue_options(need, plan)
            if isinstance(options, tuple):
                return options  # look the venue up first
            needs.append((need[0], options))
        go, back = self._pair(outs, backs, needs, plan, held)
        for tid, day in ((go, 1), (back, self.days)):
            if (tid, day) not in held:
                return "add", {"item_id": tid, "day": day}, self._serves("mode", "arrive_by", "depart_after")
        if self.days > 1:
            hotel = self._hotel()
            if isinstance(hotel, tuple):
                return hotel
            if hotel is None:
                return None
            for night in range(1, self.days):
                if (hotel, night) not in held:
                    return "add", {"item_id": hotel, "day": night}, self._serves("hotel_rating", "hotel_price")
        placed = self._placements(needs, plan, self._arrive(go), self._depart(back))
        for rid, spot in placed:
            if spot is not None:
                vid, day, clock = spot
                return "add", {"item_id": vid, "day": day, "start": clock}, rid
        return self.finish()

    def _arrive(self, tid: str) -> int:
        return parse_clock(self.items[tid]["groups"][6])

    def _depart(self, tid: str) -> int:
        return parse_clock(self.items[tid]["groups"][5])

    def _pair(self, outs: list[str], backs: list[str], needs: list, plan: list, held: set) -> tuple[str, str]:
        """The cheapest outbound and return (the ones in the plan stay) that leave a slot for every need."""
        outs = [t for t in outs if (t, 1) in held] or outs
        backs = [t for t in backs if (t, self.days) in held] or backs
        price = lambda t: parse_money(self.items[t]["groups"][7])  # noqa: E731
        pairs = sorted(((price(a) + price(b), a, b) for a in outs for b in backs))
        for _, a, b in pairs:
            if self._arrive(a) + 30 <= self._depart(b) or self.days > 1:
                if all(spot is not None for _, spot in self._placements(needs, plan, self._arrive(a), self._depart(b), True)):
                    return a, b
        return pairs[0][1], pairs[0][2]

    def _placements(self, needs: list, plan: list, arrive: int, depart: int, all_needs: bool = False) -> list:
        """For each unmet need, a (venue, day, HH:MM) in a free slot of the day template, or None."""
        taken = {(d, st) for _, d, st in plan}
        out = []
        for rid, options in needs:
            if options is None:
                continue  # met already
            spot = None
            for vid in options:
                g = self.items[vid]["groups"]
                kind, opens, closes = g[1], parse_clock(g[10]), parse_clock(g[11])
                duration = 60 if kind == "restaurant" else int(g[8])
                for day in range(1, self.days + 1):
                    for start, slot_kind in day_slots(day, self.days, arrive, depart):
                        clock = f"{start // 60:02d}:{start % 60:02d}"
                        if spot is None and slot_kind == kind and (day, clock) not in taken \
                                and opens <= start and start + duration <= closes:
                            spot = (vid, day, clock)
            if spot is not None:
                taken.add(spot[1:])
            out.append((rid, spot))
        return out

    def _serves(self, *kinds: str) -> str:
        return next((rid for k in kinds for rid in self.of_kind(k)), "")

    def _transports(self, out: bool) -> Any:
        """The recalled transports that meet the recalled requirements, cheapest first, or a search."""
        a, b, date = (self.home, self.city, self.dates[0]) if out else (self.city, self.home, self.dates[-1])
        mode = self.first("mode") if out else None
        limit = self.first("arrive_by" if out else "depart_after")
        fitting = []
        for tid, g in self._of("transport"):
            if (g[2], g[3], g[4]) != (a, b, date) or (mode and g[1] != mode["mode"]):
                continue
            dep, arr = parse_clock(g[5]), parse_clock(g[6])
            if limit and (arr > limit["time"] if out else dep < limit["time"]):
                continue
            fitting.append((parse_money(g[7]), tid))
        serves = self._serves("mode", "arrive_by") if out else self._serves("depart_after")
        catalogs = [mode["mode"] + "s"] if mode else ["flights", "trains"]
        for catalog in catalogs:  # read every timetable that could hold a fitting transport
            action = self.search({"catalog": catalog, "origin": a, "destination": b, "date": date}, serves,
                                 again=not fitting and catalog == catalogs[-1])
            if action is not None:
                return action
        return [tid for _, tid in sorted(fitting)]

    def _hotel(self) -> Any:
        rating, price = self.first("hotel_rating"), self.first("hotel_price")
        nights = set(self.dates[:-1])
        fitting = sorted((parse_money(g[3]), hid) for hid, g in self._of("hotel")
                         if g[1] == self.city and nights <= set(self.items[hid].get("free", []))
                         and (not rating or int(round(float(g[4]) * 10)) >= rating["min"])
                         and (not price or parse_money(g[3]) <= price["max"]))
        if fitting:
            return fitting[0][1]
        args: dict[str, Any] = {"catalog": "hotels", "city": self.city, "sort": "price_asc"}
        if rating:
            args["min_rating"] = rating["min"] / 10
        return self.search(args, self._serves("hotel_rating", "hotel_price"), again=True)

    def _venue_needs(self) -> list[tuple[str, dict[str, Any]]]:
        needs = [(rid, r) for rid, r in sorted(self.reqs.items()) if r["kind"] in ("visit", "cuisine")]
        if self.first("restaurant_rating") and not self.first("cuisine"):
            needs.append((self.of_kind("restaurant_rating")[0], {"kind": "meal"}))
        return needs

    def _venue_options(self, need: tuple[str, dict[str, Any]], plan: list) -> Any:
        """The venues that would meet a need, cheapest first; None if the plan meets it; or a look-up."""
        rid, r = need
        floor = self.first("restaurant_rating")
        venues = {vid: g for vid, g in self._of("venue") if g[3] == self.city}
        if r["kind"] == "visit":
            if any(i == r["venue"] for i, _, _ in plan):
                return None
            if r["venue"] not in venues:
                key = self.key("details", {"item_id": r["venue"]})
                return ("details", {"item_id": r["venue"]}, rid) if key not in self.queries else []
            return [r["venue"]]

        def ok(g: tuple) -> bool:
            return g[1] == "restaurant" and (r["kind"] == "meal" or g[5] == r["cuisine"]) and (
                not floor or int(round(float(g[9]) * 10)) >= floor["min"])
        if any(ok(venues[i]) for i, _, _ in plan if i in venues):
            return None
        options = sorted((v for v, g in venues.items() if ok(g)), key=lambda v: (parse_money(venues[v][6]), v))
        if options:
            return options
        args: dict[str, Any] = {"catalog": "restaurants", "city": self.city, "sort": "price_asc"}
        if r["kind"] == "cuisine":
            args["cuisine"] = r["cuisine"]
        if floor:
            args["min_rating"] = floor["min"] / 10
        return self.search(args, rid, again=True) or []


def _call_key(call: dict[str, Any]) -> str:
    """A call as a fact key: its name and arguments without the requirement argument."""
    try:
        args = json.loads(call.get("arguments") or "{}")
    except (json.JSONDecodeError, TypeError):
        args = {}
    if not isinstance(args, dict):
        args = {}
    args.pop("requirement", None)
    return f"{call.get('name', '')} {json.dumps(args, sort_keys=True)}"


def call_key(name: str, args: dict[str, Any]) -> str:
    """``_call_key`` of a call with these arguments (without their JSON round trip, which gives
    the same text for string keys)."""
    if not all(isinstance(key, str) for key in args):
        return _call_key({"name": name, "arguments": json.dumps(args)})
    return f"{name} {json.dumps({k: v for k, v in args.items() if k != 'requirement'}, sort_keys=True)}"
