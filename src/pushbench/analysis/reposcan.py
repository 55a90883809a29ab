"""RepoScan: main table, target scaling with paired intervals (Fig. 3), stateful ablation (Fig. 4)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pushbench.analysis import stats
from pushbench.analysis.flags import from_rates, with_flags
from pushbench.analysis.figures import CONTROLLER_COLORS, label_models, model_order

CONDITION = ["model", "backend", "memory", "controller"]


def main_table(episodes: pd.DataFrame, n_resamples: int, seed: int) -> pd.DataFrame:
    """Success (with task-bootstrap SD), valid count, duplicate rate, valid/step per condition."""
    rows = []
    for key, group in episodes.groupby(CONDITION, sort=True):
        rate = stats.success_rate_with_bootstrap_sd(group, n_resamples=n_resamples, seed=seed)
        rows.append({**dict(zip(CONDITION, key)), "success": rate.rate, "success_sd": rate.sd,
                     "valid_count": group.valid_count.mean(), "duplicate_rate": group.duplicate_submit_rate.mean(),
                     "valid_per_step": group.valid_per_step.mean(), "false_completion": group.false_completion.mean(),
                     "premature_stop": group.premature_stop.mean(),
                     "reported_count_error": group.reported_count_error.dropna().mean()
                     if group.reported_count_error.notna().any() else np.nan,
                     "episodes": len(group)})
    return with_flags(pd.DataFrame(rows), episodes, CONDITION)


def cost_table(episodes: pd.DataFrame) -> pd.DataFrame:
    """LLM calls and tokens per episode and per condition (what a real model would be billed for)."""
    rows = []
    for key, group in episodes.groupby(CONDITION, sort=True):
        rows.append({**dict(zip(CONDITION, key)), "calls_per_episode": group.llm_calls.mean(),
                     "input_tokens_per_episode": group.input_tokens.mean(),
                     "output_tokens_per_episode": group.output_tokens.mean(), "calls": int(group.llm_calls.sum()),
                     "input_tokens_millions": group.input_tokens.sum() / 1e6,
                     "output_tokens_millions": group.output_tokens.sum() / 1e6, "episodes": len(group)})
    return pd.DataFrame(rows)


def scaling_table(episodes: pd.DataFrame, n_resamples: int, seed: int) -> pd.DataFrame:
    scaling = stats.target_scaling(episodes, by=("model", "controller"), n_resamples=n_resamples, seed=seed)
    return scaling.merge(from_rates(scaling, ["model", "controller"]), on=["model", "controller"], how="left")


def plot_scaling(scaling: pd.DataFrame, deltas: pd.DataFrame, controllers: list[str]) -> plt.Figure:
    """One column per model, weakest profile first: success by N (top), paired deltas (bottom)."""
    models = model_order(list(scaling.model))
    fig, axes = plt.subplots(2, len(models), figsize=(3.2 * len(models), 5.2), sharex=True, squeeze=False)
    for col, model in enumerate(models):
        ax = axes[0, col]
        for controller in controllers:
            part = scaling[(scaling.model == model) & (scaling.controller == controller)].sort_values("target")
            if part.empty:
                continue
            ax.errorbar(part.target, part.success_rate, yerr=part.bootstrap_sd, marker="o", capsize=2,
                        label=controller, color=CONTROLLER_COLORS.get(controller))
        ax.set_title(model)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xscale("log")
        ax.set_xticks([10, 25, 50, 100], ["10", "25", "50", "100"])
        ax = axes[1, col]
        for comparison, part in deltas[deltas.model == model].groupby("comparison"):
            other = comparison.split(" − ")[0]
            ax.errorbar(part.target, part.delta, yerr=[part.delta - part.ci_low, part.ci_high - part.delta],
                        marker="s", capsize=2, label=comparison, color=CONTROLLER_COLORS.get(other))
        ax.axhline(0, color="black", lw=0.6)
        ax.set_xlabel("target N")
    axes[0, 0].set_ylabel("success rate (± task-bootstrap SD)")
    axes[1, 0].set_ylabel("paired Δ success (95% CI)")
    axes[0, -1].legend(fontsize=7)
    axes[1, -1].legend(fontsize=7)
    fig.suptitle(f"RepoScan target scaling — {label_models(list(scaling.model.unique()))}", fontsize=9)
    fig.tight_layout()
    return fig


def plot_ablation(table: pd.DataFrame, deltas: pd.DataFrame, order: list[str]) -> plt.Figure:
    """Success per controller (bars) and paired deltas (right), one colour per model, weakest profile first."""
    models = model_order(list(table.model))
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    width = 0.8 / max(1, len(models))
    for i, model in enumerate(models):
        part = table[table.model == model].set_index("controller").reindex(order)
        x = np.arange(len(order)) + i * width
        axes[0].bar(x, part.success, width, yerr=part.success_sd, capsize=2, label=model)
    axes[0].set_xticks(np.arange(len(order)) + width * (len(models) - 1) / 2, order, rotation=25, ha="right")
    axes[0].set_ylabel("success rate (± task-bootstrap SD)")
    axes[0].set_ylim(0, 1.05)
    axes[0].legend(fontsize=7)
    for i, model in enumerate(models):
        part = deltas[deltas.model == model]
        y = np.arange(len(part)) + i * 0.25
        axes[1].errorbar(part.delta, y, xerr=[part.delta - part.ci_low, part.ci_high - part.delta], fmt="o",
                         capsize=2, label=model)
        if i == 0:
            axes[1].set_yticks(y, part.comparison, fontsize=7)
    axes[1].axvline(0, color="black", lw=0.6)
    axes[1].set_xlabel("paired Δ success (95% CI)")
    fig.suptitle(f"StateQGP component ablation — {label_models(models)}", fontsize=9)
    fig.tight_layout()
    return fig


def condition_label(row: pd.Series) -> str:
    """A controller, or the standard controller with a memory other than the transcript."""
    return row.controller if row.memory == "full" else f"{row.controller} + {row.memory}"


MAIN_ORDER = ["standard", "gated", "stateqgp"]  # then the standard controller with each other memory
MEMORY_HATCH = {"memgpt": "//", "langgraph-store": ".."}  # a memory baseline: the standard controller's grey, hatched


def plot_main(table: pd.DataFrame) -> plt.Figure:
    """Success (± task-bootstrap SD) per model (groups) and condition (bars) of the main table."""
    table = table.assign(condition=table.apply(condition_label, axis=1))
    models = model_order(list(table.model))
    conditions = sorted(set(table.condition), key=lambda c: (MAIN_ORDER.index(c) if c in MAIN_ORDER else 9, c))
    fig, ax = plt.subplots(figsize=(7.2, 3.4))
    width = 0.8 / max(1, len(conditions))
    for i, condition in enumerate(conditions):
        rows = table[table.condition == condition].set_index("model").reindex(models)
        run = rows.success.notna().to_numpy()
        controller, _, memory = condition.partition(" + ")
        x = np.arange(len(models)) + i * width
        ax.bar(x[run], rows.success[run], width, yerr=rows.success_sd[run], capsize=2, label=condition,
               color=CONTROLLER_COLORS.get(controller, "#8c8c8c"), hatch=MEMORY_HATCH.get(memory),
               edgecolor="white", linewidth=0.5)
    ax.set_xticks(np.arange(len(models)) + width * (len(conditions) - 1) / 2, models, fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("success rate (± task-bootstrap SD)")
    ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.1), frameon=False)
    ax.set_title(f"RepoScan: success per controller and memory — {label_models(models)}", fontsize=9)
    fig.tight_layout()
    return fig


def main_takeaway(table: pd.DataFrame) -> str:
    """One line per model: StateQGP's success beside the standard controller's (transcript memory)."""
    own = table[table.memory == "full"].set_index(["model", "controller"]).success
    lines = [f"{model}: stateqgp {own[model, 'stateqgp']:.3f}, standard {own[model, 'standard']:.3f}"
             for model in model_order(list(table.model))
             if (model, "stateqgp") in own.index and (model, "standard") in own.index]
    return "\n".join(lines) or "no model ran both stateqgp and standard"
