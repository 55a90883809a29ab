"""Memory sensitivity and the window sweep on the long-horizon splits (issue 30 items 2-3).

A model's context window is part of its name (``sim/base@8k``; no suffix = the profile's own
window, ``sim/perfect``'s being unlimited). The *sensitivity table* asks whether a long split is
memory-bound: sim/perfect with an unlimited window must solve it (>= ``SOLVED``), the same reader
with the ``full`` transcript trimmed to ``PROOF_WINDOW`` must fail most of it (>= ``BOUND`` of its
tasks), and each memory's success at that window is its recovery. The *sweep* is success (and,
from the recall stage, model-free evidence recall) against the window for every memory.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd

from pushbench.analysis import stats
from pushbench.analysis.acg import METHODS
from pushbench.analysis.acg_eval import progress_share

PROOF_WINDOW = 8_000  # tokens: the window the sensitivity proof trims the perfect reader's transcript to
SOLVED = 0.95  # sim/perfect with an unlimited window must succeed on at least this share
BOUND = 0.50  # ... and with `full` at PROOF_WINDOW fail on at least this share (the split is memory-bound)
UNLIMITED = np.inf


def window_of(model: str) -> float:
    """The context window a model name ran with (tokens; ``inf`` for an unlimited one)."""
    from pushbench.policies.sim.profiles import PROFILES, split_window

    provider, _, name = model.partition("/")
    if provider != "sim":
        return np.nan
    profile, window = split_window(name)
    window = window if window is not None else PROFILES[profile].window
    return UNLIMITED if window >= 10**9 else float(window)


def profile_of(model: str) -> str:
    return model.partition("@")[0]


def window_label(window: float) -> str:
    if np.isinf(window):
        return "unlimited"
    return f"{int(window) // 1000}k" if window % 1000 == 0 else str(int(window))


def with_windows(episodes: pd.DataFrame) -> pd.DataFrame:
    """The long-split episodes with ``profile`` and ``window`` columns."""
    long = episodes[episodes.get("split", pd.Series("short", index=episodes.index)) == "long"]
    return long.assign(profile=long.model.map(profile_of), window=long.model.map(window_of)).reset_index(drop=True)


def _rate(group: pd.DataFrame, n_resamples: int, seed: int) -> tuple[float, float, int]:
    rate = stats.success_rate_with_bootstrap_sd(group, n_resamples=n_resamples, seed=seed)
    return rate.rate, rate.sd, rate.n_tasks


def sensitivity_table(episodes: pd.DataFrame, n_resamples: int, seed: int) -> pd.DataFrame:
    """Per long family: sim/perfect's success with an unlimited window (``full``), its success with
    each memory at ``PROOF_WINDOW``, and whether the split is memory-bound by the rule above."""
    data = with_windows(episodes)
    perfect = data[data.profile == "sim/perfect"]
    rows = []
    for family, group in perfect.groupby("family", sort=True):
        unlimited = group[np.isinf(group.window) & (group.memory == "full")]
        proof = group[group.window == PROOF_WINDOW]
        row: dict[str, object] = {"family": family}
        if not unlimited.empty:
            row["unlimited_full"], _, row["tasks"] = _rate(unlimited, n_resamples, seed)
        for memory in [m for m in METHODS if m in set(proof.memory)]:
            row[f"{window_label(PROOF_WINDOW)}_{memory}"] = _rate(proof[proof.memory == memory], n_resamples, seed)[0]
        full = row.get(f"{window_label(PROOF_WINDOW)}_full")
        row["memory_bound"] = bool("unlimited_full" in row and full is not None
                                   and cast(float, row["unlimited_full"]) >= SOLVED and 1 - cast(float, full) >= BOUND)
        rows.append(row)
    return pd.DataFrame(rows)


def sweep_table(episodes: pd.DataFrame, n_resamples: int, seed: int) -> pd.DataFrame:
    """Success (± task-bootstrap SD) per family, profile, memory and window (long splits)."""
    data = with_windows(episodes)
    rows = []
    for (family, profile, memory, window), group in data.groupby(["family", "profile", "memory", "window"], sort=True):
        success, sd, tasks = _rate(group, n_resamples, seed)
        rows.append({"family": family, "profile": profile, "memory": memory, "window": window,
                     "success": success, "success_sd": sd, "progress": _progress(group), "tasks": tasks})
    table = pd.DataFrame(rows, columns=["family", "profile", "memory", "window", "success", "success_sd", "progress",
                                        "tasks"])
    order = {m: i for i, m in enumerate(METHODS)}
    return table.sort_values(["family", "profile", "window", "memory"], key=lambda s: s.map(order)
                             if s.name == "memory" else s, kind="stable").reset_index(drop=True)


def _progress(group: pd.DataFrame) -> float:
    """The task mean of each episode's progress (``acg_eval.progress_share``: a backlog's issues
    accepted, a cart's requirements met, a question's parts answered right), graded where success
    is at the floor."""
    return float(progress_share(group).groupby(group.task_id).mean().mean())


def pivot_sweep(table: pd.DataFrame, profile: str, value: str = "success") -> pd.DataFrame:
    """One row per family and memory, one column per window (a reader compares across a row)."""
    part = table[table.profile == profile]
    if part.empty:
        return pd.DataFrame()
    wide = part.pivot_table(index=["family", "memory"], columns="window", values=value, sort=True)
    wide.columns = [window_label(w) for w in wide.columns]
    order = {m: i for i, m in enumerate(METHODS)}
    wide = wide.reset_index()
    return wide.sort_values(["family", "memory"], key=lambda s: s.map(order) if s.name == "memory" else s,
                            kind="stable").reset_index(drop=True)


def recall_sweep(recall: pd.DataFrame, runs: list[str] | None = None) -> pd.DataFrame:
    """Model-free evidence recall per family, memory and view budget (= window) over the sweep runs
    (``runs``; by default every run of ``recall``, e.g. the long split's rows of ``load_recall``)."""
    part = recall if runs is None else recall[recall.run.isin(runs)]
    if part.empty:
        return pd.DataFrame(columns=["family", "memory", "window", "needed", "recalled", "evidence_recall"])
    totals = part.groupby(["family", "memory", "budget"], sort=True)[["needed", "recalled"]].sum().reset_index()
    totals["evidence_recall"] = totals.recalled / totals.needed.where(totals.needed > 0)
    return totals.rename(columns={"budget": "window"})


def memory_triggers(windows: list[int]) -> pd.DataFrame:
    """When each memory starts dropping or condensing history, in tokens, at each window (from the
    memories' own constants, so the table follows the code)."""
    from pushbench.memory import full, langgraph_store, memgpt
    from pushbench.memory.acg import builder
    from pushbench.memory.summary import SummarySettings

    summary = SummarySettings.from_params()
    rows = []
    for window in windows:
        rows += [
            {"memory": "full", "window": window, "trigger": window,
             "rule": f"trims the oldest turns when the transcript passes the window, down to {1 - full.TRIM_SLACK:.0%} of it"},
            {"memory": "summary", "window": window, "trigger": min(summary.trigger_tokens, window),
             "rule": f"condenses when the turns since the last summary pass {summary.trigger_tokens:,} tokens "
                     f"(or the room the window leaves), keeping the newest {summary.keep_fraction:.0%}"},
            {"memory": "memgpt", "window": window, "trigger": int(memgpt.WARNING_FRACTION * window),
             "rule": f"warns at {memgpt.WARNING_FRACTION:.0%} of the window, evicts ~30% with a summary at 100%"},
            {"memory": "langgraph-store", "window": window, "trigger": int(langgraph_store.RECENT_FRACTION * window),
             "rule": f"keeps the recent turns in {langgraph_store.RECENT_FRACTION:.0%} of the window and retrieved "
                     f"items in {langgraph_store.MEMORY_FRACTION:.0%}"},
            {"memory": "acg", "window": window, "trigger": min(builder.VIEW_CAP, int(builder.VIEW_SHARE * window)),
             "rule": f"a decision view of at most {builder.VIEW_CAP:,} tokens (or {builder.VIEW_SHARE:.0%} of the "
                     "window), the recent turns in the rest"},
        ]
    return pd.DataFrame(rows)


UNLIMITED_AT = 256_000.0  # where the sweep figure draws an unlimited window (right of 128k)
MARKERS = "osD^v"
SWEEP_PANELS = (("sim/perfect", "success"), ("sim/base", "success"), ("sim/base", "progress"))


def plot_sweep(sweep: pd.DataFrame, recall: pd.DataFrame, panels: tuple[tuple[str, str], ...] = SWEEP_PANELS):
    """One row per (profile, measure) of ``panels`` and a last row of model-free evidence recall,
    against the window; one column per long family, one line per memory; log x axis (4k ... 128k)."""
    import matplotlib.pyplot as plt

    from pushbench.analysis.acg import METHOD_COLORS

    finite = sweep.assign(window=sweep.window.replace(np.inf, UNLIMITED_AT))  # "unlimited" drawn at the right end
    rows_shown = [(finite[finite.profile == profile], value, f"{value} ({profile})") for profile, value in panels]
    rows_shown.append((recall, "evidence_recall", "evidence recall (no model)"))
    families = sorted(set(finite.family) | set(recall.family))
    fig, axes = plt.subplots(len(rows_shown), max(1, len(families)), figsize=(3.4 * max(1, len(families)),
                             2.3 * len(rows_shown)), sharey=True, squeeze=False)
    for j, family in enumerate(families):
        for row, (table, value, label) in enumerate(rows_shown):
            ax = axes[row][j]
            shown = table[table.family == family]
            for k, memory in enumerate([m for m in METHODS if m in set(shown.memory)]):
                line = shown[shown.memory == memory].sort_values("window")
                nudge = 1.04 ** (k - 2)  # memories side by side where their values coincide
                ax.plot(line.window * nudge, line[value], MARKERS[k % len(MARKERS)] + "-", ms=3.5, lw=1,
                        color=METHOD_COLORS.get(memory), label=memory, alpha=0.85)
            if shown.empty:
                ax.text(0.5, 0.5, "not run", transform=ax.transAxes, ha="center", va="center", fontsize=7)
            ax.set_xscale("log")
            windows = sorted(set(shown.window))
            ax.set_xticks(windows, ["unl." if w == UNLIMITED_AT else window_label(w) for w in windows], fontsize=7)
            ax.minorticks_off()
            ax.set_ylim(0, 1.05)
            ax.set_title(f"{family} (long)" if row == 0 else "", fontsize=8)
            ax.set_ylabel(label if j == 0 else "", fontsize=8)
            ax.set_xlabel("context window (tokens)" if row == len(rows_shown) - 1 else "", fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        axes[0][-1].legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.suptitle("The window sweep on the long splits (SimLM)", fontsize=9)
    fig.tight_layout()
    return fig


def pivot_triggers(triggers: pd.DataFrame) -> pd.DataFrame:
    """Memories as rows, windows as columns, the trigger in tokens in each cell."""
    wide = triggers.pivot_table(index="memory", columns="window", values="trigger", sort=False)
    wide.columns = [window_label(c) for c in wide.columns]
    order = {m: i for i, m in enumerate(METHODS)}
    return wide.reset_index().sort_values("memory", key=lambda s: s.map(order)).reset_index(drop=True)


def pivot_recall(table: pd.DataFrame) -> pd.DataFrame:
    """Evidence recall with family and memory as rows and the view budget (window) as columns."""
    if table.empty:
        return pd.DataFrame(columns=["family", "memory"])
    return pivot_sweep(table.assign(profile="-", success=table.evidence_recall), "-")


def sensitivity_takeaway(table: pd.DataFrame) -> str:
    """One line per family, computed from the sensitivity table."""
    label = window_label(PROOF_WINDOW)
    lines = []
    for row in table.to_dict("records"):
        memories = {k.removeprefix(f"{label}_"): v for k, v in row.items() if k.startswith(f"{label}_")}
        best = max((m for m in memories if m != "full"), key=lambda m: memories[m], default=None)
        verdict = "memory-bound" if row["memory_bound"] else "NOT memory-bound by the rule"
        lines.append(f"{row['family']}: sim/perfect solves {row.get('unlimited_full', float('nan')):.0%} with an "
                     f"unlimited window and {memories.get('full', float('nan')):.0%} with full at {label} ({verdict})"
                     + (f"; the best memory at {label} is {best} with {memories[best]:.0%}" if best else ""))
    return "\n".join(lines) or "no long-split sim/perfect episodes"


def sweep_takeaway(table: pd.DataFrame, profile: str, value: str = "success") -> str:
    """Per family: the memory with the highest mean ``value`` over the swept windows, and the range."""
    part = table[(table.profile == profile) & np.isfinite(table.window)]
    lines = []
    for family, group in part.groupby("family", sort=True):
        means = group.groupby("memory")[value].mean().sort_values(ascending=False)
        lines.append(f"{family} ({profile}): highest mean {value} over the windows: {means.index[0]} "
                     f"({means.iloc[0]:.2f}); lowest: {means.index[-1]} ({means.iloc[-1]:.2f}); "
                     f"{value} ranges {group[value].min():.2f}-{group[value].max():.2f}")
    return "\n".join(lines) or f"no {profile} window-sweep episodes"
