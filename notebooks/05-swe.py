# %% [markdown]
# # QGP-SWE-lite — success by controller (paper App. D.1)
# Issue-style repairs in isolated workspace copies, each verified by its targeted tests.
# Standard, verifier-gated and UnitQGP controllers. **Model: SimLM.**

# %% tags=["parameters"]
results = "data/results"
figures = "paper_figures"
family = "swe"
n_resamples = 10000
seed = 0

# %%
from pathlib import Path

from pushbench.aggregate import load_results
from pushbench.analysis.units import per_unit_type, success_table
from pushbench.figures import label_models, save_table

episodes = load_results(results)
episodes = episodes[episodes.family == family].reset_index(drop=True)
table = success_table(episodes, n_resamples, seed)
note = label_models(list(episodes.model.unique()))
save_table(table.drop(columns=["condition"]), Path(figures), "swe_success", f"SWE-lite success by condition ({note}).")
units = per_unit_type(episodes)
if not units.empty:
    save_table(units, Path(figures), "swe_unit_types", f"SWE-lite unit pass rate by fault type ({note}).")
table[["model", "condition", "success", "success_sd", "unit_success", "verifier_recoveries"]]
