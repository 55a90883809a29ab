"""The least-squares fit: it recovers known parameters from synthetic points, and reads the data."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import numpy as np
import pytest

from pushbench import config
from pushbench.calibration.fit import Point, fit, litm_curve, predict, read_rows, ruler_curve
from pushbench.calibration.probe import Layout, build_context, layout
from pushbench.policies.sim.profiles import PRIORS, RECALL_PARAMS

DATA = config.ROOT / "data" / "calibration"


@lru_cache(maxsize=1)
def synthetic_grid() -> tuple[list[Layout], list[Point]]:
    """Every position of 10/20/30 documents and 11 depths at three longer lengths (no normaliser)."""
    layouts: list[Layout] = []
    points: list[Point] = []
    for n_docs in (10, 20, 30, 56, 111, 223):
        layouts.append(layout(build_context(n_docs, 147, 3), PRIORS["base"]))
        docs = range(n_docs) if n_docs <= 30 else sorted({round(d * (n_docs - 1)) for d in np.linspace(0, 1, 11)})
        points += [Point("synthetic", f"{n_docs}/{d}", len(layouts) - 1, (d,), 0.0) for d in docs]
    return layouts, points


@pytest.mark.parametrize("truth", [
    dict(primacy=0.7, primacy_span=0.15, recency=0.5, recency_span=0.08, middle=0.45, length_decay=0.35),
    dict(primacy=0.3, primacy_span=0.05, recency=0.8, recency_span=0.2, middle=0.6, length_decay=0.1),
])
def test_fit_recovers_known_parameters(truth: dict[str, float]) -> None:
    layouts, grid = synthetic_grid()
    true_profile = replace(PRIORS["base"], **truth)
    values = predict(true_profile, layouts, grid)
    points = [replace(p, value=float(v)) for p, v in zip(grid, values)]
    result = fit(PRIORS["base"], layouts, points)  # starts from the prior, far from the truth
    assert result.rmse < 1e-4
    for name in RECALL_PARAMS:
        assert result.params[name] == pytest.approx(truth[name], abs=0.02), name


def test_normalised_points_divide_by_their_reference() -> None:
    layouts, grid = synthetic_grid()
    ref = grid[0]
    point = replace(grid[-1], normaliser=0)
    raw = predict(PRIORS["mini"], layouts, [ref, grid[-1]])
    assert predict(PRIORS["mini"], layouts, [ref, point])[1] == pytest.approx(raw[1] / raw[0])


def test_published_curves_are_read_as_recall_fractions() -> None:
    litm = litm_curve(read_rows(DATA / "lost_in_the_middle_qa.csv"), "GPT-3.5-Turbo (16K)")
    assert litm[(20, 1)] == pytest.approx(75.7 / 88.6)  # App. G Table 6 over Table 1's oracle
    assert len(litm) == 15 and litm[(30, 10)] < litm[(30, 1)] and litm[(30, 10)] < litm[(30, 30)]
    ruler = ruler_curve(read_rows(DATA / "ruler.csv"), "GPT-4", "Table 3 (arXiv v3; 17 models)")
    assert ruler[4096] == 1.0 and ruler[131072] == pytest.approx(81.2 / 96.6)
    with pytest.raises(ValueError, match="no oracle row"):
        litm_curve(read_rows(DATA / "lost_in_the_middle_qa.csv"), "GPT-5")
