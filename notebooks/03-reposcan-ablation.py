# %% [markdown]
# # QGP-RepoScan — stateful-component ablation (paper Fig. 4, App. B.3)
# **Model: SimLM**, the offline behavioural simulator, not a real LLM: the numbers below are
# SimLM's, not the paper's.
#
# **What is shown.** StateQGP taken apart on the same 36 tasks: duplicate filtering only
# (`stateqgp-dedupe`), page memory only (`stateqgp-pages`), both without the candidate buffer
# (`stateqgp-nobuffer`), and full StateQGP, against verifier gating. Paired deltas are matched by
# task and seed (task-cluster bootstrap, 95% percentile intervals).
#
# **The paper's claim (App. B.3).** Duplicate filtering removes duplicate submissions but does not
# raise success above verifier gating; page memory helps (44.4%); full StateQGP is best (72.2%), and
# its paired delta over the no-buffer variant is 0.278 [0.139, 0.417]: the passive memory features
# do not account for the controller's results.

# %% tags=["parameters"]
results = "data/results"
figures = "paper_figures"
experiment = "reposcan-ablation"
n_resamples = 10000
seed = 0

# %% [markdown]
# ## Load

# %%
from pathlib import Path

import pandas as pd

from pushbench.analysis.aggregate import load_results
from pushbench.analysis.deltas import paired_deltas
from pushbench.analysis.reposcan import main_table, plot_ablation
from pushbench.analysis.takeaways import best_condition_line, delta_line
from pushbench.analysis.figures import label_models, save_table, show_figure, show_table, style

style()
episodes = load_results(results, experiment)
order = [c for c in ["gated", "stateqgp-dedupe", "stateqgp-pages", "stateqgp-nobuffer", "stateqgp"]
         if c in set(episodes.controller)]
note = label_models(list(episodes.model.unique()))
print(f"{len(episodes)} episodes of {experiment}; controllers {', '.join(order)}; {note}")

# %% [markdown]
# ## Compute
# Each variant against verifier gating, and full StateQGP against the no-buffer variant (what the
# candidate buffer adds).

# %%
table = main_table(episodes, n_resamples, seed)
vs_gated = paired_deltas(episodes, "gated", [c for c in order if c != "gated"], n_resamples, seed, by_target=False)
full_vs_nobuffer = paired_deltas(episodes, "stateqgp-nobuffer", ["stateqgp"], n_resamples, seed, by_target=False)
deltas = pd.concat([vs_gated, full_vs_nobuffer], ignore_index=True)

# %% [markdown]
# ## Tables
# Success and duplicate rate per variant: `duplicate_rate` is 0 wherever duplicate filtering is
# on. Then the paired deltas: look at `stateqgp-dedupe − gated` (filtering alone) and at
# `stateqgp − stateqgp-nobuffer` (the buffer), and whether their intervals exclude 0.

# %%
save_table(table, Path(figures), "reposcan_ablation_table", f"StateQGP component ablation ({note}).")
save_table(deltas, Path(figures), "reposcan_ablation_deltas",
           f"Paired success deltas, 95% task-bootstrap intervals ({note}).")
print(best_condition_line(table, "controller", "gated"))
show_table(table[["model", "controller", "success", "success_sd", "valid_count", "duplicate_rate",
                  "valid_per_step", "episodes"]])

# %%
print(delta_line(deltas, "stateqgp − stateqgp-nobuffer"))
show_table(deltas)

# %% [markdown]
# ## Figure 4
# Left: success per variant (± task-bootstrap SD), one colour per model, weakest first. Right: the
# paired deltas with 95% intervals; a component helps where its interval lies right of 0.

# %%
print(delta_line(deltas, "stateqgp-dedupe − gated"))
show_figure(plot_ablation(table, deltas, order), Path(figures), "fig4_reposcan_ablation")
