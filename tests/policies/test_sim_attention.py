"""SimLM's bounded attention: recall probability by position, the window, the middle dip, draws."""

from __future__ import annotations

import zlib
from dataclasses import replace

import numpy as np
import pytest

from pushbench.policies.sim import PROFILES, get_profile
from pushbench.policies.sim.attention import recall_probability, recalled_mask, stable_uniform


def offsets(total: int, n: int = 201) -> np.ndarray:
    return np.linspace(0, total, n).astype(np.int64)


@pytest.mark.parametrize("name", ["mini", "base", "pro"])
def test_recall_falls_with_distance_from_the_end(name: str) -> None:
    profile = get_profile(name, middle_dip=0.0)
    total = profile.window // 2
    off = offsets(total)
    prob = recall_probability(profile, off, total)
    # ordered by offset = ordered by falling distance: recall never drops as facts get more recent
    assert np.all(np.diff(prob) >= 0)
    assert prob[-1] == pytest.approx(1.0)  # the newest fact
    assert prob[0] < prob[-1]
    # strictly lower for older facts where recency still matters
    near = off > total - 3 * profile.recency_tokens
    assert np.all(np.diff(prob[near]) > 0)
    # never below the floor inside the window
    assert np.all(prob >= profile.recall_floor - 1e-12)
    assert np.all(prob <= 1.0)


@pytest.mark.parametrize("name", ["mini", "base", "pro"])
def test_recall_is_zero_beyond_the_window(name: str) -> None:
    profile = PROFILES[name]
    total = 3 * profile.window
    off = offsets(total, 301)
    prob = recall_probability(profile, off, total)
    outside = (total - off) > profile.window
    assert outside.any() and (~outside).any()
    assert np.all(prob[outside] == 0.0)
    assert np.all(prob[~outside] > 0.0)
    mask = recalled_mask(profile, off, total, seed=7, step=3)
    assert not mask[outside].any()


def test_window_edge_is_inclusive() -> None:
    profile = get_profile("mini", middle_dip=0.0)
    total = profile.window + 10
    prob = recall_probability(profile, np.array([10, 9]), total)
    assert prob[0] > 0.0  # exactly window tokens away: still visible
    assert prob[1] == 0.0  # one more: gone


@pytest.mark.parametrize("name", ["mini", "base", "pro"])
def test_middle_dip_in_long_contexts(name: str) -> None:
    profile = PROFILES[name]
    assert profile.middle_dip > 0
    total = min(profile.window, 2 * profile.long_context)  # long, but all of it in the window
    start, middle = recall_probability(profile, np.array([0, total // 2]), total)
    assert middle < start  # lost in the middle: recalled less than the older fact at the start
    # without the dip the middle fact (more recent) would be the better recalled one
    flat_start, flat_middle = recall_probability(replace(profile, middle_dip=0.0), np.array([0, total // 2]), total)
    assert flat_middle > flat_start
    assert middle < flat_middle and start == pytest.approx(flat_start)  # the dip spares the ends


def test_middle_dip_grows_with_context_length() -> None:
    profile = PROFILES["base"]
    flat = replace(profile, middle_dip=0.0)

    def loss(total: int) -> float:
        mid = np.array([total // 2])
        return 1.0 - float(recall_probability(profile, mid, total)[0] / recall_probability(flat, mid, total)[0])

    short, long_ = loss(profile.long_context // 8), loss(profile.long_context)
    assert 0 < short < long_
    assert long_ == pytest.approx(profile.middle_dip, rel=1e-6)  # full strength at long_context
    assert loss(2 * profile.long_context) == pytest.approx(profile.middle_dip, rel=1e-6)  # capped


def test_perfect_profile_recalls_everything() -> None:
    profile = PROFILES["perfect"]
    for total in (10, 50_000, 5_000_000):
        off = offsets(total)
        assert np.all(recall_probability(profile, off, total) == 1.0)
        for step in range(5):
            assert recalled_mask(profile, off, total, seed=step, step=step).all()


def test_recalled_mask_is_deterministic_in_seed_and_step() -> None:
    profile = PROFILES["mini"]
    total = 40_000
    off = offsets(total, 500)
    first = recalled_mask(profile, off, total, seed=11, step=4)
    assert np.array_equal(first, recalled_mask(profile, off, total, seed=11, step=4))
    assert first.dtype == bool and len(first) == len(off)
    # another step or seed redraws (probabilities are strictly between 0 and 1 here)
    assert not np.array_equal(first, recalled_mask(profile, off, total, seed=11, step=5))
    assert not np.array_equal(first, recalled_mask(profile, off, total, seed=12, step=4))
    # the profile's own seed is part of the draw as well
    assert not np.array_equal(first, recalled_mask(replace(profile, seed=profile.seed + 1), off, total, 11, 4))


def test_recalled_mask_frequency_matches_probability() -> None:
    profile = PROFILES["base"]
    total = 30_000
    off = np.full(20_000, 20_000)
    p = float(recall_probability(profile, off[:1], total)[0])
    assert 0.2 < p < 0.9
    rate = recalled_mask(profile, off, total, seed=1, step=2).mean()
    assert rate == pytest.approx(p, abs=0.02)


def test_stable_uniform_is_a_fixed_function_of_its_parts() -> None:
    value = stable_uniform(3, "judge", "a.py::f")
    assert value == zlib.crc32(repr((3, "judge", "a.py::f")).encode()) / 2**32
    assert 0.0 <= value < 1.0
    assert value != stable_uniform(4, "judge", "a.py::f")
    draws = np.array([stable_uniform(i, "x") for i in range(4000)])
    assert 0.45 < draws.mean() < 0.55 and draws.min() >= 0 and draws.max() < 1


def test_profiles_are_ordered_and_overridable() -> None:
    mini, base, pro = PROFILES["mini"], PROFILES["base"], PROFILES["pro"]
    assert mini.window < base.window < pro.window
    assert mini.recency_tokens < base.recency_tokens < pro.recency_tokens
    assert mini.conflate > base.conflate > pro.conflate
    assert get_profile("sim/base") is base and get_profile("sim-base") is base
    tweaked = get_profile("base", conflate=1.0, window=500)
    assert tweaked.conflate == 1.0 and tweaked.window == 500 and tweaked.name == "base"
    assert PROFILES["base"].conflate == 0.3  # the registry is not modified
    with pytest.raises(KeyError, match="unknown SimLM profile"):
        get_profile("huge")
