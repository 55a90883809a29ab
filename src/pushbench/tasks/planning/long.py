"""The long-horizon split of planning (issue 30): a household order of many products whose standing
preferences sit only in the user's profile.

A long task is a shopping task (same world, tools, rules and verifier as the short ones) for a
cart of ``items`` products from different categories, with quantities, a budget after coupons for
the whole cart and delivery by a date. Its ``profile`` requirements (an excluded brand or shipping
city, the delivery date) are not in the task text: the text lists their ids and says they are in
the user's profile, and ``user_info`` states them (``texts.profile_lines``). So what the first lookups
show decides the last actions: which products may go in the cart, which coupons bring the total
under the budget, and the cart itself (what was added 40 actions ago).

A fact changes mid-episode (``changes.py``): after the agent's k-th add one product's price rises,
unannounced (``settings.change``), so the cart planned from the first prices breaks: over the budget
whatever coupons it takes, unless that product is swapped for a cheaper fitting one. Only a reader
that checks the cart before submitting (``check`` shows today's prices) and repairs it succeeds.

Length by need: per product a search (``page_size`` hits a page, catalog lines of ~45 tokens), its
page and an add, plus the profile, the routes of the shipping cities, the coupons, a check and the
repair. Each draw is played by sim/perfect at build time (``plant_change``): once without the change
(its cart must break under the change) and once with it, which must succeed within
``max_oracle_fraction`` of the budget, need at least ``min_oracle_steps`` actions and end with a
transcript of at least ``min_transcript_tokens``, else the draw is discarded (the build fails when
too few pass).
"""

from __future__ import annotations

import random
from dataclasses import asdict
from typing import Any

from pushbench.tasks.base import BuiltTask, TaskSpec
from pushbench.tasks.planning import changes, rules, shopping
from pushbench.tasks.planning.texts import POINTER
from pushbench.tasks.planning.world import CATEGORIES, World, WorldParams

PROFILE_KINDS = ("exclude_brand", "exclude_origin", "delivery")  # what a profile states
MIN_PROFILE = 2  # profile requirements a task keeps at least (each with its near miss)
OBJECTIVE = (
    "Shopping for user {user}: a household order. Fill the cart so that every requirement below holds, then "
    "call submit once (it ends the episode and the cart is judged as it is).\nRequirements:\n{reqs}\n"
    "Your profile (user_info) states your standing preferences; each has its requirement id above and counts "
    "like any other. Commonsense rules also count: every product in stock, one product per item asked for, "
    "every applied coupon applicable (minimum spend on its category, a non-stackable coupon alone). Delivery "
    "takes one day to dispatch plus the route days from where a product ships to where the user lives "
    "(user_info). Use search (catalog products; filters category, brand, colour, size, min_price, max_price, "
    "min_rating; sort; pages), details, user_info, coupons, route, add, remove, apply_coupon, remove_coupon "
    "and check. You have {budget} actions.")


def objective(settings: dict[str, Any], budget: int) -> str:
    reqs = "\n".join(f"- {r['id']}: {r['text']}" for r in settings["requirements"])
    return OBJECTIVE.format(user=settings["user"], reqs=reqs, budget=budget)


def make_task(world: World, rng: random.Random, n_items: int, n_extra: int) -> dict[str, Any] | None:
    """One long task (settings, requirements, the plan, near misses), or None when the draw fails."""
    user = world.users[rng.choice(sorted(world.users))]
    cats = rng.sample(sorted(CATEGORIES), n_items)
    products = []
    for c in cats:
        pool = [p for p in world.products.values() if p.category == c and p.stock >= 3]
        if not pool:
            return None
        products.append(pool[rng.randrange(len(pool))])
    qtys = [rng.choice([1, 1, 1, 2, 3]) for _ in products]
    plan = {"cart": {p.id: q for p, q in zip(products, qtys)}, "coupons": []}
    plan["coupons"] = shopping.best_coupons(world, plan)
    settings = {"kind": "shopping", "level": n_items, "user": user.id, "city": user.city,
                "categories": sorted(p.category for p in products), "split": "long"}
    reqs: list[dict[str, Any]] = []
    extra: list[dict[str, Any]] = []
    for p, q in zip(products, qtys):
        reqs.append(shopping._spec(world, rng, p, 2, False))
        stated = shopping._item_requirements(world, rng, p, q)
        if q > 1:
            reqs.append(stated.pop(0))
        extra += stated
    budget, *profile = shopping._global_requirements(world, rng, plan, products, user, 3)
    budget["max"] += rng.randrange(2, 6) * 500  # $10-25 of room, so a product swap can stay within it
    rng.shuffle(extra)
    reqs += [budget, *extra[:n_extra], *profile]
    near = shopping._settle(world, settings, reqs, plan, n_items + 1)  # drops a limit that has no near miss
    kinds = [r["kind"] for r in reqs]
    if near is None or "budget" not in kinds or sum(k in PROFILE_KINDS for k in kinds) < MIN_PROFILE:
        return None
    return {"settings": settings, "requirements": reqs, "plan": plan, "near_misses": near}


def build(world: World, wp: WorldParams, params: dict[str, Any], seed: int, tools: list[str]) -> list[BuiltTask]:
    """The long tasks: seeded draws, each kept only with a change that breaks sim/perfect's first cart
    and a repaired path that fits (``plant_change``)."""
    from pushbench.tasks.planning.texts import requirement_text

    long = params["long"]
    budget = int(long["budget"])
    out: list[BuiltTask] = []
    rng = random.Random(f"planning-long-{seed}")
    for _ in range(int(long["draws"])):
        if len(out) == int(long["tasks"]):
            break
        lo, hi = long["items"]
        task = make_task(world, rng, rng.randrange(lo, hi + 1), int(long["extra_requirements"]))
        if task is None:
            continue
        task_id = f"planning-long-{len(out) + 1:02d}"
        reqs = [{**r, "text": requirement_text(r)} for r in task["requirements"]]
        in_profile = [r for r in reqs if r["kind"] in PROFILE_KINDS]
        kinds = [r["kind"] for r in reqs]
        settings = {**task["settings"], "world": asdict(wp), "world_digest": world.digest(),
                    "page_size": int(long["page_size"]), "n_requirements": len(reqs), "requirement_kinds": kinds,
                    "requirements": [{"id": r["id"], "kind": r["kind"],
                                      "text": POINTER if r in in_profile else r["text"]} for r in reqs],
                    "profile": [{"id": r["id"], "text": r["text"]} for r in in_profile]}
        spec = TaskSpec(task_id=task_id, family="planning", objective=objective(settings, budget), target=1,
                        budget=budget, tools=list(tools), oracle_steps=0, settings=settings,
                        predicate="+".join(sorted(set(kinds))))
        hidden = {"task_id": task_id, "requirements": reqs, "plan": task["plan"], "near_misses": task["near_misses"]}
        changed = plant_change(spec, world, reqs, long, random.Random(f"planning-long-change-{seed}-{task_id}"))
        if changed is not None:
            out.append(BuiltTask(spec=changed, hidden=hidden))
    if len(out) < int(long["tasks"]):
        raise RuntimeError(f"planning long split: only {len(out)} of {long['tasks']} tasks in {long['draws']} draws "
                           "fit the perfect path's bounds; raise draws or loosen the settings")
    return out


def _fits(path: dict[str, Any] | None, long: dict[str, Any]) -> bool:
    budget = int(long["budget"])
    return path is not None and int(long["min_oracle_steps"]) <= path["steps"] <= float(
        long["max_oracle_fraction"]) * budget and path["tokens"] >= int(long["min_transcript_tokens"])


def plant_change(spec: TaskSpec, world: World, reqs: list[dict[str, Any]], long: dict[str, Any],
                 rng: random.Random) -> TaskSpec | None:
    """The task with a price that changes mid-episode (``changes.py``), or None: sim/perfect's cart at
    the first prices must break under the change, and sim/perfect must still solve the task with it
    (re-checking and repairing) within the path's bounds."""
    first = perfect_path(spec, world, reqs)
    if first is None:
        return None
    for change in changes.candidates(world, spec.settings, reqs, first["plan"]["cart"], first["added"], rng):
        trial = spec.model_copy(update={"settings": {**spec.settings, "change": change}})
        path = perfect_path(trial, world, reqs)
        if _fits(path, long) and changes.stale_breaks(world, spec.settings, reqs, first["plan"], change):
            assert path is not None
            return trial.model_copy(update={"oracle_steps": path["steps"]})
    return None


def perfect_path(spec: TaskSpec, world: World, reqs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """sim/perfect's run on the task (unlimited window, full memory): its actions, its final
    transcript's tokens, the submitted plan and the products of its adds in order; None if it fails."""
    from pushbench.backends.native import run_native
    from pushbench.policies.sim import SimLM
    from pushbench.registry import CONTROLLERS, MEMORIES
    from pushbench.tasks.planning.env import PlanningEnv
    from pushbench.tokens import count_message_tokens
    from pushbench.verifier import Verifier

    env = PlanningEnv(spec, Verifier(spec.task_id, 1, lambda item: False), world, reqs)
    run = run_native(env, SimLM("perfect"), CONTROLLERS.make("standard"), MEMORIES.make("full"), 1)
    if env.verifier.valid_count < spec.target:  # the submitted cart failed the judge (no scoring code: a build input)
        return None
    return {"steps": env.steps, "tokens": count_message_tokens(run.transcript), "plan": env.plan(),
            "added": list(env.added)}
