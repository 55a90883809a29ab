# %% [markdown]
# # QGP-RepoScan — counterfactual forks of failed episodes (standard → StateQGP)
# **Model: SimLM**, the offline behavioural simulator, not a real LLM: the numbers below are
# SimLM's, not any paper's.
#
# **What is shown.** Every episode of the RepoScan main grid that failed under the `standard`
# controller is forked at 25%, 50% and 75% of its realised steps (`forks` stage, `pushbench fork`):
# the recorded actions up to that step are replayed on a fresh environment without calling the
# model (each observation checked against the recording), then StateQGP takes over with fresh
# state and the same model runs on to the end. The table answers *"had StateQGP taken over at this
# point, would the episode have succeeded?"*: per model and fork point, the failed episodes forked
# and the share that succeed after the fork, with a 95% task-cluster bootstrap interval. Beside it,
# the step-0 counterpart: how often StateQGP run from the start succeeded on the same task and
# seed in the same grid.
#
# **Reading it.** A share that falls with the fork point means the failure was built up over the
# episode (spent budget, a context already full of duplicates); a flat share means StateQGP's
# state rescues it whenever it arrives. SimLM's mind starts at the fork, so a fork continues
# plausibly from the recorded prefix, not as the recorded episode would have.

# %% tags=["parameters"]
results = "data/results"
figures = "paper_figures"
forks = "data/runs/forks"
experiment = "reposcan-main"
from_controller = "standard"
controller = "stateqgp"
n_resamples = 10000
seed = 0

# %% [markdown]
# ## Load
# The scored forks, and the main grid they were forked from.

# %%
from pathlib import Path

from pushbench.analysis.aggregate import load_results
from pushbench.analysis.forks import fork_table, fresh_line, fresh_reference, plot_rescue, rescue_line, trend_line
from pushbench.analysis.figures import label_models, save_table, show_figure, show_table, style
from pushbench.scoring import load_episodes

style()
forked = load_episodes(forks)
grid = load_results(results, experiment)
note = label_models(list(grid.model.unique()) + (list(forked.model.unique()) if len(forked) else []))
parents = forked.parent.nunique() if len(forked) else 0
print(f"{len(forked)} forks of {parents} failed {from_controller} episodes of {experiment}; {note}")

# %% [markdown]
# ## Compute

# %%
table = fork_table(forked, n_resamples, seed)
fresh = fresh_reference(grid, from_controller, controller, n_resamples, seed)

# %% [markdown]
# ## Tables
# `forks`: failed episodes forked at that point; `rescued` / `rescue_rate`: those succeeding after
# the fork, with the 95% interval `ci_low`–`ci_high`; `mean_valid`: the verified count the forks
# reached.

# %%
save_table(table, Path(figures), "forks_rescue",
           f"Failed {from_controller} episodes of the RepoScan main grid forked to {controller}: share "
           f"succeeding after the fork, 95% task-bootstrap intervals ({note}).")
print(rescue_line(table))
show_table(table[["model", "fork_at", "forks", "rescued", "rescue_rate", "ci_low", "ci_high", "mean_valid"]])

# %%
save_table(fresh, Path(figures), "forks_fresh",
           f"The same failed {from_controller} episodes: {controller} from step 0 on the same task and seed "
           f"({note}).")
print(fresh_line(fresh))
show_table(fresh)

# %% [markdown]
# ## Figure
# The share succeeding after the fork against the fork point, one line per model, with its 95%
# interval.

# %%
print(trend_line(table))
show_figure(plot_rescue(table, f"{from_controller} → {controller} forks ({note})"), Path(figures), "forks_rescue")
