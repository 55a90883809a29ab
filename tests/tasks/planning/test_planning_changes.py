"""Facts that change mid-episode in planning's long split (issue 30; ``changes.py``, ``superseded.py``):
a product's price rises after the agent's k-th add, unannounced. The cart sim/perfect plans from the
first prices, replayed, is rejected by the verifier; sim/perfect itself re-checks, sees the new price
and repairs the cart; and the mind prices a product at the latest of its conflicting observations."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pushbench import config
from pushbench.policies.base import tool_call_message
from pushbench.tasks import get_family
from pushbench.tasks.base import task_split
from pushbench.tasks.planning.long import perfect_path
from pushbench.tasks.planning.texts import money
from pushbench.tasks.planning.world import WorldParams, build_world
from pushbench.tools.base import ToolCall


@pytest.fixture(scope="module")
def long_tasks(tasks: list[Any]) -> list[Any]:
    found = [t for t in tasks if task_split(t) == "long"]
    if not found:
        pytest.skip("the planning manifest has no long split; run `pushbench manifests build --family planning`")
    return found


def requirements(task_id: str) -> list[dict[str, Any]]:
    return json.loads((config.HIDDEN / "planning" / f"{task_id}.json").read_text())["requirements"]


def without_change(task: Any) -> Any:
    return task.model_copy(update={"settings": {k: v for k, v in task.settings.items() if k != "change"}})


def test_every_long_task_changes_a_price_mid_episode_unannounced(long_tasks: list[Any]) -> None:
    for task in long_tasks:
        change = task.settings["change"]
        assert change["to"] > change["from"] and 1 <= change["after_adds"] <= len(task.settings["categories"])
        assert change["product"] not in task.objective and money(change["to"]) not in task.objective


def test_the_change_shows_only_in_observations_made_after_it(long_tasks: list[Any]) -> None:
    task = long_tasks[0]
    change = task.settings["change"]
    env = get_family("planning").environment(task)
    before = env.execute(ToolCall("details", {"item_id": change["product"]})).text
    assert money(change["from"]) in before.splitlines()[0]
    others = sorted(p.id for p in env.world.products.values() if p.stock >= 1 and p.id != change["product"])
    for pid in others[:change["after_adds"]]:
        assert env.execute(ToolCall("add", {"item_id": pid})).text.startswith("cart: added")
    after = env.execute(ToolCall("details", {"item_id": change["product"]})).text
    assert money(change["to"]) in after.splitlines()[0] and money(change["from"]) not in after.splitlines()[0]


def test_a_stale_reader_fails_where_sim_perfect_rechecks_and_repairs(long_tasks: list[Any]) -> None:
    """The cart sim/perfect builds when no price changes (planned from the first prices), replayed
    add by add on the real task, is rejected at submit; sim/perfect on the real task succeeds."""
    for task in long_tasks:
        reqs = requirements(task.task_id)
        world = build_world(WorldParams(**task.settings["world"]))
        stale = perfect_path(without_change(task), world, reqs)
        assert stale is not None and task.settings["change"]["product"] in stale["plan"]["cart"]
        env = get_family("planning").environment(task)
        for pid in stale["added"]:
            env.execute(ToolCall("add", {"item_id": pid, "quantity": stale["plan"]["cart"][pid]}))
        for cid in stale["plan"]["coupons"]:
            assert env.execute(ToolCall("apply_coupon", {"coupon_id": cid})).text.startswith("cart: coupon")
        assert env.plan() == stale["plan"]
        verdict = env.execute(ToolCall("submit", {})).payload["log"]["verdict"]
        assert not verdict["success"] and env.verifier.valid_count == 0, task.task_id
        repaired = perfect_path(task, world, reqs)
        assert repaired is not None and repaired["steps"] == task.oracle_steps, task.task_id
        assert repaired["plan"]["cart"] != stale["plan"]["cart"] or repaired["plan"]["coupons"] != stale["plan"]["coupons"]


def test_the_mind_prices_a_product_at_its_latest_observation(long_tasks: list[Any]) -> None:
    """Two conflicting observations of a price (its page, then a check): the later one counts; a
    third (a search row at the first price again) supersedes that in turn."""
    from pushbench.policies.sim import SimLM
    from pushbench.tasks.planning.planner import ShopPlanner

    task = long_tasks[0]
    change = task.settings["change"]
    env = get_family("planning").environment(task)
    sim = SimLM("perfect")
    messages: list[dict[str, Any]] = [{"role": "user", "content": task.objective}]
    sim.act(messages, env.schemas(), 1)
    mind = next(iter(sim._minds.values()))
    world = env.world
    product = world.products[change["product"]]
    row = env.execute(ToolCall("details", {"item_id": product.id})).text
    raised = {"role": "tool", "tool_call_id": "c2", "content": (
        f"check: cart\n  1 x {product.id} ({product.category}, {product.brand}) at {money(change['to'])} = "
        f"{money(change['to'])} | arrives {world.today}\n  subtotal {money(change['to'])} | total {money(change['to'])}")}
    brief = env.execute(ToolCall("search", {"catalog": "products", "category": product.category,
                                            "max_price": product.price / 100, "min_price": product.price / 100})).text

    def price_after(*results: dict[str, Any]) -> int:
        history = list(messages)
        for k, result in enumerate(results):
            history += [tool_call_message("details", {"item_id": product.id}, f"c{k}"), result]
        mind.reader.update(history, env.schemas())
        step = mind.reader.assistant_turns
        return {p["id"]: p["price"] for p in ShopPlanner(mind, mind.recalled(step), step).products()}[product.id]

    page = {"role": "tool", "tool_call_id": "c1", "content": row}
    again = {"role": "tool", "tool_call_id": "c3", "content": brief}
    assert price_after(page) == change["from"]
    assert price_after(page, raised) == change["to"]
    assert price_after(raised, page) == change["from"]
    assert price_after(page, raised, again) == change["from"]
