"""Fuzzing DataOps-lite: random and hostile calls against inspect, answer, edit, run_checker,
list_units, submit, status and final, over the per-episode copy of each backlog's files."""

from __future__ import annotations

import email.parser
import re
import tomllib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pushbench import config
from pushbench.tasks import get_family, load_tasks, manifest_path
from pushbench.tools.base import Observation, ToolCall
from pushbench.verifier import load_hidden

from fuzz_profiles import fuzz_settings, max_calls
from dataops_kit import reference_action
from fuzz_strategies import INDEX, NEW_TEXT, ROLL, Pool
from fuzzkit import run_episode
from unitfuzz import UnitFuzz

FILE_LINE = re.compile(r"^  (\S+): \d+ (?:data rows|lines)", re.M)
CSV_ROW = re.compile(r"^row \d+: (.*)$", re.M)
TEXT_LINE = re.compile(r"^ *\d+\| (.*)$", re.M)


def field_values(expected: dict[str, Any]) -> list[str]:
    """The repaired field's value(s) in the reference file: what the repair must restore."""
    if expected["file"] == "PKG-INFO":
        headers = email.parser.HeaderParser().parsestr(expected["reference"])
        return [v for v in headers.get_all(expected["field"], []) if len(v) >= 2]
    value = tomllib.loads(expected["reference"]).get("project", {}).get(expected["field"])
    values = value if isinstance(value, list) else [value]
    return [v for v in values if isinstance(v, str) and len(v) >= 2]


class DataOpsFuzz(UnitFuzz):
    family = "dataops"
    free_tools = ("inspect", "list_units")
    scoped_tools = ("run_checker", "submit")
    kinds = {"unit": "unit", "path": "path", "old": "line", "new": "line", "value": "word"}
    weights = {"inspect": 30, "answer": 12, "edit": 12, "run_checker": 10, "submit": 10, "list_units": 4,
               "status": 4, "final": 1}

    def __init__(self, task: Any):
        super().__init__(task)
        hidden = load_hidden("dataops", task.task_id)["units"]
        self._secrets = {u: ([e["expected"]] if "expected" in e else field_values(e)) for u, e in hidden.items()}

    def make_env(self, budget: int) -> Any:
        return get_family("dataops").environment(self.task.model_copy(update={"budget": budget}))

    def secrets(self, env: Any) -> dict[str, list[str]]:
        return self._secrets

    def harvest(self, name: str, obs: Observation, pool: Pool) -> None:
        super().harvest(name, obs, pool)
        for path in FILE_LINE.findall(obs.text):
            pool.add("path", path)
        for row in CSV_ROW.findall(obs.text):
            for value in row.split(",")[:4]:
                pool.add("word", value)
        for line in TEXT_LINE.findall(obs.text):
            pool.add("line", line)
            if ": " in line:
                pool.add("word", line.split(": ", 1)[1])

    def coherent_call(self, draw: Any, env: Any) -> ToolCall | None:
        """For one unit: the reader's reference answer or repair, an edit of one of its lines, or
        its checker or submit."""
        units = list(env.records)
        unit = units[draw(INDEX) % len(units)]
        roll = draw(ROLL)
        if roll < 40:
            try:
                action = reference_action(env, unit)
            except (ValueError, KeyError, OSError):
                return None
            if action[0] == "answer":
                return ToolCall("answer", {"unit": unit, "value": action[1]})
            return ToolCall("edit", {"unit": unit, "path": action[1], "old": action[2], "new": action[3]})
        if roll < 70:
            files = env.files_of(unit)
            if not files:
                return None
            path = files[draw(INDEX) % len(files)]
            lines = (env.unit_dir(unit) / path).read_text(encoding="utf-8").splitlines() or [""]
            old = lines[draw(INDEX) % len(lines)]
            return ToolCall("edit", {"unit": unit, "path": path, "old": old, "new": draw(NEW_TEXT)})
        return ToolCall("run_checker" if roll < 85 else "submit", {"unit": unit})

    def workspace_gone(self, env: Any) -> bool:
        return not env.workspace.exists()



def test_fuzz_dataops(tree_digest) -> None:
    if not manifest_path("dataops").is_file() or not (config.SNAPSHOT_SRC / "requests").is_dir():
        pytest.skip("no dataops manifest or snapshots; run `pushbench snapshots fetch` and `manifests build`")
    tasks = load_tasks("dataops")
    before = tree_digest()

    @fuzz_settings("dataops")
    @given(st.data())
    def episode(data: st.DataObject) -> None:
        fuzz = DataOpsFuzz(data.draw(st.sampled_from(tasks)))
        run_episode(data, fuzz, max_calls("dataops"), seeds={"unit": ("U01", "U02")})

    episode()
    assert tree_digest() == before
