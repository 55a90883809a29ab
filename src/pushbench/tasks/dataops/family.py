"""QGP-DataOps-lite: backlogs of N verifier-checked data-operations units.

Six backlogs per N. Each backlog mixes three unit types, drawn deterministically from the params
seed and the task id:
- ``csv_field``: the value of one field of one row of a scikit-learn bundled data set;
- ``metadata_repair``: a snapshot's PKG-INFO (or pyproject.toml ``[project]``) with one field wrong
  or missing, to be fixed from the source of truth the title names;
- ``consistency``: a number or string that two sources must agree on (a CSV and its description,
  PKG-INFO and pyproject.toml or the version module).
Agent-visible: the manifest row (objective, unit titles, recipes for the fixture files). Hidden
(verifier-only): the expected answers and the reference texts of the repaired files. Every unit is
solved at build time by the reader from rendered pages and checked, and a wrong answer must fail.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any, cast

from pushbench import config, guidance
from pushbench.tasks.dataops import data as src
from pushbench.tasks.dataops import units as du
from pushbench.tasks.base import BuiltTask, TaskSpec
from pushbench.verifier import Verifier, load_hidden

TOOLS = ["list_units", "inspect", "answer", "edit", "run_checker", "submit", "status", "final"]
OBJECTIVE = ("Work through a backlog of {n} data-operations units (CSV field checks, metadata repairs, "
             "consistency answers) until the verifier has accepted all {n}. Use list_units() to see the "
             "units, inspect(unit, path, page) to read a unit's files, answer(unit, value) or "
             "edit(unit, path, old, new) to do the work, run_checker(unit) to check it, submit(unit) to "
             "have it verified (" + guidance.UNIT_VERIFIED_DATAOPS + "), status() for the "
             "verified count, and final(count) once {n} units are accepted.")
_OBJECTIVE = re.compile(r"backlog of (\d+) data-operations units")

# (repo, field of PKG-INFO) -> (source-of-truth file, name of the value in it)
PKG_TRUTH = {
    ("requests", "Version"): ("src/requests/__version__.py", "__version__"),
    ("requests", "Summary"): ("src/requests/__version__.py", "__description__"),
    ("requests", "Name"): ("src/requests/__version__.py", "__title__"),
    ("requests", "License"): ("src/requests/__version__.py", "__license__"),
    ("flask", "Version"): ("pyproject.toml", "version"),
    ("flask", "Summary"): ("pyproject.toml", "description"),
    ("flask", "Name"): ("pyproject.toml", "name"),
    ("flask", "Requires-Python"): ("pyproject.toml", "requires-python"),
    ("pytest", "Version"): ("src/_pytest/_version.py", "__version__"),
    ("pytest", "Summary"): ("pyproject.toml", "description"),
    ("pytest", "Name"): ("pyproject.toml", "name"),
    ("pytest", "Requires-Python"): ("pyproject.toml", "requires-python"),
    ("pytest", "License"): ("pyproject.toml", "license"),
}
# (repo, key of pyproject [project]) -> the PKG-INFO field that is its source of truth
TOML_TRUTH = {("flask", "requires-python"): "Requires-Python", ("flask", "version"): "Version",
              ("flask", "description"): "Summary", ("pytest", "requires-python"): "Requires-Python",
              ("pytest", "description"): "Summary"}


def objective_text(n: int) -> str:
    return OBJECTIVE.format(n=n)


def parse_objective(text: str) -> int | None:
    m = _OBJECTIVE.search(text)
    return int(m.group(1)) if m else None


def wrong_value(field: str, value: str) -> str:
    """A plausible wrong value of a metadata field (never the right one)."""
    if field.lower() == "version":
        major, minor = (int(x) for x in value.split(".")[:2])
        return f"{major}.{minor - 1}.0" if minor else f"{major - 1}.9.0"
    if field.lower() == "requires-python":
        return ">=3.6"
    if field in ("Summary", "description"):
        return "TODO: describe the package"
    if field == "Name":
        return value + "-legacy"
    return "GPL-3.0" if value != "GPL-3.0" else "MIT"


def candidate_recipes(root: str) -> dict[str, list[dict[str, Any]]]:
    """Every unit a backlog may draw, per type (the CSV pool is drawn on demand)."""
    meta: list[dict[str, Any]] = []
    for (repo, field), (truth, key) in PKG_TRUTH.items():
        value = src.header_value(src.pkg_info(root, repo).splitlines(), field)
        for mode in ("wrong", "missing"):
            meta.append({"form": mode, "repo": repo, "file": "PKG-INFO", "field": field, "truth": truth,
                         "key": key, "wrong": wrong_value(field, cast(str, value)) if mode == "wrong" else ""})
    for (repo, key), field in TOML_TRUTH.items():
        value = src.toml_value(src.project_table(root, repo).splitlines(), key)
        meta.append({"form": "wrong", "repo": repo, "file": "pyproject.toml", "field": key, "truth": "PKG-INFO",
                     "key": field, "wrong": wrong_value(key, cast(str, value))})
    cons: list[dict[str, Any]] = []
    for name, ds in src.DATASETS.items():
        cons.append({"form": "instances", "dataset": name})
        if ds.has_target or name == "diabetes":
            cons.append({"form": "attributes", "dataset": name})
        cons += [{"form": "class", "dataset": name, "target": t} for t in range(len(ds.classes))]
    cons += [{"form": "version", "repo": r, "truth": PKG_TRUTH[(r, "Version")][0]} for r in ("requests", "flask", "pytest")]
    cons += [{"form": "requires", "repo": r, "truth": "pyproject.toml"} for r in ("flask", "pytest")]
    return {du.METADATA: meta, du.CONSISTENCY: cons}


def draw_csv(rng: random.Random) -> dict[str, Any]:
    name = rng.choice(sorted(src.DATASETS))
    ds = src.DATASETS[name]
    return {"form": "csv", "dataset": name, "row": rng.randint(1, len(src.dataset_rows(name))),
            "col": rng.choice([c for c in ds.columns if c != "target"])}


def title_for(recipe: dict[str, Any]) -> str:
    form = recipe["form"]
    if form in ("csv", "class", "instances", "attributes"):
        ds = src.DATASETS[recipe["dataset"]]
        extra = {"label": ds.classes[recipe["target"]]} if form == "class" else {}
        return du.title_of(form, csv=ds.csv_name, doc=ds.doc, **{**_args(recipe), **extra})
    return du.title_of(form, **_args(recipe))


def _args(recipe: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in recipe.items() if k != "form"}


def expected_for(recipe: dict[str, Any], files: dict[str, str], root: str) -> dict[str, Any]:
    form = recipe["form"]
    if form == "csv":
        ds = src.DATASETS[recipe["dataset"]]
        return {"expected": src.dataset_rows(ds.name)[recipe["row"] - 1][ds.columns.index(recipe["col"])]}
    if form == "class":
        return {"expected": str(src.class_count(recipe["dataset"], recipe["target"]))}
    if form == "instances":
        return {"expected": str(len(src.dataset_rows(recipe["dataset"])))}
    if form == "attributes":
        return {"expected": str(len([c for c in src.DATASETS[recipe["dataset"]].columns if c != "target"]))}
    if form == "version":
        return {"expected": src.header_value(src.pkg_info(root, recipe["repo"]).splitlines(), "Version")}
    if form == "requires":
        return {"expected": src.toml_value(src.project_table(root, recipe["repo"]).splitlines(), "requires-python")}
    return {"file": recipe["file"], "field": recipe["field"],
            "reference": du.truth_text(root, recipe["repo"], recipe["file"])}


def _unique_key(recipe: dict[str, Any]) -> tuple:
    return tuple(sorted((k, v) for k, v in recipe.items() if k not in ("form", "wrong")))


def backlog_recipes(n: int, index: int, task_id: str, seed: int, pools: dict[str, list]) -> list[dict[str, Any]]:
    rng = random.Random(f"{seed}:{task_id}")
    kinds = [du.KINDS[(i + index) % 3] for i in range(n)]
    rng.shuffle(kinds)
    used: set[tuple] = set()
    recipes = []
    for kind in kinds:
        while True:
            recipe = draw_csv(rng) if kind == du.CSV_FIELD else dict(rng.choice(pools[kind]))
            key = _unique_key(recipe) if kind != du.METADATA else (recipe["repo"], recipe["file"], recipe["field"])
            if key not in used:
                used.add(key)
                recipes.append(recipe)
                break
    return recipes


class DataOpsFamily:
    name = "dataops"

    def build(self, params: dict[str, Any], snapshot_root: Path | None = None) -> list[BuiltTask]:
        from pushbench.tasks.dataops.oracle import solve_unit

        root = str(snapshot_root or config.SNAPSHOT_SRC)
        seed = int(params.get("seed", config.params("seed")))
        pools = candidate_recipes(root)
        tasks = []
        for n in params["targets"]:
            for index in range(params["backlogs_per_target"]):
                task_id = f"dataops-n{n:02d}-b{index + 1}"
                recipes = backlog_recipes(n, index, task_id, seed, pools)
                units, hidden, steps = [], {}, 2  # list_units and final
                for i, recipe in enumerate(recipes, 1):
                    uid = f"U{i:02d}"
                    title = title_for(recipe)
                    if du.parse_title(title) is None:
                        raise AssertionError(f"{task_id}/{uid}: the title does not parse back")
                    files = du.unit_files(recipe, root)
                    expected = {"kind": du.FORM_KIND[recipe["form"]], "form": recipe["form"],
                                **expected_for(recipe, files, root)}
                    steps += solve_unit(uid, title, files, expected, params)
                    units.append({"id": uid, "kind": expected["kind"], "title": title})
                    hidden[uid] = expected
                tasks.append(self._task(task_id, n, units, recipes, hidden, steps, params))
        return tasks

    def _task(self, task_id: str, n: int, units: list[dict[str, Any]], recipes: list[dict[str, Any]],
              hidden: dict[str, Any], steps: int, params: dict[str, Any]) -> BuiltTask:
        budget = int(params["budgets"][n])
        if steps > params["max_oracle_fraction"] * budget:
            raise ValueError(f"{task_id}: oracle needs {steps} steps, over "
                             f"{params['max_oracle_fraction']:.0%} of the budget {budget}")
        if parse_objective(objective_text(n)) != n:
            raise AssertionError(f"{task_id}: objective text does not carry its target")
        mix = "+".join(k for k in du.KINDS if any(u["kind"] == k for u in units))
        spec = TaskSpec(task_id=task_id, family="dataops", repo="sklearn-data+snapshots", predicate=mix,
                        objective=objective_text(n), target=n, budget=budget, tools=TOOLS, oracle_steps=steps,
                        settings={"units": units, "recipes": {u["id"]: r for u, r in zip(units, recipes)},
                                  "page_rows": params["page_rows"], "page_lines": params["page_lines"]})
        return BuiltTask(spec=spec, hidden={"task_id": task_id, "units": hidden})

    def episode_metrics(self, events: list[dict[str, Any]], task: TaskSpec) -> dict[str, Any]:
        """Work-unit metrics (scoring hook): per-unit and per-type results, checker runs, recoveries."""
        from pushbench.scoring.items import tool_calls
        from pushbench.scoring.units import unit_metrics
        from pushbench.tasks.dataops.env import DataOpsEnv

        return {"status_calls": tool_calls(events, "status"),
                **unit_metrics(events, task.settings["units"], DataOpsEnv.change_tools, DataOpsEnv.submit_tool)}

    def environment(self, task: TaskSpec, snapshot_root: Path | None = None, hidden_root: Path | None = None,
                    sink: Any = None) -> Any:
        from pushbench.tasks.dataops.env import DataOpsEnv

        root = str(snapshot_root or config.SNAPSHOT_SRC)
        expected = load_hidden("dataops", task.task_id, hidden_root)["units"]
        files = {uid: du.unit_files(recipe, root) for uid, recipe in task.settings["recipes"].items()}
        verifier = Verifier(task.task_id, task.target, lambda _item: False, sink=sink, retry_rejected=True)
        return DataOpsEnv(task, verifier, expected, files)
