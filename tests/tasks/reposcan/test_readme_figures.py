"""The RepoScan README's valid-set sizes and task counts are the build's (its `build:tasks` block)."""

from __future__ import annotations

from pathlib import Path

from pushbench import config
from pushbench.tasks.base import TaskSpec
from pushbench.tasks.readme_blocks import BLOCK
from pushbench.tasks.reposcan.figures import tasks_table, valid_sizes

README = config.ROOT / "src" / "pushbench" / "tasks" / "reposcan" / "README.md"


def test_the_readme_block_is_the_fresh_builds_table(real_tasks: dict[str, TaskSpec], built_data: Path) -> None:
    blocks = {m.group(2): m.group(4) for m in BLOCK.finditer(README.read_text(encoding="utf-8"))}
    tasks = sorted(real_tasks.values(), key=lambda t: t.task_id)
    sizes = valid_sizes(tasks, built_data / "hidden")
    assert blocks == {"tasks": tasks_table(tasks, sizes) + "\n"}, "run `python -m pushbench.tasks.readme_blocks`"
    assert min(sizes.values()) >= config.params("reposcan.min_valid")


def test_the_table_counts_tasks_and_shows_each_predicate_argument() -> None:
    def task(repo: str, predicate: str, n: int, arg: str | None) -> TaskSpec:
        return TaskSpec(task_id=f"reposcan-{repo}-{predicate}-n{n:03d}", family="reposcan", repo=repo,
                        predicate=predicate, objective="o", target=n, budget=30, tools=["search"], oracle_steps=3,
                        settings={"predicate_arg": arg} if arg else {})
    tasks = [task("r", "fixture", 10, "app"), task("r", "fixture", 25, "app"), task("r", "documented", 10, None)]
    table = tasks_table(tasks, {tasks[0].task_id: 150, tasks[1].task_id: 150, tasks[2].task_id: 1200}).splitlines()
    assert table[2] == "| r | `app`: 150 | 1,200 | 3 |" and table[3].endswith("| **3** |")
