# %% [markdown]
# # Black-box agents over MCP — N = 50 / 100, default vs checklist (paper Fig. 5, Table 7, App. D.2)
# **Model: SimLM.** The pipeline's agents are offline stand-ins (an MCP client driven by SimLM, one
# per profile). Rows of a declared product (`claude-code`, `codex`, `opencode`, `gemini-cli`, from
# `make agents-grid`, docs/blackbox.md) are the real agent products with SimLM as their model: the
# tables label them "real agent product driven by SimLM". The numbers below are SimLM's, not the paper's.
#
# **What is shown.** Each agent on RepoScan tasks at N = 50 and N = 100, through the MCP server's
# search / submit / status / final tools, with the default prompt and with an explicit checklist
# prompt: successes per condition, and checklist − default paired success deltas matched by task
# (Table 7).
#
# **The paper's claim (App. D.2, §9).** The agents solve most 50-artifact tasks (7 of 9) but only
# 3 of 9 at 100 artifacts in every agent-prompt condition, and the checklist changes duplicate and
# tool-use behaviour but gives a paired success delta of 0 for both agents and both targets.

# %% tags=["parameters"]
results = "data/results"
figures = "paper_figures"
n_resamples = 10000
seed = 0

# %% [markdown]
# ## Load

# %%
from pathlib import Path

from pushbench.analysis.aggregate import load_results
from pushbench.analysis.blackbox import checklist_line, counts_line, deltas, plot_counts, success_counts
from pushbench.analysis.figures import label_models, save_table, show_figure, show_table, style

style()
episodes = load_results(results, "blackbox")
note = label_models(list(episodes.model.unique()))
print(f"{len(episodes)} black-box episodes, agents {', '.join(sorted(set(episodes.agent)))}; {note}")

# %% [markdown]
# ## Compute

# %%
counts = success_counts(episodes)
table7 = deltas(episodes, n_resamples, seed)

# %% [markdown]
# ## Successes per agent, N and prompt
# Compare N = 50 with N = 100 for each agent, and `duplicate_rate` and `steps` between the two
# prompts (where the paper sees the checklist act).

# %%
save_table(counts, Path(figures), "blackbox_success", f"Black-box RepoScan successes per agent, N and prompt ({note}).")
print(counts_line(counts))
show_table(counts)

# %% [markdown]
# ## Table 7: checklist − default
# Paired success deltas with 95% task-bootstrap intervals; the paper's are all 0.

# %%
save_table(table7, Path(figures), "table7_checklist_deltas",
           f"Checklist minus default paired success deltas, 95% task-bootstrap intervals ({note}).")
print(checklist_line(table7))
show_table(table7)

# %% [markdown]
# ## Figure 5
# Successful tasks per agent (by the profile of its model, weakest first) at N = 50 and N = 100;
# plain bars are the default prompt, hatched bars the checklist.

# %%
show_figure(plot_counts(counts), Path(figures), "fig5_blackbox")
