"""Product pages of the long split (``long.py``): search shows a product's brief line (no stock, no
shipping city, as a shop's result list does); ``details`` shows its page: the full catalog line,
a description, specifications and customer reviews, written from the product's fields with a
generator seeded by its id (the same page every time). A page is ~2k tokens.
"""

from __future__ import annotations

import random
from typing import Any

from pushbench.tasks.planning.render import line
from pushbench.tasks.planning.texts import money, stars

REVIEWS = 40  # reviews shown on a page (the most helpful first, as shops list them)
_OPENERS = ("Bought this for everyday use.", "Ordered it as a gift.", "Second one I have bought.",
            "Replaced an older model with this.", "Got it on a recommendation from a friend.",
            "Picked it after comparing a few options.", "Needed one quickly for a trip.")
_PRAISE = ("The {colour} colour looks exactly like the photos.", "Build quality is better than the price suggests.",
           "Size {size} fits what I needed.", "It arrived well packed and on time.",
           "Feels solid and well made.", "Does what it says, nothing more and nothing less.",
           "{brand} has been reliable for me before, and this is no different.")
_GRIPES = ("The packaging was excessive.", "Instructions could be clearer.", "Slightly heavier than expected.",
           "The finish picks up marks easily.", "Took a day longer than the estimate to arrive.",
           "Wish it came in more colours.", "Customer service was slow to answer a question.")
_NAMES = ("Alex", "Sam", "Jordan", "Robin", "Charlie", "Morgan", "Taylor", "Jamie", "Casey", "Riley", "Quinn",
          "Avery", "Parker", "Drew", "Kai", "Noor", "Mika", "Lou")


def brief_line(x: Any) -> str:
    """A product as a search result lists it in the long split: no stock, no shipping city."""
    return (f"{x.id} | {x.name} | {x.category} | brand {x.brand} | colour {x.colour} | size {x.size} | "
            f"{money(x.price)} | rating {stars(x.rating)} ({x.reviews} reviews) | stock and shipping on its page")


def product_page(x: Any) -> str:
    rng = random.Random(f"page-{x.id}")
    fields = {"colour": x.colour, "size": x.size, "brand": x.brand}
    out = [line(x), "", f"About the {x.name}:",
           f"The {x.name} is a {x.colour} {x.category} from {x.brand}, size {x.size}. "
           f"It ships from {x.origin}; {x.stock} in stock. "
           + " ".join(rng.sample([p.format(**fields) for p in _PRAISE], 3)),
           "", "Specifications:",
           f"  brand: {x.brand}", f"  colour: {x.colour}", f"  size: {x.size}", f"  category: {x.category}",
           f"  price: {money(x.price)}", f"  ships from: {x.origin}", f"  warehouse stock: {x.stock}",
           "", f"Customer reviews (average {stars(x.rating)} from {x.reviews}; the {REVIEWS} most helpful):"]
    for _ in range(REVIEWS):
        stars_given = max(1, min(5, round(x.rating / 10 + rng.uniform(-1.5, 1.0))))
        text = " ".join([rng.choice(_OPENERS), *rng.sample([p.format(**fields) for p in _PRAISE], 2),
                         rng.choice(_GRIPES)])
        out.append(f"  {'*' * stars_given}{'.' * (5 - stars_given)} {rng.choice(_NAMES)}: {text} "
                   f"({rng.randrange(0, 60)} found this helpful)")
    return "\n".join(out)
