# %% [markdown]
# # QGP-RepoScan — main table
# Success, verified valid count, duplicate submit rate and valid artifacts per step by model ×
# backend × memory × controller (paper §7). **Model: SimLM**, the offline behavioural simulator.

# %% tags=["parameters"]
results = "data/results"
figures = "paper_figures"
experiment = "reposcan-main"
memory_experiment = "reposcan-memory"  # memory baselines (standard controller), shown beside the controllers
n_resamples = 10000
seed = 0

# %%
from pathlib import Path

from pushbench.aggregate import load_results
from pushbench.analysis.reposcan import cost_table, main_table
from pushbench.figures import label_models, save_table

import pandas as pd

controllers = load_results(results, experiment)
memory = load_results(results, memory_experiment)
episodes = pd.concat([controllers, memory[memory.memory != "full"]], ignore_index=True)
table = main_table(episodes, n_resamples, seed)
caption = (f"RepoScan main table ({len(episodes)} episodes; {label_models(list(episodes.model.unique()))}). "
           "success_sd is the task-bootstrap SD.")
save_table(table, Path(figures), "reposcan_main_table", caption)
table

# %% [markdown]
# What the main grid cost in LLM calls and tokens (each call's input counts its whole context).

# %%
costs = cost_table(controllers)
save_table(costs, Path(figures), "reposcan_costs",
           f"RepoScan main grid: LLM calls and tokens per episode and per condition ({label_models(list(costs.model))}).",
           floatfmt=",.1f")
costs
