# %% [markdown]
# # QGP-RepoScan — main table (paper §7, App. B.1)
# **Model: SimLM**, the offline behavioural simulator (profiles `sim/mini`, `sim/base`, `sim/pro`
# and the `sim/perfect` upper bound), not a real LLM: the numbers below are SimLM's, not the paper's.
#
# **What is shown.** Success (with task-bootstrap SD), verified valid count, duplicate submit rate,
# valid artifacts per step, false completion, premature stop and reported-count error by model ×
# backend × memory × controller on the 36 RepoScan tasks; the standard controller's memory
# baselines (`memgpt`, `langgraph-store`) sit beside the controllers. Then what the grid cost in
# LLM calls and tokens.
#
# **The paper's claim (§7, App. B.1).** StateQGP reaches 69–78% success with a duplicate submit
# rate of 0.000 in every row, above the standard and verifier-gated controllers; memory baselines
# reduce duplicates, but how much they help depends on the model.

# %% tags=["parameters"]
results = "data/results"
figures = "paper_figures"
experiment = "reposcan-main"
memory_experiment = "reposcan-memory"
n_resamples = 10000
seed = 0

# %% [markdown]
# ## Load
# The controller grid, and the memory-baseline grid without its plain-transcript rows (those are
# the standard controller's rows of the main grid already).

# %%
from pathlib import Path

import pandas as pd

from pushbench.analysis.aggregate import load_results
from pushbench.analysis.reposcan import cost_table, main_table, main_takeaway, plot_main
from pushbench.analysis.figures import label_models, save_table, show_figure, show_table, style

style()

controllers = load_results(results, experiment)
memory = load_results(results, memory_experiment)
episodes = pd.concat([controllers, memory[memory.memory != "full"]], ignore_index=True)
note = label_models(list(episodes.model.unique()))
print(f"{len(controllers)} episodes of {experiment}, {len(episodes) - len(controllers)} memory-baseline "
      f"episodes of {memory_experiment}; {note}")

# %% [markdown]
# ## Compute

# %%
table = main_table(episodes, n_resamples, seed)
costs = cost_table(controllers)

# %% [markdown]
# ## Main table
# Within each model, compare `stateqgp` with `standard` and `gated`: success, `duplicate_rate`
# (0.000 for StateQGP, as in the paper) and `reported_count_error` (the gap between the count an
# agent reports and the verified one). `false_completion` and `premature_stop` show how the
# standard controller fails; verifier gating keeps both at 0 by blocking a final below the
# target. Rows run from the weakest profile to `sim/perfect`, which never fails.

# %%
save_table(table, Path(figures), "reposcan_main_table",
           f"RepoScan main table ({len(episodes)} episodes; {note}). success_sd is the task-bootstrap SD.")
show_table(table)

# %% [markdown]
# Success per model and condition at a glance, and StateQGP beside the standard controller:

# %%
print(main_takeaway(table))
show_figure(plot_main(table), Path(figures), "reposcan_success_by_condition")

# %% [markdown]
# ## Cost
# LLM calls and tokens per episode and per condition (each call's input counts its whole
# context), shown with one decimal and thousands separators, as in `reposcan_costs.md`.

# %%
save_table(costs, Path(figures), "reposcan_costs",
           f"RepoScan main grid: LLM calls and tokens per episode and per condition ({label_models(list(costs.model))}).",
           floatfmt=",.1f")
show_table(costs, floatfmt=",.1f")
