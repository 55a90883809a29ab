# %% [markdown]
# # QGP-DataOps-lite — success by controller with memory baselines (paper Fig. 2, §8, App. C)
# **Model: SimLM**, the offline behavioural simulator (profiles `sim/mini`, `sim/base`, `sim/pro`
# and the `sim/perfect` upper bound), not a real LLM: the numbers below are SimLM's, not the paper's.
#
# **What is shown.** Success on backlogs of checker-verified work units (N = 3, 5, 10, 20) for
# the standard, verifier-gated and UnitQGP controllers on the native backend, and the standard
# controller's memory baselines where they were run; then success by backlog size. (SimLM decides
# alike on LangGraph: its rows were exact copies of these, so since issue 30 the pipeline runs the
# native backend only; `tests/backends/test_langgraph.py` checks the same episodes on both.)
# The unit pass rate per unit type is written to `dataops_unit_types.md` (not shown: one row per
# model, condition and unit type).
#
# **The paper's claim (§8, Fig. 2, App. C).** Standard and verifier-gated controllers complete no
# DataOps-lite task; UnitQGP reaches 25–50% and improves over both for every model and backend;
# memory baselines recover some completion, depending on the model.

# %% tags=["parameters"]
results = "data/results"
figures = "paper_figures"
family = "dataops"
n_resamples = 10000
seed = 0

# %% [markdown]
# ## Load
# Every DataOps-lite episode (controller grid and memory baselines).

# %%
from pathlib import Path

from pushbench.analysis.aggregate import load_results
from pushbench.analysis.units import per_unit_type, plot_success_bars, success_by_target, success_table
from pushbench.analysis.takeaways import best_condition_line, target_line
from pushbench.analysis.figures import label_models, save_table, show_figure, show_table, style

style()
episodes = load_results(results)
episodes = episodes[episodes.family == family].reset_index(drop=True)
note = label_models(list(episodes.model.unique()))
print(f"{len(episodes)} {family} episodes; {note}")

# %% [markdown]
# ## Compute

# %%
table = success_table(episodes, n_resamples, seed)
by_n = success_by_target(episodes, n_resamples, seed)
unit_types = per_unit_type(episodes)

# %% [markdown]
# ## Success by condition
# A condition is the controller, or `memory (controller)` for a memory baseline, with the backend
# when it is not native. Within each model, compare `unitqgp` with `standard` and `gated`;
# `unit_success` is the share of a backlog's units that passed, `verifier_recoveries` the units
# a later repair turned from failing to passing.

# %%
save_table(table.drop(columns=["condition"]), Path(figures), "dataops_success", f"DataOps-lite success by condition ({note}).")
save_table(unit_types, Path(figures), "dataops_unit_types", f"DataOps-lite unit pass rate by unit type ({note}).")
print(best_condition_line(table, "condition", "standard"))
show_table(table[["model", "condition", "success", "success_sd", "unit_success", "verifier_recoveries"]])

# %% [markdown]
# ## Success by backlog size N
# Native backend, plain transcript, with task-bootstrap SDs: look at how fast each controller
# falls as the backlog grows.

# %%
save_table(by_n, Path(figures), "dataops_success_by_n", f"DataOps-lite success by backlog size N ({note}).")
print(target_line(by_n, ["standard", "gated", "unitqgp"]))
show_table(by_n)

# %% [markdown]
# ## Figure 2
# Success per model (weakest first) and condition (± task-bootstrap SD): colour is the controller,
# `//` hatching a memory baseline. Look at the UnitQGP bars (green)
# against standard (grey) and gated (blue).

# %%
show_figure(plot_success_bars(table, "QGP-DataOps-lite"), Path(figures), "fig2_dataops_success")
