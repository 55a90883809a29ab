"""The calibration notebook's tables and figure, from the committed stage outputs."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from pushbench import config
from pushbench.analysis.calibration import PANELS, fit_table, load_points, plot_calibration

FOLDER = config.ROOT / "data" / "calibration"


def test_points_and_fits_are_read_per_profile() -> None:
    points = load_points(FOLDER)
    assert set(points.model) == {"sim/mini", "sim/base", "sim/pro"}
    assert set(points.panel) == set(PANELS)
    base20 = points[(points.model == "sim/base") & (points.panel == "20 docs")].sort_values("x")
    assert list(base20.x) == [1, 5, 10, 15, 20] and set(base20.published_model) == {"GPT-3.5-Turbo (16K)"}
    fits = fit_table(FOLDER)
    assert list(fits.model) == ["sim/mini", "sim/base", "sim/pro"]  # weakest first
    assert (fits.rmse < 0.05).all()


def test_the_figure_has_a_panel_per_profile_and_source() -> None:
    fig = plot_calibration(load_points(FOLDER))
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 3 * len(PANELS)
    assert "SimLM" in fig._suptitle.get_text()


def test_forgetting_by_depth_and_length_follows_the_fitted_curve() -> None:
    from pushbench.analysis.calibration import DEPTHS, LENGTHS, fitted_profiles, flat_table, forgetting_table, plot_forgetting

    profiles = fitted_profiles(FOLDER)
    assert set(profiles) == {"sim/mini", "sim/base", "sim/pro"}
    table = forgetting_table(profiles)
    assert len(table) == 3 * len(LENGTHS) * (len(DEPTHS) + 1)
    at = table.set_index(["model", "depth", "tokens"]).recall
    for model, p in profiles.items():
        beyond = [n for n in LENGTHS if n > p.window]
        assert all(at[(model, "start", n)] == 0.0 for n in beyond)  # the oldest text is past the window
        assert all(at[(model, "end", n)] > 0.5 for n in LENGTHS)
        assert at[(model, "mean", LENGTHS[0])] > at[(model, "mean", LENGTHS[-1])]
    flats = flat_table(profiles).set_index("model").flat_from_tokens
    assert 4_000 < flats["sim/base"] < 8_000 and flats.isna()[["sim/mini", "sim/pro"]].all()
    base_middle = [at[("sim/base", "middle", n)] for n in LENGTHS if 8_000 <= n <= 64_000]
    assert max(base_middle) - min(base_middle) < 0.02  # flat: position, not length, decides its recall
    fig = plot_forgetting(table, flat_table(profiles))
    assert len(fig.axes) == 3 and "SimLM" in fig._suptitle.get_text()
