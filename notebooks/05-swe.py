# %% [markdown]
# # QGP-SWE-lite — success by controller and backend (paper App. D.1)
# Issue-style repairs in isolated workspace copies, each verified by its targeted tests.
# Standard, verifier-gated and UnitQGP controllers on the native and LangGraph backends; paired
# success deltas of UnitQGP over the other two, matched by task and seed; pass rate per issue
# kind. **Model: SimLM.** SimLM's decisions do not depend on the backend, so the LangGraph rows
# repeat the native ones (the paper's 37.5% vs 41.7% gap comes from a real model's sampling).

# %% tags=["parameters"]
results = "data/results"
figures = "paper_figures"
family = "swe"
n_resamples = 10000
seed = 0

# %%
from pathlib import Path

from pushbench.aggregate import load_results
from pushbench.analysis.units import success_by_target, controller_deltas, per_unit_type, plot_success_bars, success_table
from pushbench.figures import label_models, save_figure, save_table, style

style()
episodes = load_results(results)
episodes = episodes[episodes.family == family].reset_index(drop=True)
table = success_table(episodes, n_resamples, seed)
note = label_models(list(episodes.model.unique()))
save_table(table.drop(columns=["condition"]), Path(figures), "swe_success", f"SWE-lite success by condition ({note}).")
save_figure(plot_success_bars(table, "QGP-SWE-lite"), Path(figures), "swe_success")
table[["model", "condition", "success", "success_sd", "unit_success", "verifier_recoveries"]]

# %% [markdown]
# Paired deltas (UnitQGP − baseline), matched by task and seed, 95% task-bootstrap intervals.

# %%
deltas = controller_deltas(episodes, "unitqgp", ["standard", "gated"], n_resamples, seed)
save_table(deltas, Path(figures), "swe_paired_deltas", f"SWE-lite paired success deltas of UnitQGP ({note}).")
deltas

# %% [markdown]
# Unit pass rate by issue kind: the failing test ends in an assertion or in an exception.

# %%
units = per_unit_type(episodes)
save_table(units, Path(figures), "swe_unit_types", f"SWE-lite unit pass rate by issue kind ({note}).")
units

# %% [markdown]
# Success by backlog size N (native backend, plain transcript), with task-bootstrap SDs.

# %%
by_n = success_by_target(episodes, n_resamples, seed)
save_table(by_n, Path(figures), "swe_success_by_n", f"SWE-lite success by backlog size N ({note}).")
by_n
