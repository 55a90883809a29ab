# %% [markdown]
# # QGP-RepoScan — stateful-component ablation (paper Fig. 4, App. B.3)
# Dedupe only, page memory only, dedupe + pages without the candidate buffer, and full StateQGP,
# against verifier gating, on the same 36 tasks. Paired deltas are matched by task and seed.
# **Model: SimLM.**

# %% tags=["parameters"]
results = "data/results"
figures = "paper_figures"
experiment = "reposcan-ablation"
n_resamples = 10000
seed = 0

# %%
from pathlib import Path

import pandas as pd

from pushbench.aggregate import load_results
from pushbench.analysis.deltas import paired_deltas
from pushbench.analysis.reposcan import main_table, plot_ablation
from pushbench.figures import label_models, save_figure, save_table, style

style()
episodes = load_results(results, experiment)
order = [c for c in ["gated", "stateqgp-dedupe", "stateqgp-pages", "stateqgp-nobuffer", "stateqgp"]
         if c in set(episodes.controller)]
table = main_table(episodes, n_resamples, seed)
vs_gated = paired_deltas(episodes, "gated", [c for c in order if c != "gated"], n_resamples, seed, by_target=False)
full_vs_nobuffer = paired_deltas(episodes, "stateqgp-nobuffer", ["stateqgp"], n_resamples, seed, by_target=False)
deltas = pd.concat([vs_gated, full_vs_nobuffer], ignore_index=True)
note = label_models(list(episodes.model.unique()))
save_table(table, Path(figures), "reposcan_ablation_table", f"StateQGP component ablation ({note}).")
save_table(deltas, Path(figures), "reposcan_ablation_deltas",
           f"Paired success deltas, 95% task-bootstrap intervals ({note}).")
save_figure(plot_ablation(table, deltas, order), Path(figures), "fig4_reposcan_ablation")
deltas
