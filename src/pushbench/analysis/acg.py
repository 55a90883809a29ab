"""ACG beside the memory baselines on the PushBench families (ACG seed §4.5): success, LLM calls
and tokens per method, and evidence recall beside success.

A *method* is the memory under the standard controller on the native backend, so every row
compares memories alone (``full`` is the plain transcript, trimmed to the model's window).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pushbench.analysis import stats
from pushbench.analysis.flags import with_flags
from pushbench.analysis.figures import label_models, model_order

METHODS = ["full", "summary", "memgpt", "langgraph-store", "acg"]  # the plain transcript first, ACG last
METHOD_COLORS = {"full": "#8c8c8c", "summary": "#937860", "memgpt": "#4c72b0", "langgraph-store": "#dd8452", "acg": "#55a868"}
FAMILY_ORDER = ["reposcan", "dataops", "swe"]
RECALL_FAMILIES = [*FAMILY_ORDER, "sweissues", "planning", "corpus"]  # the recall stage also replays 09's families
METHOD_COLUMNS = ["family", "model", "memory", "success", "success_sd", "median_llm_calls", "median_tokens",
                  "llm_calls", "tokens", "input_tokens", "output_tokens", "tokens_per_success", "false_completion",
                  "episodes"]


def method_rows(episodes: pd.DataFrame) -> pd.DataFrame:
    """Episodes of the memory comparison: standard controller, native backend, a known method."""
    keep = (episodes.controller == "standard") & (episodes.backend == "native") & episodes.memory.isin(METHODS)
    return episodes[keep & episodes.family.isin(FAMILY_ORDER)].reset_index(drop=True)


def method_table(episodes: pd.DataFrame, n_resamples: int, seed: int) -> pd.DataFrame:
    """Success (± task-bootstrap SD), LLM calls and tokens per family, model and method."""
    rows = []
    for (family, model, memory), group in method_rows(episodes).groupby(["family", "model", "memory"], sort=True):
        rate = stats.success_rate_with_bootstrap_sd(group, n_resamples=n_resamples, seed=seed)
        tokens = group.input_tokens + group.output_tokens
        rows.append({"family": family, "model": model, "memory": memory, "success": rate.rate,
                     "success_sd": rate.sd, "median_llm_calls": group.llm_calls.median(),
                     "median_tokens": tokens.median(), "llm_calls": group.llm_calls.mean(), "tokens": tokens.mean(),
                     "input_tokens": group.input_tokens.mean(), "output_tokens": group.output_tokens.mean(),
                     "tokens_per_success": tokens.sum() / max(1, int(group.success.sum())),
                     "false_completion": group.false_completion.mean(), "episodes": len(group)})
    table = pd.DataFrame(rows, columns=METHOD_COLUMNS)
    if table.empty:
        return table.assign(flag=pd.Series(dtype=str))
    return _ordered(with_flags(table, method_rows(episodes), ["family", "model", "memory"]))


def _ordered(table: pd.DataFrame) -> pd.DataFrame:
    models = {m: i for i, m in enumerate(model_order(list(table.model)))}
    return (table.assign(_f=table.family.map(FAMILY_ORDER.index), _m=table.model.map(models),
                         _k=table.memory.map(METHODS.index))
            .sort_values(["_f", "_m", "_k"]).drop(columns=["_f", "_m", "_k"]).reset_index(drop=True))


def load_recall(results: str, split: str | None = "short") -> pd.DataFrame:
    """The recall stage's rows (``data/results/recall.jsonl``): run, family, memory, action bucket,
    decisions, needed and recalled evidence units, share, view budget, split; only the ``split``'s
    runs (the short runs at the one recall budget, or the long runs of the window sweep; None: all)."""
    from pathlib import Path

    path = Path(results) / "recall.jsonl"
    frame = pd.read_json(path, lines=True) if path.is_file() and path.stat().st_size else pd.DataFrame(
        columns=["run", "family", "memory", "bucket", "first_action", "decisions", "needed", "recalled", "share",
                 "budget", "split"])
    if split is None:
        return frame
    splits = frame["split"] if "split" in frame else pd.Series("short", index=frame.index)
    return frame[splits.fillna("short") == split].reset_index(drop=True)


def recall_table(recall: pd.DataFrame) -> pd.DataFrame:
    """Evidence recall per family and memory over every replayed decision."""
    totals = recall.groupby(["family", "memory"], sort=True)[["decisions", "needed", "recalled"]].sum().reset_index()
    totals["evidence_recall"] = totals.recalled / totals.needed.where(totals.needed > 0)
    order = {f: i for i, f in enumerate(RECALL_FAMILIES)}
    memories = {m: i for i, m in enumerate(METHODS)}
    keyed = totals.assign(_f=totals.family.map(order).fillna(len(order)),
                          _m=totals.memory.map(memories).fillna(len(memories)))
    return (keyed.sort_values(["_f", "family", "_m", "memory"]).drop(columns=["_f", "_m"]).reset_index(drop=True))


def recall_curve(recall: pd.DataFrame) -> pd.DataFrame:
    """Recall by the decision's action bucket (history length), per family and memory."""
    curve = recall.groupby(["family", "memory", "first_action"], sort=True)[["needed", "recalled"]].sum().reset_index()
    curve["recall"] = curve.recalled / curve.needed.where(curve.needed > 0)
    return curve.rename(columns={"first_action": "history_events"})


def with_recall(table: pd.DataFrame, recall: pd.DataFrame) -> pd.DataFrame:
    """The method table with each (family, memory)'s evidence recall (model-free, from the replays)."""
    if recall.empty or table.empty:
        return table.assign(evidence_recall=np.nan)
    share = recall_table(recall)[["family", "memory", "evidence_recall"]]
    return table.merge(share, on=["family", "memory"], how="left")


def by_method(table: pd.DataFrame, value: str = "success") -> pd.DataFrame:
    """``value`` with the methods as columns (``full`` first, ``acg`` last), one row per family and
    model in the table's own row order: a comparison read across a row."""
    keys = list(dict.fromkeys(zip(table.family, table.model)))
    wide = table.set_index(["family", "model", "memory"])[value].unstack("memory")
    wide = wide.reindex(pd.MultiIndex.from_tuples(keys, names=["family", "model"]))
    wide = wide[[m for m in METHODS if m in wide.columns]].reset_index()
    wide.columns.name = None
    return wide


def best_method_line(table: pd.DataFrame, value: str = "success") -> str:
    """In how many family × model settings each method has the highest ``value`` (a tie counts for
    every method in it)."""
    if table.empty:
        return "no settings"
    top = table[value] == table.groupby(["family", "model"])[value].transform("max")
    counts = table[top].memory.value_counts()
    methods = [m for m in METHODS if m in set(table.memory)]
    settings = table.groupby(["family", "model"]).ngroups
    return (f"highest {value} in the {settings} family × model settings (ties count for each): "
            + ", ".join(f"{m} {int(counts.get(m, 0))}" for m in methods))


def plot_methods(table: pd.DataFrame) -> plt.Figure:
    """Success per family (panels) and model (groups) for each method (bars, ± SD)."""
    families = [f for f in FAMILY_ORDER if f in set(table.family)]
    fig, axes = plt.subplots(1, max(1, len(families)), figsize=(3.4 * max(1, len(families)), 3.2), sharey=True,
                             squeeze=False)
    if not families:
        _say(axes[0][0], "no episodes under the standard controller")
    for ax, family in zip(axes[0], families):
        part = table[table.family == family]
        models = model_order(list(part.model))
        width = 0.8 / len(METHODS)
        for i, memory in enumerate(METHODS):
            rows = part[part.memory == memory].set_index("model").reindex(models)
            run = rows.success.notna().to_numpy()
            x = np.arange(len(models)) + i * width
            ax.bar(x[run], rows.success[run], width, yerr=rows.success_sd[run], capsize=2,
                   color=METHOD_COLORS[memory], label=memory, edgecolor="white", linewidth=0.5)
        ax.set_xticks(np.arange(len(models)) + width * (len(METHODS) - 1) / 2, models, fontsize=8)
        ax.set_title(family, fontsize=9)
        ax.set_ylim(0, 1.05)
    axes[0][0].set_ylabel("success rate (± task-bootstrap SD)")
    _legend(axes)
    fig.suptitle(f"Memories under the standard controller — {label_models(list(table.model))}", fontsize=9)
    fig.tight_layout()
    return fig


def plot_recall_vs_length(curve: pd.DataFrame) -> plt.Figure:
    """Evidence recall (share of needed units in the view) vs history length, one line per memory;
    one panel per family, three to a row."""
    families = [f for f in RECALL_FAMILIES if f in set(curve.family)]
    cols = max(1, min(3, len(families)))
    rows_n = max(1, -(-len(families) // cols))
    fig, axes = plt.subplots(rows_n, cols, figsize=(3.4 * cols, 3.0 * rows_n), sharey=True, squeeze=False)
    for ax in axes.flat[max(1, len(families)):]:
        ax.set_visible(False)
    if not families:
        _say(axes[0][0], "no replayed decisions")
    for ax, family in zip(axes.flat, families):
        part = curve[curve.family == family]
        for memory in METHODS:
            rows = part[part.memory == memory].sort_values("history_events")
            if not rows.empty:
                ax.plot(rows.history_events, rows.recall, marker="o", ms=3, color=METHOD_COLORS[memory], label=memory)
        ax.set_title(family, fontsize=9)
        ax.set_xlabel("decision's action number (bucket start)")
        ax.set_xticks([1, 21, 41, 61, 101])  # the recall stage's buckets, the same on every panel
        ax.set_xlim(-4, 106)
        ax.set_ylim(0, 1.05)
    for row in axes:
        row[0].set_ylabel("evidence recall")
    _legend(axes)
    fig.suptitle("Evidence recall of each memory's view (no model: replayed traces)", fontsize=9)
    fig.tight_layout()
    return fig


def _say(ax: plt.Axes, text: str) -> None:
    """A panel with nothing to draw says why, instead of showing empty axes."""
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=8, color="#555555")


def _legend(axes: np.ndarray) -> None:
    """The methods' legend beside the last panel, when any method was drawn."""
    if any(ax.get_legend_handles_labels()[0] for ax in axes.flat):
        axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
