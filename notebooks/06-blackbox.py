# %% [markdown]
# # Black-box agents over MCP — N = 50 / 100, default vs checklist (paper Fig. 5, Table 7)
# The agents here are the offline stand-ins (an MCP client driven by **SimLM**), not Claude Code or
# Codex CLI; the same harness runs real agent CLIs (see README).

# %% tags=["parameters"]
results = "data/results"
figures = "paper_figures"
n_resamples = 10000
seed = 0

# %%
from pathlib import Path

from pushbench.aggregate import load_results
from pushbench.analysis.blackbox import deltas, plot_counts, success_counts
from pushbench.figures import label_models, save_figure, save_table, style

style()
episodes = load_results(results, "blackbox")
note = label_models(list(episodes.model.unique()))
counts = success_counts(episodes)
table7 = deltas(episodes, n_resamples, seed)
save_table(counts, Path(figures), "blackbox_success", f"Black-box RepoScan successes per agent, N and prompt ({note}).")
save_table(table7, Path(figures), "table7_checklist_deltas",
           f"Checklist minus default paired success deltas, 95% task-bootstrap intervals ({note}).")
save_figure(plot_counts(counts), Path(figures), "fig5_blackbox")
table7
