"""Black-box agents at N = 50/100, default vs checklist prompt (paper Fig. 5, Table 7)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pushbench.analysis.flags import from_rates
from pushbench.figures import label_models, model_order
from pushbench.harness.grid import checklist_deltas


def success_counts(episodes: pd.DataFrame) -> pd.DataFrame:
    table = episodes.groupby(["agent", "model", "target", "controller"], sort=True).agg(
        successes=("success", "sum"), tasks=("success", "size"), valid_count=("valid_count", "mean"),
        duplicate_rate=("duplicate_submit_rate", "mean"), steps=("steps", "mean")).reset_index()
    table = table.rename(columns={"controller": "prompt"})
    by = ["agent", "model", "prompt"]  # an agent and prompt over its targets N
    flags = from_rates(table.assign(rate=table.successes / table.tasks), by, "rate")
    return table.merge(flags, on=by, how="left")


def deltas(episodes: pd.DataFrame, n_resamples: int, seed: int) -> pd.DataFrame:
    return checklist_deltas(episodes, n_resamples=n_resamples, seed=seed)


def agent_order(counts: pd.DataFrame) -> list[str]:
    """Agents by the profile of the model driving them, weakest first (then by name)."""
    rank = {m: i for i, m in enumerate(model_order(list(counts.model)))}
    pairs = counts[["agent", "model"]].drop_duplicates()
    return sorted(set(pairs.agent), key=lambda a: (min(rank[m] for m in pairs.model[pairs.agent == a]), a))


def plot_counts(counts: pd.DataFrame) -> plt.Figure:
    agents = agent_order(counts)
    targets = sorted(counts.target.unique())
    fig, axes = plt.subplots(1, len(targets), figsize=(3.6 * len(targets), 3.2), sharey=True, squeeze=False)
    for ax, target in zip(axes[0], targets):
        for i, prompt in enumerate(["default", "checklist"]):
            part = counts[(counts.target == target) & (counts.prompt == prompt)].set_index("agent").reindex(agents)
            ax.bar(np.arange(len(agents)) + i * 0.4, part.successes.fillna(0), 0.4, label=prompt,
                   hatch="//" if prompt == "checklist" else None)
        ax.set_xticks(np.arange(len(agents)) + 0.2, agents, rotation=15, ha="right", fontsize=7)
        ax.set_title(f"N = {target}")
        ax.set_ylabel("successful tasks")
    axes[0, -1].legend(fontsize=7)
    fig.suptitle(f"Black-box RepoScan, default vs checklist — {label_models(list(counts.model.unique()))}",
                 fontsize=9)
    fig.tight_layout()
    return fig
