"""The planning family's world, generated from a seed: a shopping catalog with coupons and user
profiles, and a small travel database (dated flights and trains, hotels with free nights,
restaurants and attractions with opening hours, prices and districts, a route-time table).

Everything here is agent-visible: the tools serve it. It is a pure function of ``WorldParams``
(recorded in every task's settings), so the environment rebuilds the same world in any process
and nothing of it needs a file, least of all one under ``data/hidden``. Money is in cents, times
in minutes after midnight.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

import random

CITIES = ("Lyon", "Porto", "Gdansk", "Turin", "Leeds", "Ghent", "Bergen", "Graz")
_COORDS = {"Lyon": (45.8, 4.8), "Porto": (41.2, -8.6), "Gdansk": (54.4, 18.6), "Turin": (45.1, 7.7),
           "Leeds": (53.8, -1.5), "Ghent": (51.1, 3.7), "Bergen": (60.4, 5.3), "Graz": (47.1, 15.4)}
CATEGORIES = {  # category -> sizes it comes in
    "headphones": ("one size",), "running shoes": ("40", "41", "42", "43", "44"),
    "backpack": ("S", "M", "L"), "t-shirt": ("S", "M", "L", "XL"), "jacket": ("S", "M", "L", "XL"),
    "water bottle": ("0.5 l", "0.75 l", "1 l"), "desk lamp": ("one size",), "keyboard": ("US", "UK", "DE"),
    "mug": ("300 ml", "450 ml"), "yoga mat": ("4 mm", "6 mm"), "sunglasses": ("one size",),
    "watch": ("38 mm", "42 mm"),
}
BRANDS = ("Acme", "Borealis", "Cobalt", "Dunmore", "Ember", "Fjord", "Granite", "Halcyon", "Ionic", "Juniper")
COLOURS = ("black", "white", "red", "blue", "green", "grey", "yellow", "navy")
BASE_PRICE = {"headphones": 90, "running shoes": 110, "backpack": 70, "t-shirt": 25, "jacket": 140,
              "water bottle": 20, "desk lamp": 45, "keyboard": 80, "mug": 15, "yoga mat": 35,
              "sunglasses": 60, "watch": 150}
CUISINES = ("italian", "japanese", "mexican", "indian", "french", "vegetarian", "seafood", "thai")
DISTRICTS = ("Old Town", "Harbour", "University", "Riverside", "Market", "Hillside")
NAMES = ("Aurora", "Beacon", "Cedar", "Delta", "Echo", "Falcon", "Garnet", "Harbor", "Iris", "Jade",
         "Kestrel", "Lumen", "Maple", "Nova", "Orchid", "Pine", "Quartz", "Raven", "Sable", "Tide")
PLACES = ("Museum", "Tower", "Gardens", "Cathedral", "Gallery", "Castle", "Aquarium", "Observatory",
          "Market Hall", "Old Bridge")
START_DATE = dt.date(2026, 3, 2)  # the travel database's first day; the shopping "today" is the day before


@dataclass(frozen=True)
class WorldParams:
    seed: int
    products_per_category: int = 200
    coupons: int = 30
    users: int = 6
    travel_cities: int = 6
    days: int = 10  # dated transport on this many days from START_DATE
    flights_per_day: int = 3
    trains_per_day: int = 2
    hotels_per_city: int = 8
    restaurants_per_city: int = 12
    attractions_per_city: int = 8


@dataclass(frozen=True)
class Product:
    id: str
    name: str
    category: str
    brand: str
    colour: str
    size: str
    price: int
    rating: int  # tenths of a star: 43 is 4.3
    reviews: int
    stock: int
    origin: str  # the city it ships from


@dataclass(frozen=True)
class Coupon:
    id: str
    category: str  # a category, or "all"
    percent: int  # percent off the eligible subtotal, or 0
    amount: int  # cents off, or 0
    threshold: int  # eligible subtotal (cents) needed
    stackable: bool  # a non-stackable coupon must be the only coupon


@dataclass(frozen=True)
class User:
    id: str
    name: str
    city: str


@dataclass(frozen=True)
class Transport:
    id: str
    mode: str  # flight | train
    origin: str
    destination: str
    date: str
    depart: int
    arrive: int
    price: int


@dataclass(frozen=True)
class Hotel:
    id: str
    name: str
    city: str
    district: str
    price: int  # per night
    rating: int
    free: tuple[str, ...]  # dates (nights) with a free room


@dataclass(frozen=True)
class Venue:
    """A restaurant (price per person, a meal of 60 minutes) or an attraction (ticket, a visit)."""

    id: str
    kind: str  # restaurant | attraction
    name: str
    city: str
    district: str
    price: int
    rating: int
    opens: int
    closes: int
    duration: int  # minutes a meal or visit takes
    cuisine: str = ""


@dataclass
class World:
    params: WorldParams
    products: dict[str, Product] = field(default_factory=dict)
    coupons: dict[str, Coupon] = field(default_factory=dict)
    users: dict[str, User] = field(default_factory=dict)
    transports: dict[str, Transport] = field(default_factory=dict)
    hotels: dict[str, Hotel] = field(default_factory=dict)
    venues: dict[str, Venue] = field(default_factory=dict)

    @property
    def today(self) -> str:
        return (START_DATE - dt.timedelta(days=1)).isoformat()

    def date(self, offset: int) -> str:
        return (START_DATE + dt.timedelta(days=offset)).isoformat()

    def travel_cities(self) -> tuple[str, ...]:
        return CITIES[: self.params.travel_cities]

    def item(self, item_id: str) -> Any:
        if not hasattr(self, "_index"):
            self._index = {k: v for t in (self.products, self.coupons, self.transports, self.hotels, self.venues)
                           for k, v in t.items()}
        return self._index.get(item_id)

    def digest(self) -> str:
        """A short hash of the world's content (recorded in the manifest; the environment checks it)."""
        if not hasattr(self, "_digest"):
            self._digest = hashlib.sha256(self.canonical().encode()).hexdigest()[:16]
        return self._digest

    def canonical(self) -> str:
        tables = {n: [asdict(v) for _, v in sorted(getattr(self, n).items())]
                  for n in ("products", "coupons", "users", "transports", "hotels", "venues")}
        return json.dumps(tables, sort_keys=True)


def shipping_days(origin: str, destination: str) -> int:
    """Days a parcel takes between two cities (the route table's shopping half)."""
    if origin == destination:
        return 1
    (a, b), (c, d) = _COORDS[origin], _COORDS[destination]
    km = 111 * math.hypot(a - c, (b - d) * 0.7)
    return 1 + int(km // 700)


def delivery_date(today: str, origin: str, destination: str) -> str:
    return (dt.date.fromisoformat(today) + dt.timedelta(days=1 + shipping_days(origin, destination))).isoformat()


def route_minutes(a: str, b: str) -> int:
    """Minutes between two districts of a city (the route table's travel half)."""
    if a == b:
        return 5
    i, j = DISTRICTS.index(a), DISTRICTS.index(b)
    return 8 + 3 * abs(i - j)


def _shop(world: World, rng: random.Random) -> None:
    p = world.params
    n = 0
    for category, sizes in CATEGORIES.items():
        brands = rng.sample(BRANDS, 6)
        base = BASE_PRICE[category]
        for _ in range(p.products_per_category):
            n += 1
            brand = rng.choice(brands)
            price = int(round(base * (rng.uniform(0.55, 1.6)) * 100 / 5)) * 5 - 1
            stock = 0 if rng.random() < 0.1 else rng.randrange(1, 40)
            world.products[f"P{n:04d}"] = Product(
                f"P{n:04d}", f"{brand} {rng.choice(NAMES)} {category}", category, brand,
                rng.choice(COLOURS), rng.choice(sizes), price, rng.randrange(28, 50),
                rng.randrange(3, 2500), stock, rng.choice(CITIES))
    for k in range(1, p.coupons + 1):
        category = "all" if k % 5 == 0 else rng.choice(list(CATEGORIES))
        percent = rng.choice([5, 10, 15, 20]) if k % 2 else 0
        amount = 0 if percent else rng.choice([5, 10, 15, 20, 30]) * 100
        threshold = rng.choice([20, 30, 50, 80, 100, 150]) * 100
        world.coupons[f"C{k:02d}"] = Coupon(f"C{k:02d}", category, percent, amount, threshold, bool(rng.random() < 0.6))
    for k in range(1, p.users + 1):
        world.users[f"U{k}"] = User(f"U{k}", f"{rng.choice(NAMES)} {rng.choice(PLACES).split()[0]}",
                                    CITIES[(k * 3) % len(CITIES)])


def _transport(world: World, rng: random.Random) -> None:
    p, n = world.params, 0
    cities = world.travel_cities()
    for day in range(p.days):
        for a in cities:
            for b in cities:
                if a == b:
                    continue
                hours = shipping_days(a, b)  # distance class 1-3
                for mode, count in (("flight", p.flights_per_day), ("train", p.trains_per_day)):
                    for _ in range(count):
                        n += 1
                        length = (60 + 35 * hours if mode == "flight" else 150 + 120 * hours) + rng.randrange(0, 40)
                        depart = rng.randrange(6 * 12, 21 * 12) * 5
                        if depart + length > 23 * 60 + 55:
                            depart = 23 * 60 + 55 - length - 5 * rng.randrange(0, 12)
                        price = (50 + 30 * hours if mode == "flight" else 30 + 20 * hours) + rng.randrange(0, 60)
                        tid = f"{'F' if mode == 'flight' else 'T'}{n:04d}"
                        world.transports[tid] = Transport(tid, mode, a, b, world.date(day), depart, depart + length,
                                                          price * 100)


def _places(world: World, rng: random.Random) -> None:
    p, h, v = world.params, 0, 0
    dates = [world.date(d) for d in range(p.days)]
    for city in world.travel_cities():
        for _ in range(p.hotels_per_city):
            h += 1
            free = tuple(d for d in dates if rng.random() < 0.75)
            world.hotels[f"H{h:03d}"] = Hotel(f"H{h:03d}", f"Hotel {rng.choice(NAMES)}", city,
                                              rng.choice(DISTRICTS), rng.randrange(12, 36) * 500,
                                              rng.randrange(28, 50), free)
        for k in range(p.restaurants_per_city + p.attractions_per_city):
            v += 1
            restaurant = k < p.restaurants_per_city
            opens = rng.choice([7, 8, 9, 11, 12, 17]) * 60 if restaurant else rng.choice([8, 9, 10, 11]) * 60
            closes = (rng.choice([15, 16, 22, 23]) * 60 if restaurant
                      else rng.choice([16, 17, 18, 20]) * 60)
            if restaurant and opens >= 17 * 60:
                closes = 23 * 60
            price = rng.randrange(12, 70) * 100 if restaurant else rng.randrange(0, 30) * 100
            cuisine = rng.choice(CUISINES) if restaurant else ""
            name = (f"{rng.choice(NAMES)} {cuisine.title()} Kitchen" if restaurant
                    else f"{rng.choice(NAMES)} {rng.choice(PLACES)}")
            world.venues[f"V{v:03d}"] = Venue(
                f"V{v:03d}", "restaurant" if restaurant else "attraction", name, city, rng.choice(DISTRICTS),
                price, rng.randrange(28, 50), opens, closes,
                60 if restaurant else rng.choice([60, 90, 120]), cuisine)


@lru_cache(maxsize=4)
def build_world(params: WorldParams) -> World:
    """The world for these params (cached per process: the tools of every episode share it)."""
    rng = random.Random(f"planning-world-{params.seed}")
    world = World(params)
    _shop(world, rng)
    _transport(world, rng)
    _places(world, rng)
    return world


def world_params(params: dict[str, Any], seed: int) -> WorldParams:
    """The family params' ``world`` block as WorldParams."""
    return WorldParams(seed=seed, **dict(params.get("world") or {}))
