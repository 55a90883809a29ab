"""SimLM's bounded attention: recall probability by position, the window, the middle dip, draws."""

from __future__ import annotations

import zlib
from dataclasses import replace

import numpy as np
import pytest

from pushbench.policies.sim import PROFILES, get_profile
from pushbench.policies.sim.attention import (length_term, position_curve, recall_probability, recalled_mask, recalls,
                                              stable_uniform)


def offsets(total: int, n: int = 201) -> np.ndarray:
    return np.linspace(0, total, n).astype(np.int64)


@pytest.mark.parametrize("name", ["mini", "base", "pro"])
@pytest.mark.parametrize("total", [4_000, 30_000])
def test_recall_is_u_shaped_in_position(name: str, total: int) -> None:
    profile = PROFILES[name]  # the calibrated profile (data/calibration/fitted.json)
    total = min(total, profile.window)
    off = offsets(total)
    prob = recall_probability(profile, off, total)
    middle = prob[len(prob) // 2]
    assert middle < prob[0] and middle < prob[-1]  # start and end both beat the middle
    assert prob.argmin() not in (0, len(prob) - 1)
    assert np.all((prob > 0.0) & (prob <= 1.0))


def test_the_task_text_at_the_start_is_recalled_better_than_the_middle() -> None:
    profile = replace(PROFILES["base"], primacy=0.8, primacy_span=0.1, recency=0.8, recency_span=0.1,
                      middle=0.3, length_decay=0.2)
    total = 40_000
    task, middle, newest = recall_probability(profile, np.array([50, total // 2, total - 10]), total)
    assert task > 0.8 > middle and newest > 0.8  # primacy keeps the system prompt and task text in view
    flat = replace(profile, primacy=0.0)  # without primacy the start is no better than the middle
    assert recall_probability(flat, np.array([50]), total)[0] == pytest.approx(middle, abs=0.01)


def test_each_term_has_its_documented_form() -> None:
    profile = replace(PROFILES["base"], primacy=0.5, primacy_span=0.2, recency=0.4, recency_span=0.1,
                      middle=0.3, length_decay=0.5, window=10**9)
    rel = np.array([0.0, 0.25, 0.5, 1.0])
    n = 16_384.0
    content = min(1.0, 0.3 * (n / 4096) ** -0.5)
    expected = 1 - (1 - 0.5 * np.exp(-rel / 0.2)) * (1 - 0.4 * np.exp(-(1 - rel) / 0.1)) * (1 - content)
    assert np.allclose(position_curve(profile, rel, n), expected)
    assert float(length_term(profile, 4096.0)) == pytest.approx(0.3)
    assert float(length_term(profile, 1024.0)) == pytest.approx(0.6)  # shorter contexts: more recall


def test_the_middle_falls_as_the_context_grows() -> None:
    profile = PROFILES["mini"]
    mids = [recall_probability(profile, np.array([n // 2]), n)[0] for n in (2_000, 8_000, 30_000)]
    assert mids[0] > mids[1] > mids[2]


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
    profile = PROFILES["mini"]
    total = profile.window + 10
    prob = recall_probability(profile, np.array([10, 9]), total)
    assert prob[0] > 0.0  # exactly window tokens away: still visible
    assert prob[1] == 0.0  # one more: gone


def test_positions_are_relative_to_the_visible_span() -> None:
    profile = PROFILES["base"]
    total = 3 * profile.window
    start = total - profile.window
    # the oldest visible token is the start of what the model sees: it gets the primacy boost
    first, mid = recall_probability(profile, np.array([start, start + profile.window // 2]), total)
    assert first > mid


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
    assert 0.1 < p < 0.9
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
    assert mini.conflate > base.conflate > pro.conflate
    # each calibrated profile names the published models its recall parameters were fitted to
    assert all("Lost in the Middle" in p.calibrated_to for p in (mini, base, pro))
    # at agent-scale contexts the stronger profile recalls the middle better
    mid = [float(recall_probability(p, np.array([15_000]), 30_000)[0]) for p in (mini, base, pro)]
    assert mid[0] < mid[2] and mid[1] < mid[2]
    assert get_profile("sim/base") is base and get_profile("sim-base") is base
    tweaked = get_profile("base", conflate=1.0, window=500)
    assert tweaked.conflate == 1.0 and tweaked.window == 500 and tweaked.name == "base"
    assert PROFILES["base"].conflate == 0.3  # the registry is not modified
    with pytest.raises(KeyError, match="unknown SimLM profile"):
        get_profile("huge")


def test_recalls_draws_one_fact_at_its_probability() -> None:
    profile = PROFILES["base"]
    total = 40_000
    p_start = float(recall_probability(profile, np.array([0]), total)[0])
    p_mid = float(recall_probability(profile, np.array([total // 2]), total)[0])
    start = np.mean([recalls(profile, 0, total, 1, "rule", step) for step in range(4000)])
    mid = np.mean([recalls(profile, total // 2, total, 1, "rule", step) for step in range(4000)])
    assert start == pytest.approx(p_start, abs=0.03) and mid == pytest.approx(p_mid, abs=0.03)
    assert recalls(PROFILES["perfect"], 0, 10**6, 1, "rule", 0)
    assert not recalls(profile, 0, 3 * profile.window, 1, "rule", 0)  # beyond the window: gone
