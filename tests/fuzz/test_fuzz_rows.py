"""Fuzzing the rows family: random and hostile calls against rows(page), submit, status, final."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pushbench.tasks import load_tasks, manifest_path
from pushbench.tools.base import Observation

from fuzz_profiles import fuzz_settings, max_calls
from fuzz_strategies import Pool
from fuzzkit import run_episode
from itemfuzz import ItemFuzz

ROW_LINE = re.compile(r"^(r\d{4}),", re.M)


class RowsFuzz(ItemFuzz):
    family = "rows"
    free_tools = ("rows",)
    kinds = {"ids": "id"}
    weights = {**ItemFuzz.weights, "rows": 30}
    token = re.compile(r"(?<![A-Za-z0-9])r[0-9]{4}(?![0-9])")

    def harvest(self, name: str, obs: Observation, pool: Pool) -> None:
        for row in ROW_LINE.findall(obs.text):
            pool.add("id", row)


def tasks() -> list:
    if not manifest_path("rows").is_file():
        pytest.skip("no rows manifest; run `pushbench manifests build --family rows`")
    return load_tasks("rows")


@pytest.fixture(scope="module")
def rows_tasks() -> list:
    return tasks()


def test_fuzz_rows(rows_tasks, tree_digest) -> None:
    before = tree_digest()

    @fuzz_settings("rows")
    @given(st.data())
    def episode(data: st.DataObject) -> None:
        task = data.draw(st.sampled_from(rows_tasks))
        run_episode(data, RowsFuzz(task), max_calls("rows"))

    episode()
    assert tree_digest() == before
