"""Shopping tasks, generated backwards: pick the cart first (1-3 products, quantities, the best
coupons), then state requirements that cart satisfies. Each requirement must have a near miss: a
one-change variant of the cart (another product of the same category, a quantity off by one, a
coupon dropped) that breaks that requirement and nothing else, so a careless plan fails it.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import random

from pushbench.tasks.planning import rules
from pushbench.tasks.planning.world import CATEGORIES, World, delivery_date

LEVEL_ITEMS = {1: 1, 2: 2, 3: 3}  # products per cart by level
NEAR_CANDIDATES = 30  # same-category products tried per line when looking for near misses


def best_coupons(world: World, plan: dict[str, Any]) -> list[str]:
    """The applicable coupon set (one, or two stackable ones) with the largest discount."""
    usable = [c for c in sorted(world.coupons) if rules.coupon_problem(world, {**plan, "coupons": []}, c) is None]
    options: list[list[str]] = [[c] for c in usable]
    options += [list(pair) for pair in combinations(usable, 2)
                if all(world.coupons[c].stackable for c in pair)]
    best, saving = [], 0
    for option in options:
        trial = {**plan, "coupons": option}
        if all(rules.coupon_problem(world, trial, c) is None for c in option):
            s = rules.shop_subtotal(world, trial) - rules.shop_total(world, trial)
            if s > saving:
                best, saving = option, s
    return best


def _spec(world: World, rng: random.Random, product: Any, level: int, paired: bool) -> dict[str, Any]:
    keys = ["colour", "brand"] + (["size"] if len(CATEGORIES[product.category]) > 1 else [])
    if paired:
        keys.remove("brand")  # the pairing requirement names the brand relation instead
    n = max(1, min(len(keys), (2 if level == 1 else rng.randrange(1, 3))))
    chosen = [keys[i] for i in sorted(rng.sample(range(len(keys)), n))]
    return {"kind": "item", "category": product.category, "attrs": {k: getattr(product, k) for k in chosen}}


def _item_requirements(world: World, rng: random.Random, product: Any, qty: int) -> list[dict[str, Any]]:
    c = product.category
    pool = [{"kind": "rating", "category": c, "min": int(product.rating - rng.randrange(0, 3))},
            {"kind": "price", "category": c, "max": int(math.ceil((product.price + 1) / 500) * 500)}]
    if qty > 1:
        pool.insert(0, {"kind": "quantity", "category": c, "qty": qty})
    return pool


def _global_requirements(world: World, rng: random.Random, plan: dict, products: list[Any],
                         user: Any, level: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    total = rules.shop_total(world, plan)
    out.append({"kind": "budget", "scope": "cart", "max": int(math.ceil(total / 100) * 100)})
    latest = max(delivery_date(world.today, p.origin, user.city) for p in products)
    out.append({"kind": "delivery", "by": latest})
    brands = {p.brand for p in products}
    # an excluded brand or origin that a product fitting an item's description has: a real trap
    lookalikes = [q for p in products for q in world.products.values()
                  if q.category == p.category and q.colour == p.colour and q.id != p.id]
    others = sorted({q.brand for q in lookalikes} - brands)
    if others and level == 3:
        out.append({"kind": "exclude_brand", "brand": rng.choice(others)})
    origins = sorted({q.origin for q in lookalikes} - {p.origin for p in products})
    if origins and level == 3:
        out.append({"kind": "exclude_origin", "city": rng.choice(origins)})
    return out


def mutations(world: World, plan: dict[str, Any]) -> list[dict[str, Any]]:
    """One-change variants of a cart: a coupon dropped, a quantity off by one, a product swapped
    within its category (the most similar products first: the likeliest mix-ups), lines in turn."""
    out: list[dict[str, Any]] = []
    for c in plan["coupons"]:
        out.append({"cart": dict(plan["cart"]), "coupons": [x for x in plan["coupons"] if x != c]})
    swaps: list[list[dict[str, Any]]] = []
    for pid, qty in sorted(plan["cart"].items()):
        for dq in (-1, 1):
            if qty + dq >= 1:
                out.append({"cart": {**plan["cart"], pid: qty + dq}, "coupons": list(plan["coupons"])})
        p = world.products[pid]
        same = [q for q in world.products.values() if q.category == p.category and q.id != pid]
        same.sort(key=lambda q: (-sum(getattr(q, k) == getattr(p, k) for k in ("brand", "colour", "size", "origin")),
                                 abs(q.price - p.price), q.id))
        line = []
        for q in same[:NEAR_CANDIDATES]:
            cart = {k: v for k, v in plan["cart"].items() if k != pid}
            cart[q.id] = qty
            line.append({"cart": dict(sorted(cart.items())), "coupons": list(plan["coupons"])})
        swaps.append(line)
    out += [v for group in zip(*swaps) for v in group]
    return out


def near_misses(world: World, settings: dict, reqs: list[dict], plan: dict) -> dict[str, dict]:
    """For each requirement, the first mutation that fails it alone (commonsense intact)."""
    found: dict[str, dict] = {}
    for variant in mutations(world, plan):
        verdict = rules.judge(world, settings, reqs, variant)
        failed = [k for k, ok in verdict["requirements"].items() if not ok]
        if len(failed) == 1 and all(verdict["commonsense"].values()) and failed[0] not in found:
            found[failed[0]] = variant
        if len(found) == len(reqs):
            break
    return found


def make_task(world: World, rng: random.Random, level: int, n_range: tuple[int, int]) -> dict[str, Any] | None:
    """One shopping task (settings, requirements, the generating plan, near misses), or None."""
    user = world.users[rng.choice(sorted(world.users))]
    cats = rng.sample(list(CATEGORIES), LEVEL_ITEMS[level])
    products: list[Any] = []
    paired = level == 3 and rng.random() < 0.6
    for i, c in enumerate(cats):
        pool = [p for p in world.products.values() if p.category == c and p.stock >= 3]
        if paired and i == 1:
            pool = [p for p in pool if p.brand == products[0].brand]
        if not pool:
            return None
        products.append(pool[rng.randrange(len(pool))])
    qtys = [rng.choice([1, 1, 1, 2, 3]) for _ in products]
    plan = {"cart": {p.id: q for p, q in zip(products, qtys)}, "coupons": []}
    if level >= 2:
        plan["coupons"] = best_coupons(world, plan)
    settings = {"kind": "shopping", "level": level, "user": user.id, "city": user.city,
                "categories": sorted(p.category for p in products)}
    reqs: list[dict[str, Any]] = []
    extra: list[dict[str, Any]] = []
    for i, (p, q) in enumerate(zip(products, qtys)):
        reqs.append(_spec(world, rng, p, level, paired and i < 2))
        stated = _item_requirements(world, rng, p, q)
        if q > 1:
            reqs.append(stated.pop(0))  # a quantity above one is always stated
        extra += stated
    if paired:
        reqs.append({"kind": "pairing", "a": products[0].category, "b": products[1].category})
    rng.shuffle(extra)
    if level >= 2:  # the budget after coupons always counts (the point of DeepPlanning's carts)
        budget, *others = _global_requirements(world, rng, plan, products, user, level)
        extra = others + extra
        rng.shuffle(extra)
        extra.insert(0, budget)
    lo, hi = n_range
    target = rng.randrange(lo, hi + 1)
    reqs += extra[: max(0, target - len(reqs))]
    reqs = reqs[:hi]
    near = _settle(world, settings, reqs, plan, lo)
    if near is None:
        return None
    return {"settings": settings, "requirements": reqs, "plan": plan, "near_misses": near}


def _settle(world: World, settings: dict, reqs: list[dict], plan: dict, lo: int) -> dict[str, dict] | None:
    """Number the requirements and find their near misses; a requirement other than an item spec
    that has none is dropped (it would hold for free). None if the task falls apart."""
    for attempt in range(2):
        for k, r in enumerate(reqs, 1):
            r["id"] = f"req:{k}"
        if len(reqs) < lo or not rules.judge(world, settings, reqs, plan)["success"]:
            return None
        near = near_misses(world, settings, reqs, plan)
        missing = [r for r in reqs if r["id"] not in near]
        if not missing:
            return near
        if attempt or any(r["kind"] == "item" for r in missing):
            return None
        reqs[:] = [r for r in reqs if r["id"] in near]
    return None
