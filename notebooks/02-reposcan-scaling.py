# %% [markdown]
# # QGP-RepoScan — target scaling with paired intervals (paper Fig. 3, App. B.2)
# **Model: SimLM**, the offline behavioural simulator (profiles `sim/mini`, `sim/base`, `sim/pro`
# and the `sim/perfect` upper bound), not a real LLM: the numbers below are SimLM's, not the paper's.
#
# **What is shown.** Success rate by target N (10, 25, 50, 100; nine tasks per N) for the standard,
# verifier-gated and StateQGP controllers, and paired success deltas over the standard controller,
# matched by task and seed (task-cluster bootstrap, 95% percentile intervals).
#
# **The paper's claim (App. B.2).** Many controllers succeed at N = 10 but collapse by N = 50 or
# N = 100, while StateQGP stays nonzero at the largest target for every model; the intervals are
# for paired differences, not for the success rates themselves.

# %% tags=["parameters"]
results = "data/results"
figures = "paper_figures"
experiment = "reposcan-main"
n_resamples = 10000
seed = 0

# %% [markdown]
# ## Load
# The RepoScan main grid (native backend, plain transcript), from the aggregated episodes.

# %%
from pathlib import Path

from pushbench.analysis.aggregate import load_results
from pushbench.analysis.deltas import paired_deltas
from pushbench.analysis.reposcan import plot_scaling, scaling_table
from pushbench.analysis.takeaways import delta_line, target_line
from pushbench.analysis.figures import label_models, save_table, show_figure, show_table, style

style()
episodes = load_results(results, experiment)
controllers = [c for c in ["standard", "gated", "stateqgp"] if c in set(episodes.controller)]
note = label_models(list(episodes.model.unique()))
print(f"{len(episodes)} episodes of {experiment}; controllers {', '.join(controllers)}; {note}")

# %% [markdown]
# ## Compute
# Success by N with task-bootstrap SDs, and paired deltas over standard by N and over all 36 tasks.

# %%
others = [c for c in controllers if c != "standard"]
scaling = scaling_table(episodes, n_resamples, seed)
deltas = paired_deltas(episodes, "standard", others, n_resamples, seed)
overall = paired_deltas(episodes, "standard", others, n_resamples, seed, by_target=False)

# %% [markdown]
# ## Tables
# Paired success deltas over standard on all 36 tasks (the by-N deltas and success rates are
# written beside them in `paper_figures/`). Look at whether an interval excludes 0 and how the
# gain shrinks from the weakest profile to the strongest; `sim/perfect` never fails, so its
# deltas are 0 by construction.

# %%
save_table(scaling, Path(figures), "reposcan_target_scaling", f"Success by target N ({note}).")
save_table(deltas, Path(figures), "reposcan_paired_deltas_by_target",
           f"Paired success deltas over standard by N, 95% task-bootstrap intervals ({note}).")
save_table(overall, Path(figures), "reposcan_paired_deltas",
           f"Paired success deltas over standard, all 36 tasks, 95% task-bootstrap intervals ({note}).")
print(delta_line(overall, "stateqgp − standard"))
show_table(overall)

# %% [markdown]
# ## Figure 3
# One column per model, weakest first. Top: success by N (± task-bootstrap SD); look for the
# standard (grey) and gated (blue) lines falling at N = 50 and 100 while StateQGP (orange) stays
# higher. Bottom: the paired deltas by N with 95% intervals; a gain is supported where the
# interval stays above 0.

# %%
print(target_line(scaling, controllers))
show_figure(plot_scaling(scaling, deltas, controllers), Path(figures), "fig3_reposcan_target_scaling")
