# %% [markdown]
# # QGP-SWE-lite — success by controller (paper App. D.1)
# **Model: SimLM**, the offline behavioural simulator (profiles `sim/mini`, `sim/base`, `sim/pro`),
# not a real LLM: the numbers below are SimLM's, not the paper's. SimLM's decisions do not depend on
# the backend: the LangGraph rows were exact copies of the native ones (the paper's 37.5% vs 41.7%
# gap comes from a real model's sampling), so since issue 30 the pipeline runs the native backend
# only (`tests/backends/test_langgraph.py` checks the same episodes on both).
#
# **What is shown.** Issue-style repairs in isolated workspace copies, each verified by its targeted
# tests: success of the standard, verifier-gated and UnitQGP controllers on the native backend;
# paired success deltas of UnitQGP over the other two, matched by task and seed; pass rate per
# issue kind; success by backlog size.
#
# **The paper's claim (App. D.1, §9).** Standard and verifier-gated controllers complete no
# SWE-lite task, UnitQGP reaches 37.5% (native) and 41.7% (LangGraph); these results mix
# persistence with coding, navigation and harness behaviour.

# %% tags=["parameters"]
results = "data/results"
figures = "paper_figures"
family = "swe"
n_resamples = 10000
seed = 0

# %% [markdown]
# ## Load

# %%
from pathlib import Path

from pushbench.analysis.aggregate import load_results
from pushbench.analysis.units import controller_deltas, per_unit_type, plot_success_bars, success_by_target, success_table
from pushbench.analysis.takeaways import best_condition_line, delta_line, target_line, unit_type_line
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
deltas = controller_deltas(episodes, "unitqgp", ["standard", "gated"], n_resamples, seed)
units = per_unit_type(episodes)
by_n = success_by_target(episodes, n_resamples, seed)

# %% [markdown]
# ## Success by condition
# Within each model, compare `unitqgp` with `standard` and `gated`; `unit_success` is the share
# of a backlog's issues whose tests pass, `verifier_recoveries` the issues a later repair fixed.

# %%
save_table(table.drop(columns=["condition"]), Path(figures), "swe_success", f"SWE-lite success by condition ({note}).")
print(best_condition_line(table, "condition", "standard"))
show_table(table[["model", "condition", "success", "success_sd", "unit_success", "verifier_recoveries"]])

# %% [markdown]
# ## Paired deltas
# UnitQGP − baseline, matched by task and seed, 95% task-bootstrap intervals: a gain is supported
# where the interval stays above 0.

# %%
save_table(deltas, Path(figures), "swe_paired_deltas", f"SWE-lite paired success deltas of UnitQGP ({note}).")
print(delta_line(deltas, "unitqgp − standard"))
show_table(deltas)

# %% [markdown]
# ## Unit pass rate by issue kind
# The failing test ends in an assertion or in an exception.

# %%
save_table(units, Path(figures), "swe_unit_types", f"SWE-lite unit pass rate by issue kind ({note}).")
print(unit_type_line(units, "unitqgp"))
show_table(units)

# %% [markdown]
# ## Success by backlog size N
# Native backend, plain transcript, with task-bootstrap SDs.

# %%
save_table(by_n, Path(figures), "swe_success_by_n", f"SWE-lite success by backlog size N ({note}).")
print(target_line(by_n, ["standard", "gated", "unitqgp"]))
show_table(by_n)

# %% [markdown]
# ## Figure: success by condition
# Per model (weakest first) and condition (± task-bootstrap SD): colour is the controller. Look at UnitQGP (green) against standard (grey) and gated (blue).

# %%
show_figure(plot_success_bars(table, "QGP-SWE-lite"), Path(figures), "swe_success")
