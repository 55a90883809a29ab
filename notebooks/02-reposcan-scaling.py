# %% [markdown]
# # QGP-RepoScan — target scaling with paired intervals (paper Fig. 3, App. B.2)
# Success by target N per controller, and paired success deltas over the standard controller,
# matched by task and seed (task-cluster bootstrap, 95% percentile intervals). **Model: SimLM.**

# %% tags=["parameters"]
results = "data/results"
figures = "paper_figures"
experiment = "reposcan-main"
n_resamples = 10000
seed = 0

# %%
from pathlib import Path

from pushbench.aggregate import load_results
from pushbench.analysis.deltas import paired_deltas
from pushbench.analysis.reposcan import plot_scaling, scaling_table
from pushbench.figures import label_models, save_figure, save_table, style

style()
episodes = load_results(results, experiment)
controllers = [c for c in ["standard", "gated", "stateqgp"] if c in set(episodes.controller)]
scaling = scaling_table(episodes, n_resamples, seed)
deltas = paired_deltas(episodes, "standard", [c for c in controllers if c != "standard"], n_resamples, seed)
overall = paired_deltas(episodes, "standard", [c for c in controllers if c != "standard"], n_resamples, seed,
                        by_target=False)
note = label_models(list(episodes.model.unique()))
save_table(scaling, Path(figures), "reposcan_target_scaling", f"Success by target N ({note}).")
save_table(deltas, Path(figures), "reposcan_paired_deltas_by_target",
           f"Paired success deltas over standard by N, 95% task-bootstrap intervals ({note}).")
save_table(overall, Path(figures), "reposcan_paired_deltas",
           f"Paired success deltas over standard, all 36 tasks, 95% task-bootstrap intervals ({note}).")
save_figure(plot_scaling(scaling, deltas, controllers), Path(figures), "fig3_reposcan_target_scaling")
overall
