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

from pushbench.analysis.calibration import (curve_line, fit_line, fit_table, fitted_profiles, flat_line, flat_table,
                                           forgetting_lines, forgetting_table, load_points, plot_calibration,
                                           plot_forgetting)
from pushbench.analysis.figures import save_table, show_figure, show_table, style

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
print(fit_line(fits))
show_table(fits)

# %% [markdown]
# ## Figure
# Look for the U shape (start and end above the middle) in the first three columns and the fall
# with length in the last; the crosses should scatter around the line within the probe's noise.

# %%
print(curve_line(points))
show_figure(plot_calibration(points), Path(figures), "calibration_curves")

# %% [markdown]
# ## Forgetting by depth and context length
# The fitted curve of each profile, read as what happens to **one fact**: its recall at a depth of
# the context (start, a quarter, the middle, three quarters, the end; "mean" averages 101 depths)
# for contexts of 4k to 128k tokens. Past the profile's window the oldest text is gone (recall 0).
# A profile whose content term M(n) has fallen below 0.05 is **flat** past that length: its recall
# then depends on where the fact sits, not on how long the context is.

# %%
profiles = fitted_profiles(Path(calibration))
flats = flat_table(profiles)
save_table(flats, Path(figures), "calibration_flat", "Context length (tokens) past which each profile's content term M(n) stays below 0.05: recall by position only (model: SimLM, not a real LLM; –: not within 1M tokens).")
print(flat_line(flats))
show_table(flats)

# %%
forgetting = forgetting_table(profiles)
wide = forgetting.pivot_table(index=["model", "depth"], columns="tokens", values="recall", sort=False).reset_index()
wide.columns = [c if isinstance(c, str) else f"{c // 1000}k" for c in wide.columns]
save_table(wide, Path(figures), "calibration_forgetting", "Calibrated recall of one fact by depth and context length (0 beyond the window; model: SimLM, not a real LLM).")
show_table(wide)

# %%
show_figure(plot_forgetting(forgetting, flats), Path(figures), "calibration_forgetting")

# %% [markdown]
# ## What a flat profile implies for memory
# The numbers below come from the table above. For a flat profile (`sim/base`), lengthening the
# context from 8k to its window barely lowers a fact's recall: what loses a fact is its depth (the
# middle is worst) and the window (older text is gone). A memory can then help it only by keeping
# evidence inside the window or by putting it where recall is high (right after the task, as ACG's
# view and the rolling summary do, or at the end), not by making the context shorter. For the
# profiles whose content term still falls (`sim/mini`, `sim/pro`), a shorter context helps too.

# %%
print(forgetting_lines(forgetting, flats))
