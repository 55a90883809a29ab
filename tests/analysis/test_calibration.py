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
