"""The planning README's world and task figures are the build's (its `build:` blocks)."""

from __future__ import annotations

from typing import Any

from pushbench import config
from pushbench.tasks import load_tasks, manifest_path
from pushbench.tasks.planning.figures import block, tasks_table, world_table
from pushbench.tasks.planning.world import WorldParams, build_world
from pushbench.tasks.readme_blocks import BLOCK, stale_blocks

README = config.ROOT / "src" / "pushbench" / "tasks" / "planning" / "README.md"


def built() -> list[Any]:
    if not manifest_path("planning").is_file():
        from pushbench.tasks.manifests import build_family

        build_family("planning")
    return load_tasks("planning")


def test_the_readme_blocks_are_the_builds_figures() -> None:
    built()
    text = README.read_text(encoding="utf-8")
    assert [m.group(2) for m in BLOCK.finditer(text)] == ["world", "tasks", "long"]
    assert stale_blocks(text, block) == [], "run `python -m pushbench.tasks.readme_blocks`"


def test_the_tables_count_the_world_and_the_tasks() -> None:
    tasks = built()
    world = build_world(WorldParams(**tasks[0].settings["world"]))
    assert f"| products | {len(world.products):,} |" in world_table(world).splitlines()
    rows = tasks_table(tasks).splitlines()
    short = [t for t in tasks if t.settings.get("split", "short") == "short"]
    assert rows[-1] == f"| **all** | | **{len(short)}** | | |"
    level_one = [t for t in short if t.settings["kind"] == "shopping" and t.settings["level"] == 1]
    assert rows[2].startswith(f"| shopping | 1 product | {len(level_one)} |")
