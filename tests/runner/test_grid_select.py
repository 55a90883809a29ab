"""Choosing tasks and windows: --split, --task and SimLM's @window suffix."""

from __future__ import annotations

from pathlib import Path

import pytest

from pushbench.cli.run import _models
from pushbench.policies import make_policy
from pushbench.policies.sim.profiles import PROFILES, get_profile, split_window
from pushbench.runner import Grid
from pushbench.runner.checks import GridError, check_grid, check_model
from pushbench.tasks.base import TaskSpec, write_manifest


def _task(task_id: str, split: str | None) -> TaskSpec:
    settings = {"split": split} if split else {}
    return TaskSpec(task_id=task_id, family="reposcan", objective="o", target=10, budget=30,
                    tools=["search"], oracle_steps=3, settings=settings)


@pytest.fixture()
def manifests(tmp_path: Path) -> Path:
    write_manifest(tmp_path / "reposcan.jsonl",
                   [_task("a", None), _task("b", "long"), _task("c", "short"), _task("d", "long")])
    return tmp_path


def _grid(**kw) -> Grid:
    return Grid("reposcan", ["standard"], ["sim/base"], ["full"], ["native"], 1, **kw)


def test_the_default_split_is_short_and_long_is_asked_for(manifests: Path) -> None:
    assert [t.task_id for t in _grid().tasks(manifests)] == ["a", "c"]
    assert [t.task_id for t in _grid(split="long").tasks(manifests)] == ["b", "d"]


def test_task_ids_pick_any_split_in_manifest_order(manifests: Path) -> None:
    assert [t.task_id for t in _grid(task_ids=("d", "a")).tasks(manifests)] == ["a", "d"]
    with pytest.raises(GridError, match="no task zz in the reposcan manifest"):
        check_grid(_grid(task_ids=("a", "zz")), manifests)


def test_a_window_suffix_sets_simlm_window_and_names_the_condition() -> None:
    assert split_window("base@8k") == ("base", 8000)
    assert split_window("perfect@12000") == ("perfect", 12000)
    assert get_profile("sim/perfect@8k").window == 8000
    assert get_profile("sim-base@4k").middle == PROFILES["base"].middle
    policy = make_policy("sim/perfect@8k")
    assert (policy.name, policy.context_window) == ("sim/perfect@8k", 8000)
    assert make_policy("sim/base").name == "sim/base"
    check_model("sim/base@16k")
    for bad in ("sim/base@", "sim/base@0", "sim/base@8m", "sim/huge@8k"):
        with pytest.raises(GridError):
            check_model(bad)


def test_the_cli_window_applies_to_simlm_models_only() -> None:
    assert _models(["sim/base", "openai/x", "sim/pro@4k"], 8000) == ["sim/base@8k", "openai/x", "sim/pro@8k"]
    assert _models(["sim/base"], None) == ["sim/base"]


@pytest.mark.parametrize("family, controller, refused", [
    ("reposcan", "stateqgp-pages", None),  # items and a paged search
    ("rows", "stateqgp", None),  # an item set: dedupe, progress block, gated final
    ("corpus", "stateqgp-dedupe", None),  # its progress block
    ("rows", "stateqgp-pages", "the role 'paged-search'"),  # no paged search: the variant would do nothing
    ("corpus", "stateqgp-nobuffer", "the role 'paged-search'"),
    ("sweissues", "unitqgp", "the role 'units'"),  # one issue, no backlog
])
def test_controllers_need_the_tool_roles_a_family_declares(tmp_path: Path, family: str, controller: str,
                                                          refused: str | None) -> None:
    write_manifest(tmp_path / f"{family}.jsonl", [TaskSpec(task_id="t", family=family, objective="o", target=1,
                                                           budget=3, tools=["x"], oracle_steps=1)])
    grid = Grid(family, [controller], ["openai/m"], ["full"], ["native"], 1)
    if refused is None:
        assert [t.task_id for t in check_grid(grid, tmp_path)] == ["t"]
    else:
        with pytest.raises(GridError, match=f"controller '{controller}' needs a family whose tools play {refused}"):
            check_grid(grid, tmp_path)
