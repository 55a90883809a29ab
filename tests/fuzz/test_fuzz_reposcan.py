"""Fuzzing RepoScan: random and hostile calls against search(query, page), submit, status, final."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pushbench import config
from pushbench.tasks import load_tasks, manifest_path
from pushbench.tasks.reposcan.codeindex import tokenize
from pushbench.tools.base import Observation

from fuzz_profiles import fuzz_settings, max_calls
from fuzz_strategies import Pool
from fuzzkit import FULL, run_episode
from itemfuzz import ItemFuzz

HIT_LINE = re.compile(r"^\[\d+\] (\S+)$", re.M)
SEED_QUERIES = ("test", "test app", "client", "return the", "def", "fixture", "raises", "tmp_path", "json")


class RepoScanFuzz(ItemFuzz):
    family = "reposcan"
    free_tools = ("search",)
    kinds = {"ids": "id", "query": "word"}
    weights = {**ItemFuzz.weights, "search": 30}
    # an identifier as search shows it (maximal match; the verifier's valid ids all have this form)
    token = re.compile(r"(?<![A-Za-z0-9_./-])[A-Za-z0-9_][A-Za-z0-9_./-]*\.py::[A-Za-z_][A-Za-z0-9_.]*")

    def harvest(self, name: str, obs: Observation, pool: Pool) -> None:
        for uid in HIT_LINE.findall(obs.text):
            pool.add("id", uid)
            for word in tokenize(uid.split("::", 1)[1])[:3]:
                pool.add("word", f"test {word}")


def test_fuzz_reposcan(tree_digest) -> None:
    if not manifest_path("reposcan").is_file() or not (config.SNAPSHOT_SRC / "requests").is_dir():
        pytest.skip("no reposcan manifest or snapshots; run `pushbench snapshots fetch` and `manifests build`")
    # the quick profile leaves out pytest's tasks: its index alone takes ~6 s to build
    tasks = [t for t in load_tasks("reposcan") if FULL or t.repo != "pytest"]
    before = tree_digest()

    @fuzz_settings("reposcan")
    @given(st.data())
    def episode(data: st.DataObject) -> None:
        fuzz = RepoScanFuzz(data.draw(st.sampled_from(tasks)))
        run_episode(data, fuzz, max_calls("reposcan"), seeds={"word": SEED_QUERIES})

    episode()
    assert tree_digest() == before
