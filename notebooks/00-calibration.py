# %% [markdown]
# # SimLM's recall, calibrated to published long-context measurements (issue 19)
# **Model: SimLM**, the offline behavioural simulator, not a real LLM.
#
# **What is shown.** For each profile, the published points of the model it is calibrated to
# (Lost in the Middle: multi-document QA accuracy by answer position at 10, 20 and 30 documents,
# divided by the oracle accuracy; RULER: score by context length, divided by the 4K score), the
# fitted recall curve at the probe's token offsets, and SimLM's own accuracy on the probe (the same
# question shape, answered through the messages). The fit is the `calibrate` stage
# (`pushbench.calibration`, docs/calibration.md); the PushBench and ACG results are not fitted.

# %% tags=["parameters"]
results = "data/results"
figures = "paper_figures"
calibration = "data/calibration"
n_resamples = 10000
seed = 0

# %% [markdown]
# ## Load
# The fitted parameters and every probe point the stage wrote.

# %%
from pathlib import Path

from pushbench.analysis.calibration import fit_table, load_points, plot_calibration
from pushbench.figures import save_table, show_figure, show_table, style

style()
points = load_points(Path(calibration))
fits = fit_table(Path(calibration))
print(f"{len(points)} published points for {len(fits)} profiles")

# %% [markdown]
# ## Fitted parameters and fit errors
# `rmse` is over the recall fractions of all points (Lost in the Middle and RULER together);
# `probe_rmse` compares SimLM's probed accuracy (finite repetitions) with the published points.

# %%
save_table(fits, Path(figures), "calibration_fit", "SimLM recall parameters fitted per profile (model: SimLM, not a real LLM).")
show_table(fits)

# %% [markdown]
# ## Figure
# Look for the U shape (start and end above the middle) in the first three columns and the fall
# with length in the last; the crosses should scatter around the line within the probe's noise.

# %%
show_figure(plot_calibration(points), Path(figures), "calibration_curves")
