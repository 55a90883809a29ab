"""Black-box agents at N = 50/100, default vs checklist prompt (paper Fig. 5, Table 7).

Rows of a declared agent product (Claude Code, Codex CLI, opencode, Gemini CLI, ...) with a
``sim/`` model are real agent products driven by SimLM (``make agents-grid``); their tables carry
a ``kind`` column saying so.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pushbench.analysis.flags import from_rates
from pushbench.analysis.figures import label_models, model_order
from pushbench.harness.grid import checklist_deltas
from pushbench.harness.launcher import STANDIN_PREFIX
from pushbench.harness.declaration import builtin


PRODUCT_KIND = "real agent product driven by SimLM"
STANDIN_KIND = "stand-in (MCP client driven by SimLM)"


def agent_kind(agent: str, model: str) -> str:
    if agent in builtin() and str(model).startswith("sim/"):
        return PRODUCT_KIND
    if agent.startswith(STANDIN_PREFIX):
        return STANDIN_KIND
    return "external agent"


def with_kind(table: pd.DataFrame) -> pd.DataFrame:
    """A ``kind`` column after ``agent`` when real agent products are among the rows (tables of
    stand-in rows alone stay as they were)."""
    if table.empty or not table.agent.isin(list(builtin())).any():
        return table
    kinds = [agent_kind(a, m) for a, m in zip(table.agent, table.model)]
    return table.assign(kind=kinds)[["agent", "kind", *[c for c in table.columns if c != "agent"]]]


def success_counts(episodes: pd.DataFrame) -> pd.DataFrame:
    table = episodes.groupby(["agent", "model", "target", "controller"], sort=True).agg(
        successes=("success", "sum"), tasks=("success", "size"), valid_count=("valid_count", "mean"),
        duplicate_rate=("duplicate_submit_rate", "mean"), steps=("steps", "mean")).reset_index()
    table = table.rename(columns={"controller": "prompt"})
    by = ["agent", "model", "prompt"]  # an agent and prompt over its targets N
    flags = from_rates(table.assign(rate=table.successes / table.tasks), by, "rate")
    return with_kind(table.merge(flags, on=by, how="left"))


def deltas(episodes: pd.DataFrame, n_resamples: int, seed: int) -> pd.DataFrame:
    return with_kind(checklist_deltas(episodes, n_resamples=n_resamples, seed=seed))


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


def _driver(table: pd.DataFrame) -> str:
    return "SimLM-driven agents: " if all(str(m).startswith("sim/") for m in table.model) else ""


def counts_line(counts: pd.DataFrame, prompt: str = "default") -> str:
    """Per agent, its successes at the table's smallest and largest target N under ``prompt``."""
    rows = counts[counts.prompt == prompt] if not counts.empty else counts
    if rows.empty:
        return f"no {prompt}-prompt rows"
    low, high = int(counts.target.min()), int(counts.target.max())
    parts = []
    for agent in agent_order(rows):
        own = rows[rows.agent == agent].set_index("target")
        if low in own.index and high in own.index:
            parts.append(f"{agent} {own.successes[low]}/{own.tasks[low]} → {own.successes[high]}/{own.tasks[high]}")
    if not parts:
        return f"no agent ran both N = {low} and N = {high} with the {prompt} prompt"
    return f"{_driver(rows)}{prompt} prompt, successes at N = {low} → N = {high}: {'; '.join(parts)}"


def checklist_line(table7: pd.DataFrame) -> str:
    """How many agent × N rows have a checklist − default interval excluding 0, and the deltas' range."""
    if table7.empty:
        return "no checklist − default pairs"
    excludes = int(((table7.ci_low > 0) | (table7.ci_high < 0)).sum())
    return (f"{_driver(table7)}checklist − default paired 95% interval excludes 0 in {excludes} of {len(table7)} "
            f"agent × N rows; deltas from {table7.delta.min():+.3f} to {table7.delta.max():+.3f}")
