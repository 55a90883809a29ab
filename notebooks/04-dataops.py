# %% [markdown]
# # QGP-DataOps-lite — success by controller with memory baselines (paper Fig. 2, App. C)
# Standard, verifier-gated and UnitQGP controllers, and standard-controller memory baselines
# where they were run; then pass rates per unit type. **Model: SimLM.**

# %% tags=["parameters"]
results = "data/results"
figures = "paper_figures"
family = "dataops"
n_resamples = 10000
seed = 0

# %%
from pathlib import Path

from pushbench.aggregate import load_results
from pushbench.analysis.units import success_by_target, per_unit_type, plot_success_bars, success_table
from pushbench.figures import label_models, save_figure, save_table, style

style()
episodes = load_results(results)
episodes = episodes[episodes.family == family].reset_index(drop=True)
table = success_table(episodes, n_resamples, seed)
note = label_models(list(episodes.model.unique()))
save_table(table.drop(columns=["condition"]), Path(figures), "dataops_success", f"DataOps-lite success by condition ({note}).")
save_table(per_unit_type(episodes), Path(figures), "dataops_unit_types",
           f"DataOps-lite unit pass rate by unit type ({note}).")
save_figure(plot_success_bars(table, "QGP-DataOps-lite"), Path(figures), "fig2_dataops_success")
table[["model", "condition", "success", "success_sd", "unit_success", "verifier_recoveries"]]

# %% [markdown]
# Success by backlog size N (native backend, plain transcript), with task-bootstrap SDs.

# %%
by_n = success_by_target(episodes, n_resamples, seed)
save_table(by_n, Path(figures), "dataops_success_by_n", f"DataOps-lite success by backlog size N ({note}).")
by_n
