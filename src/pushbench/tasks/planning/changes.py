"""A fact that changes mid-episode (the long split, issue 30): a product's price rises after the
agent's k-th ``add``, so what the first lookups showed is superseded and stale evidence misleads.

A long task's settings carry ``change = {"product", "after_adds", "from", "to"}`` (not its
objective: nothing announces it). After the k-th successful ``add`` the environment serves a world
in which that product costs ``to`` (``changed_world``): search rows, its page and ``check`` show the
new price from then on, earlier observations stay as they were, and ``submit`` judges the cart at
the prices of that moment. The build plants it where it matters (``plant``): on a product of the
cart sim/perfect builds from the first prices, raised just enough that this cart is over the
budget whatever coupons it takes, while swapping that product for a cheaper fitting one repairs it.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from pushbench.tasks.planning import rules, shopping
from pushbench.tasks.planning.world import World

STEP = 500  # a rise moves a price in whole $5 steps (prices keep their look: $23.94 -> $28.94)
MAX_RISE = 0.6  # ... by at most 60% of the old price (a plausible price change, not a new product)


def changed_world(world: World, change: dict[str, Any]) -> World:
    """The world after the change: the same tables, one product at its new price."""
    product = world.products[change["product"]]
    return World(world.params, products={**world.products, product.id: replace(product, price=int(change["to"]))},
                 coupons=world.coupons, users=world.users, transports=world.transports, hotels=world.hotels,
                 venues=world.venues)


def _fails_with_any_coupons(world: World, settings: dict, reqs: list[dict], cart: dict[str, int]) -> bool:
    plan = {"cart": cart, "coupons": []}
    return not rules.judge(world, settings, reqs, {**plan, "coupons": shopping.best_coupons(world, plan)})["success"]


def _repairable(world: World, settings: dict, reqs: list[dict], cart: dict[str, int], pid: str) -> bool:
    """Some other product of the category, cheaper than the raised one, makes the cart pass again."""
    p = world.products[pid]
    for q in sorted((q for q in world.products.values() if q.category == p.category and q.id != pid
                     and q.price < p.price), key=lambda q: (q.price, q.id)):
        swapped = {k: v for k, v in cart.items() if k != pid} | {q.id: cart[pid]}
        if not _fails_with_any_coupons(world, settings, reqs, swapped):
            return True
    return False


def candidates(world: World, settings: dict, reqs: list[dict], cart: dict[str, int], adds: list[str],
               rng: random.Random) -> list[dict[str, Any]]:
    """Changes that break this cart (over the budget at the new price with any coupons) and that a
    swap repairs, in a seeded order; each fires after a drawn add at or after the product's own."""
    out = []
    for pid in rng.sample(sorted(cart), len(cart)):
        if pid not in adds:
            continue
        old = world.products[pid].price
        for rise in range(STEP, int(old * MAX_RISE) + 1, STEP):
            change = {"product": pid, "from": old, "to": old + rise}
            after = changed_world(world, change)
            if _fails_with_any_coupons(after, settings, reqs, cart):
                if _repairable(after, settings, reqs, cart, pid):
                    first = adds.index(pid) + 1
                    out.append({**change, "after_adds": rng.randrange(first, len(adds) + 1)})
                break
    return out


def stale_breaks(world: World, settings: dict, reqs: list[dict], plan: dict[str, Any], change: dict) -> bool:
    """The cart planned at the first prices fails once the change has happened."""
    return not rules.judge(changed_world(world, change), settings, reqs, plan)["success"]
