"""The one-line takeaways of notebooks 00 (calibration), 06 (black-box) and 08 (forks), on small
hand-made tables, including a missing condition."""

from __future__ import annotations

import pandas as pd

from pushbench.analysis.blackbox import checklist_line, counts_line
from pushbench.analysis.calibration import curve_line, fit_line, flat_line, forgetting_lines
from pushbench.analysis.forks import fresh_line, rescue_line, trend_line


def test_fit_line_gives_each_rmse_and_the_worst_probe() -> None:
    fits = pd.DataFrame({"model": ["sim/mini", "sim/pro"], "rmse": [0.0161, 0.02], "probe_rmse": [0.05, 0.03]})
    assert fit_line(fits) == "SimLM fit rmse: sim/mini 0.016, sim/pro 0.020; largest probe_rmse 0.050 (sim/mini)"
    assert fit_line(fits.iloc[0:0]) == "no fitted profiles"


def test_flat_line_separates_flat_profiles_from_the_rest() -> None:
    flats = pd.DataFrame({"model": ["sim/mini", "sim/base"], "flat_from_tokens": pd.array([None, 5854], dtype="Int64")})
    assert flat_line(flats) == "SimLM flat profiles: sim/base from 5,854 tokens; not flat within 1M tokens: sim/mini"
    assert flat_line(flats.iloc[1:]) == "SimLM flat profiles: sim/base from 5,854 tokens; not flat within 1M tokens: none"


def test_curve_line_counts_u_shapes_and_falls_for_published_fitted_and_probe() -> None:
    rows = [("sim/mini", "10 docs", x, p, e, q) for x, p, e, q in [(1, 0.9, 0.9, 0.9), (5, 0.5, 0.5, 0.5), (10, 0.8, 0.4, 0.8)]]
    rows += [("sim/mini", "length", x, p, e, q) for x, p, e, q in [(4000, 1.0, 1.0, 1.0), (32000, 0.7, 0.7, 1.0)]]
    points = pd.DataFrame(rows, columns=["model", "panel", "x", "published", "expected", "probe"])
    assert curve_line(points) == ("Lost in the Middle panels with both end positions above the middle: published 1, "
                                  "fitted 0, SimLM probe 1 of 1; profiles with lower RULER recall at the longest "
                                  "length than at the shortest: published 1, fitted 1, SimLM probe 0 of 1")
    assert curve_line(points.iloc[0:0]) == "no calibration points"


def test_forgetting_lines_read_the_table_and_name_a_profile_missing_a_point() -> None:
    points = [("middle", 8_000, 0.6), ("middle", 32_000, 0.4), ("start", 32_000, 0.8), ("end", 32_000, 0.9),
              ("mean", 128_000, 0.0)]
    forgetting = pd.DataFrame([("sim/mini", d, t, r) for d, t, r in points], columns=["model", "depth", "tokens", "recall"])
    flats = pd.DataFrame({"model": ["sim/mini", "sim/pro"], "window": [32_000, 128_000]})
    assert forgetting_lines(forgetting, flats) == (
        "sim/mini: middle 0.60 at 8k -> 0.40 at 32k; start 0.80, end 0.90 at 32k; mean over depths 0.00 at 128k "
        "(window 32,000)\nsim/pro: not all depths and lengths computed")


def counts() -> pd.DataFrame:
    rows = [("a", "sim/mini", 50, "default", 4, 9), ("a", "sim/mini", 100, "default", 0, 9),
            ("b", "sim/base", 50, "default", 8, 9), ("b", "sim/base", 100, "checklist", 6, 9)]
    return pd.DataFrame(rows, columns=["agent", "model", "target", "prompt", "successes", "tasks"])


def test_counts_line_gives_each_agent_from_the_smallest_to_the_largest_target() -> None:
    assert counts_line(counts()) == "SimLM-driven agents: default prompt, successes at N = 50 → N = 100: a 4/9 → 0/9"
    assert counts_line(counts(), "checklist") == "no agent ran both N = 50 and N = 100 with the checklist prompt"
    assert counts_line(counts(), "terse") == "no terse-prompt rows"


def test_checklist_line_counts_the_intervals_excluding_zero() -> None:
    table7 = pd.DataFrame({"model": ["sim/mini", "gpt-x"], "delta": [-0.1, 0.3], "ci_low": [-0.4, 0.1], "ci_high": [0.2, 0.5]})
    assert checklist_line(table7) == ("checklist − default paired 95% interval excludes 0 in 1 of 2 agent × N rows; "
                                      "deltas from -0.100 to +0.300")
    assert checklist_line(table7.iloc[0:0]) == "no checklist − default pairs"


def fork_rows() -> pd.DataFrame:
    rows = [("sim/mini", "75%", 10, 3, 0.3), ("sim/mini", "25%", 10, 7, 0.7), ("sim/pro", "25%", 4, 4, 1.0),
            ("sim/pro", "75%", 4, 2, 0.5), ("sim/pro", "12", 4, 1, 0.25)]
    table = pd.DataFrame(rows, columns=["model", "fork_at", "forks", "rescued", "rescue_rate"])
    return table.assign(from_controller="standard", controller="stateqgp")


def test_rescue_line_pools_models_per_fork_point_in_order() -> None:
    assert rescue_line(fork_rows()) == ("SimLM forks: failed standard episodes succeeding under stateqgp after the fork, "
                                        "pooled over models: 11 of 14 at 25%, 5 of 14 at 75%, 1 of 4 at 12")
    assert rescue_line(fork_rows().iloc[0:0]) == "no forks"


def test_trend_line_compares_the_first_and_last_percentage_fork_points() -> None:
    assert trend_line(fork_rows()) == "SimLM rescue rate from the fork at 25% to 75%: sim/mini 0.70 → 0.30, sim/pro 1.00 → 0.50"
    assert trend_line(fork_rows()[fork_rows().fork_at == "12"]) == "no forks at a percentage of the steps"


def test_fresh_line_sums_the_failed_episodes_over_models() -> None:
    fresh = pd.DataFrame({"model": ["sim/pro", "sim/mini"], "controller": "stateqgp", "failed": [4, 10], "succeeded": [1, 8]})
    assert fresh_line(fresh) == ("SimLM stateqgp from step 0 succeeded on 9 of 14 of the same failed tasks and seeds "
                                 "(sim/mini 8/10, sim/pro 1/4)")
    assert fresh_line(fresh.iloc[0:0]) == "no failed episodes with a from-step-0 counterpart"
