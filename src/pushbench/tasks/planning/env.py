"""The planning tools: search the world, read an item, build a cart or a trip plan, check it, submit.

One tool set serves both task kinds (a shopping task refuses trip-plan edits and the reverse, as
interface errors). Every tool takes the optional ``requirement`` argument (a requirement id);
``submit`` serves every requirement. Bad input is ``ToolError`` (``ERROR:``); a well-formed call
the state refuses (an out-of-stock product, a coupon that does not apply, a closed restaurant,
a hotel without a free room) is ``PreconditionError`` (``REJECTED:``). ``check`` reports the
commonsense state of the deliverable (totals, delivery dates, opening hours, overlaps), never the
requirements' verdicts; the verifier's verdict is logged at ``submit`` and not shown.
"""

from __future__ import annotations

from typing import Any

from pushbench.requirements import Requirement, requirement_argument, validate_origins
from pushbench.tasks.base import TaskSpec
from pushbench.tasks.planning import rules
from pushbench.tasks.planning.changes import changed_world
from pushbench.tasks.planning.pages import brief_line, product_page
from pushbench.tasks.planning.render import free_nights, line
from pushbench.tasks.planning.texts import clock, money, parse_clock, profile_lines
from pushbench.tasks.planning.world import CITIES, DISTRICTS, World, route_minutes, shipping_days
from pushbench.tools.base import Environment, Observation, PreconditionError, ToolError, tool
from pushbench.verifier import Verifier

REQUIREMENT = {"type": "string", "maxLength": 40, "default": "",
               "description": "optional: the requirement id this call works on, e.g. req:2"}
CATALOGS = ["products", "flights", "trains", "hotels", "restaurants", "attractions"]
SORTS = ["", "price_asc", "price_desc", "rating_desc", "reviews_desc"]
_S = {"type": "string", "maxLength": 60, "default": ""}
_N = {"type": "number", "minimum": 0, "maximum": 100000, "default": 0}


class PlanningEnv(Environment):
    def __init__(self, task: TaskSpec, verifier: Verifier, world: World, requirements: list[dict[str, Any]]):
        super().__init__(task, verifier)
        self.world = world
        self.s = task.settings
        self._requirements = requirements  # verifier-side: the structured requirements
        self.shopping = self.s["kind"] == "shopping"
        self.cart: dict[str, int] = {}
        self.coupon_ids: list[str] = []
        self.lines: list[dict[str, Any]] = []
        self.page_size = int(self.s["page_size"])
        self.long = self.s.get("split") == "long"  # products listed briefly, their pages long (pages.py)
        self.added: list[str] = []  # the products of the successful adds, in order (a change fires after the k-th)

    # --- requirements --------------------------------------------------------------------------
    def requirements(self) -> list[Requirement]:
        return [Requirement(r["id"], r["text"], r["kind"]) for r in self.s["requirements"]]

    def action_origins(self, tool: str, arguments: Any) -> tuple[str, ...]:
        if tool == "submit":
            return tuple(r.id for r in self.requirements())
        return super().action_origins(tool, arguments)

    def _req(self, requirement: str) -> None:
        if requirement and not validate_origins(requirement_argument({"requirement": requirement}), self.requirements()):
            known = ", ".join(r.id for r in self.requirements())
            raise ToolError(f"unknown requirement {requirement[:40]!r}; this task's requirements are {known}.")

    def plan(self) -> dict[str, Any]:
        if self.shopping:
            return {"cart": dict(sorted(self.cart.items())), "coupons": list(self.coupon_ids)}
        return {"lines": [dict(x) for x in self.lines]}

    # --- reading the world ---------------------------------------------------------------------
    @tool("Search one catalog: products, flights, trains, hotels, restaurants or attractions. Filters that "
          "do not apply to the catalog are refused. Shows one page of matches.",
          catalog={"type": "string", "enum": CATALOGS}, category=_S, brand=_S, colour=_S, size=_S,
          city=_S, origin=_S, destination=_S, date=_S, cuisine=_S, min_price=_N, max_price=_N,
          min_rating={"type": "number", "minimum": 0, "maximum": 5, "default": 0},
          sort={"type": "string", "enum": SORTS, "default": ""},
          page={"type": "integer", "minimum": 1, "maximum": 1000, "default": 1}, requirement=REQUIREMENT)
    def search(self, catalog: str, page: int = 1, sort: str = "", requirement: str = "", **filters: Any) -> Observation:
        self._req(requirement)
        rows = self._matches(catalog, {k: v for k, v in filters.items() if v not in ("", 0, 0.0)})
        rows.sort(key=_SORT_KEYS[sort])
        pages = max(1, -(-len(rows) // self.page_size))
        if page > pages:
            raise ToolError(f"page {page} is out of range: {len(rows)} {catalog} match ({pages} page(s)).")
        shown = rows[(page - 1) * self.page_size: page * self.page_size]
        body = [f"search {catalog}: page {page} of {pages} ({len(rows)} matches)"]
        for x in shown:
            body.append(brief_line(x) if self.long and hasattr(x, "stock") else line(x))
            if hasattr(x, "free") and not self.shopping:
                body.append(free_nights(x, self.s["dates"][:-1] or self.s["dates"]))
        return Observation("\n".join(body), payload={"log": {"catalog": catalog, "page": page, "hits": len(rows)}})

    def _matches(self, catalog: str, f: dict[str, Any]) -> list[Any]:
        w = self.world
        allowed = {"products": {"category", "brand", "colour", "size", "min_price", "max_price", "min_rating"},
                   "flights": {"origin", "destination", "date", "min_price", "max_price"},
                   "hotels": {"city", "min_price", "max_price", "min_rating"},
                   "restaurants": {"city", "cuisine", "min_price", "max_price", "min_rating"},
                   "attractions": {"city", "min_price", "max_price", "min_rating"}}
        allowed["trains"] = allowed["flights"]
        bad = sorted(set(f) - allowed[catalog])
        if bad:
            raise ToolError(f"filter(s) {', '.join(bad)} do not apply to {catalog}; use {', '.join(sorted(allowed[catalog]))}.")
        tables: dict[str, list[Any]] = {
            "products": list(w.products.values()), "hotels": list(w.hotels.values()),
            "flights": [t for t in w.transports.values() if t.mode == "flight"],
            "trains": [t for t in w.transports.values() if t.mode == "train"],
            "restaurants": [v for v in w.venues.values() if v.kind == "restaurant"],
            "attractions": [v for v in w.venues.values() if v.kind == "attraction"]}
        table = tables[catalog]
        lo, hi = int(round(f.pop("min_price", 0) * 100)), f.pop("max_price", 0)
        rating = int(round(f.pop("min_rating", 0) * 10))
        top = int(round(hi * 100)) if hi else 0
        out = table
        for key, value in f.items():  # the exact filters first (a category keeps 1 product in 12); order is kept
            wanted = str(value).strip().lower()
            out = [x for x in out if str(getattr(x, key)).lower() == wanted]
        return [x for x in out if x.price >= lo and (not hi or x.price <= top) and getattr(x, "rating", 50) >= rating]

    @tool("Show one item in full by its id (a product, coupon, flight, train, hotel, restaurant or attraction).",
          item_id={"type": "string", "minLength": 1, "maxLength": 20}, requirement=REQUIREMENT)
    def details(self, item_id: str, requirement: str = "") -> Observation:
        self._req(requirement)
        x = self._item(item_id)
        if self.long and hasattr(x, "stock"):  # the long split's product page (pages.py)
            return Observation(product_page(x))
        text = line(x)
        if hasattr(x, "free"):
            text += "\n" + free_nights(x, [self.world.date(d) for d in range(self.world.params.days)])
        return Observation(text)

    def _item(self, item_id: str) -> Any:
        x = self.world.item(item_id.strip())
        if x is None:
            raise ToolError(f"no item has the id {item_id[:20]!r}; use an id that search showed.")
        return x

    @tool("Show the user's profile: where they live and today's date.", requirement=REQUIREMENT)
    def user_info(self, requirement: str = "") -> Observation:
        self._req(requirement)
        if not self.shopping:
            return Observation(f"traveller | lives in {self.s['home']} | trip {self.s['dates'][0]} to {self.s['dates'][-1]}")
        u = self.world.users[self.s["user"]]
        head = f"user {u.id} | {u.name} | lives in {u.city} | today is {self.world.today}"
        if self.s.get("profile"):  # a long task's standing preferences (long.py)
            return Observation("\n".join([head, *profile_lines(self.s)]))
        return Observation(head)

    @tool("List every coupon with its discount, minimum spend, category and whether it stacks.",
          requirement=REQUIREMENT)
    def coupons(self, requirement: str = "") -> Observation:
        self._req(requirement)
        return Observation("\n".join(["coupons:"] + [line(c) for _, c in sorted(self.world.coupons.items())]))

    @tool("Travel time: between two cities, the days a parcel takes (shopping); between two districts of a "
          "city, the minutes a trip takes (travel).",
          origin={"type": "string", "minLength": 1, "maxLength": 40},
          destination={"type": "string", "minLength": 1, "maxLength": 40}, requirement=REQUIREMENT)
    def route(self, origin: str, destination: str, requirement: str = "") -> Observation:
        self._req(requirement)
        a, b = origin.strip(), destination.strip()
        if a in CITIES and b in CITIES:
            days = shipping_days(a, b)
            return Observation(f"route {a} -> {b}: parcels take {days} day{'s' if days > 1 else ''} "
                               "(plus one day to dispatch)")
        if a in DISTRICTS and b in DISTRICTS:
            return Observation(f"route {a} -> {b}: {route_minutes(a, b)} minutes")
        raise ToolError(f"route needs two cities ({', '.join(CITIES)}) or two districts ({', '.join(DISTRICTS)}).")

    # --- editing the deliverable --------------------------------------------------------------
    @tool("Add to the deliverable. Shopping: a product with a quantity. Travel: a flight or train (day = the "
          "trip day it runs), a hotel (day = the night), or a restaurant or attraction (day and start time HH:MM).",
          item_id={"type": "string", "minLength": 1, "maxLength": 20},
          quantity={"type": "integer", "minimum": 1, "maximum": 99, "default": 1},
          day={"type": "integer", "minimum": 0, "maximum": 10, "default": 0},
          start={"type": "string", "maxLength": 5, "default": ""}, requirement=REQUIREMENT)
    def add(self, item_id: str, quantity: int = 1, day: int = 0, start: str = "", requirement: str = "") -> Observation:
        self._req(requirement)
        x = self._item(item_id)
        if self.shopping:
            return self._add_product(x, quantity)
        return self._add_line(x, day, start)

    def _add_product(self, x: Any, quantity: int) -> Observation:
        if not hasattr(x, "stock"):
            raise ToolError(f"{x.id} is not a product; this is a shopping task (add products, apply coupons).")
        have = self.cart.get(x.id, 0)
        if x.stock == 0 or have + quantity > x.stock:
            raise PreconditionError(f"{x.id} has {x.stock} in stock; the cart would hold {have + quantity}.")
        self.cart[x.id] = have + quantity
        self.added.append(x.id)
        change = self.s.get("change")
        if change and len(self.added) == change["after_adds"]:  # a long task's price rise (changes.py)
            self.world = changed_world(self.world, change)
        return Observation(f"cart: added {quantity} x {x.id}; the cart holds {self.cart[x.id]} x {x.id}.")

    def _add_line(self, x: Any, day: int, start: str) -> Observation:
        if hasattr(x, "stock") or hasattr(x, "threshold"):
            raise ToolError(f"{x.id} is not a travel item; this is a travel task (add transport, hotels, venues).")
        days = self.s["days"]
        if not 1 <= day <= days:
            raise ToolError(f"day must be 1 to {days} for this {days}-day trip.")
        date = self.s["dates"][day - 1]
        entry: dict[str, Any] = {"day": day, "item": x.id, "start": None}
        if hasattr(x, "mode"):
            if x.date != date:
                raise PreconditionError(f"{x.id} runs on {x.date}; day {day} is {date}.")
        elif hasattr(x, "free"):
            if day == days:
                raise PreconditionError(f"day {day} is the last day: there is no night to stay.")
            if date not in x.free:
                raise PreconditionError(f"{x.id} has no free room on the night of {date}.")
            if any(ln["day"] == day and hasattr(self.world.item(ln["item"]), "free") for ln in self.lines):
                raise PreconditionError(f"the night of day {day} already has a hotel; remove it first.")
        else:
            minutes = _clock(start)
            if not (x.opens <= minutes and minutes + x.duration <= x.closes):
                raise PreconditionError(f"{x.id} is open {clock(x.opens)}-{clock(x.closes)}; a {x.duration}-minute "
                                        f"{'meal' if x.kind == 'restaurant' else 'visit'} at {start} does not fit.")
            entry["start"] = minutes
        self.lines.append(entry)
        when = f" at {clock(entry['start'])}" if entry["start"] is not None else ""
        return Observation(f"plan: added {x.id} on day {day}{when}.")

    @tool("Remove an item from the deliverable (travel: from the given day).",
          item_id={"type": "string", "minLength": 1, "maxLength": 20},
          day={"type": "integer", "minimum": 0, "maximum": 10, "default": 0}, requirement=REQUIREMENT)
    def remove(self, item_id: str, day: int = 0, requirement: str = "") -> Observation:
        self._req(requirement)
        x = self._item(item_id)
        if self.shopping:
            if x.id not in self.cart:
                raise PreconditionError(f"{x.id} is not in the cart.")
            del self.cart[x.id]
            return Observation(f"cart: removed {x.id}.")
        kept = [ln for ln in self.lines if not (ln["item"] == x.id and ln["day"] == day)]
        if len(kept) == len(self.lines):
            raise PreconditionError(f"{x.id} is not in the plan on day {day}.")
        self.lines = kept
        return Observation(f"plan: removed {x.id} from day {day}.")

    @tool("Apply a coupon to the cart (shopping).", coupon_id={"type": "string", "minLength": 1, "maxLength": 10},
          requirement=REQUIREMENT)
    def apply_coupon(self, coupon_id: str, requirement: str = "") -> Observation:
        self._req(requirement)
        c = self._coupon(coupon_id)
        if c.id in self.coupon_ids:
            raise PreconditionError(f"coupon {c.id} is already applied.")
        problem = rules.coupon_problem(self.world, {**self.plan(), "coupons": self.coupon_ids + [c.id]}, c.id)
        if problem:
            raise PreconditionError(problem + ".")
        self.coupon_ids.append(c.id)
        return Observation(f"cart: coupon {c.id} applied; the total is now {money(rules.shop_total(self.world, self.plan()))}.")

    @tool("Remove an applied coupon (shopping).", coupon_id={"type": "string", "minLength": 1, "maxLength": 10},
          requirement=REQUIREMENT)
    def remove_coupon(self, coupon_id: str, requirement: str = "") -> Observation:
        self._req(requirement)
        c = self._coupon(coupon_id)
        if c.id not in self.coupon_ids:
            raise PreconditionError(f"coupon {c.id} is not applied.")
        self.coupon_ids.remove(c.id)
        return Observation(f"cart: coupon {c.id} removed.")

    def _coupon(self, coupon_id: str) -> Any:
        if not self.shopping:
            raise ToolError("coupons apply to shopping tasks; this is a travel task.")
        c = self.world.coupons.get(coupon_id.strip())
        if c is None:
            raise ToolError(f"no coupon has the id {coupon_id[:10]!r}; coupons() lists them.")
        return c

    # --- checking and submitting ---------------------------------------------------------------
    @tool("Check the current cart or plan: totals, and any commonsense problem (stock, coupons, hotel nights, "
          "opening hours, overlaps, transport). It does not judge the task's requirements.", requirement=REQUIREMENT)
    def check(self, requirement: str = "") -> Observation:
        self._req(requirement)
        from pushbench.tasks.planning.report import check_text

        return Observation(check_text(self.world, self.s, self.plan()))

    @tool("Submit the current cart or plan as your deliverable. This ends the episode.", requirement=REQUIREMENT)
    def submit(self, requirement: str = "") -> Observation:
        self._req(requirement)
        verdict = rules.judge(self.world, self.s, self._requirements, self.plan())
        self.verifier.judge(self.steps, "deliverable", passed=verdict["success"])
        self.end("final", reported=None)
        what = "cart" if self.shopping else "plan"
        return Observation(f"submit: your {what} was submitted; the episode ends.", done=True,
                           payload={"log": {"verdict": verdict, "plan": self.plan()}})


def _clock(text: str) -> int:
    t = text.strip()
    if len(t) != 5 or t[2] != ":" or not (t[:2] + t[3:]).isdigit() or int(t[:2]) > 23 or int(t[3:]) > 59:
        raise ToolError(f"start must be a time HH:MM (like 12:30), not {text[:5]!r}.")
    return parse_clock(t)


_SORT_KEYS = {"": lambda x: x.id, "price_asc": lambda x: (x.price, x.id), "price_desc": lambda x: (-x.price, x.id),
              "rating_desc": lambda x: (-getattr(x, "rating", 0), x.id),
              "reviews_desc": lambda x: (-getattr(x, "reviews", 0), x.id)}
