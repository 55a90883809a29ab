"""Fuzzing SWE-lite: random and hostile calls against read_file, search_files, edit, run_tests,
list_units, submit, status and final, in a private copy of a real snapshot with faults injected."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pushbench import config
from pushbench.tasks import get_family, load_tasks, manifest_path
from pushbench.tools.base import Observation, ToolCall
from pushbench.verifier import load_hidden

from fuzz_profiles import fuzz_settings, max_calls
from fuzz_strategies import INDEX, NEW_TEXT, ROLL, Pool
from fuzzkit import FULL, run_episode
from swe_toy import released
from unitfuzz import UnitFuzz

HIT = re.compile(r"^([\w./-]+\.py):\d+: (.*)$", re.M)
READ_HEAD = re.compile(r"^(\S+) lines \d+-\d+ of \d+$", re.M)
READ_LINE = re.compile(r"^ *\d+\| (.*)$", re.M)
SEEDS = {"path": ("setup.py", "pyproject.toml", "tests/conftest.py", "src", "PKG-INFO"),
         "query": ("def ", "return", "import ", "assert ", "raise "), "unit": ("U01", "U02")}
QUICK_TASKS = ("swe-requests-n2-a",)  # the quick profile: one backlog (its test runs take seconds)


class SweFuzz(UnitFuzz):
    family = "swe"
    free_tools = ("list_units",)  # file views are checked too: a hidden line must be in the copy
    scoped_tools = ("run_tests", "submit")
    kinds = {"unit": "unit", "path": "path", "old": "line", "new": "line", "query": "query"}
    weights = {"read_file": 30, "search_files": 20, "edit": 15, "list_units": 4, "status": 4, "run_tests": 2,
               "submit": 2, "final": 1}

    def __init__(self, task: Any):
        super().__init__(task)
        units = load_hidden("swe", task.task_id)["units"]
        # the shipped line a fault replaced (the repair) and the catalogue's name of the fault
        self._secrets = {u: [f["original"].strip(), f["unit"]] for u, f in units.items()}

    def make_env(self, budget: int) -> Any:
        return get_family("swe").environment(self.task.model_copy(update={"budget": budget}))

    def secrets(self, env: Any) -> dict[str, list[str]]:
        return self._secrets

    def allowed(self, env: Any, hit: str) -> bool:
        """Text the agent can read in its own copy is not revealed by showing it."""
        root = Path(env.workspace.root)
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink():
                try:
                    if hit in path.read_text(encoding="utf-8", errors="replace"):
                        return True
                except OSError:
                    continue
        return False

    def harvest(self, name: str, obs: Observation, pool: Pool) -> None:
        super().harvest(name, obs, pool)
        for path, line in HIT.findall(obs.text):
            pool.add("path", path)
            pool.add("line", line)
        for path in READ_HEAD.findall(obs.text):
            pool.add("path", path)
        for line in READ_LINE.findall(obs.text):
            pool.add("line", line)
            if len(line.strip()) >= 4:
                pool.add("query", line.strip()[:40])

    def coherent_call(self, draw: Any, env: Any) -> ToolCall | None:
        """For one unit: its reference repair (from the catalogue; once repaired, its submit), an edit
        of a line of its file or of one of its test files, or its test run or submit."""
        units = list(env.records)
        unit = units[draw(INDEX) % len(units)]
        fault = env.faults[unit]
        roll = draw(ROLL)
        text = env.workspace.read(fault.path)
        lines = text.split("\n")
        repaired = len(lines) >= fault.lineno and lines[fault.lineno - 1] == fault.original
        if roll < 35 and repaired:
            return ToolCall("submit" if roll < 25 else "run_tests", {"unit": unit})
        if roll < 35:
            old, new = fault.fix_strings(text)
            return ToolCall("edit", {"unit": unit, "path": fault.path, "old": old, "new": new})
        if roll < 80:
            path = fault.path if roll < 60 else fault.tests[draw(INDEX) % len(fault.tests)].split("::")[0]
            lines = env.workspace.read(path).split("\n")
            old = lines[draw(INDEX) % len(lines)]
            return ToolCall("edit", {"path": path, "old": old, "new": draw(NEW_TEXT), "unit": unit})
        return ToolCall("run_tests" if roll < 90 else "submit", {"unit": unit})

    def workspace_gone(self, env: Any) -> bool:
        return released(env.workspace)  # removed, or reset to the snapshot for the next episode




def test_fuzz_swe(tree_digest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not manifest_path("swe").is_file() or not (config.SNAPSHOT_SRC / "requests").is_dir():
        pytest.skip("no swe manifest or snapshots; run `pushbench snapshots fetch` and `manifests build`")
    monkeypatch.setenv("PUSHBENCH_SWE_TEST_CACHE", str(tmp_path / "cache"))  # real runs, shared by the test
    tasks = [t for t in load_tasks("swe") if FULL or t.task_id in QUICK_TASKS]
    before = tree_digest()

    @fuzz_settings("swe")
    @given(st.data())
    def episode(data: st.DataObject) -> None:
        fuzz = SweFuzz(data.draw(st.sampled_from(tasks)))
        run_episode(data, fuzz, max_calls("swe"), seeds=SEEDS)

    episode()
    assert tree_digest() == before
