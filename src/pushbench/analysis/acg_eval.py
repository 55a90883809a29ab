"""The ACG paper's evaluation (ACG seed §4.2-4.6, App. B.3) on its three benchmarks' analogues:
planning (DeepPlanning), corpus (BrowseComp-Plus) and sweissues (SWE-bench Lite).

A *method* is a memory under the standard controller on the native backend (``analysis.acg``).
Every comparison within a family and model uses the same tasks (App. B.3): ``matched`` keeps the
(task, seed) pairs that every method of that setting ran, so a grid with a task ``limit`` and one
without still compare like with like. Tables 2 and 3 are ``analysis.diagnostics``'s.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pushbench.analysis import stats
from pushbench.analysis.acg import METHODS, by_method
from pushbench.analysis.flags import flag_of, with_flags
from pushbench.analysis.figures import model_order

FAMILIES = ["planning", "corpus", "sweissues"]  # the paper's DeepPlanning, BrowseComp-Plus, SWE-bench Lite
SETTING = ["family", "model"]
GROUP = [*SETTING, "memory"]
# each family's task structure (Fig. 2): the scored rows' columns (the families' episode_metrics)
STRUCTURE = {"planning": ["planning_kind", "level"], "corpus": ["n_clues"], "sweissues": ["n_hunks"]}
# each family's graded measure where success is all or nothing (a long task's): the share of the
# requirements that hold (planning's cart), of the parts answered right (corpus); else items accepted
PROGRESS = {"planning": "requirement_pass_rate", "corpus": "parts_correct"}
Z95 = 1.959963984540054
MIN_SEGMENT_TASKS = 30  # Fig. 3 keeps a length segment only if it holds this many tasks (App. B.3)


def eval_rows(episodes: pd.DataFrame, split: str = "short") -> pd.DataFrame:
    """The methods' episodes on the three families' ``split`` (short, or the long-horizon tasks),
    matched within each family and model. Window-sweep models (``sim/base@8k``) are left out: each
    model runs with its own window here."""
    splits = episodes["split"] if "split" in episodes else pd.Series("short", index=episodes.index)
    keep = (episodes.controller == "standard") & (episodes.backend == "native") & episodes.memory.isin(METHODS)
    keep &= (splits.fillna("short") == split) & ~episodes.model.astype(str).str.contains("@", regex=False)
    return matched(episodes[keep & episodes.family.isin(FAMILIES)].reset_index(drop=True))


def matched(episodes: pd.DataFrame) -> pd.DataFrame:
    """Only the (task, seed) pairs that every method of a family and model ran."""
    if episodes.empty:
        return episodes
    parts = []
    for _, group in episodes.groupby(SETTING, sort=True):
        pairs = group.groupby(["task_id", "seed"]).memory.nunique()
        full = pairs[pairs == group.memory.nunique()].index
        parts.append(group[pd.MultiIndex.from_frame(group[["task_id", "seed"]]).isin(full)])
    return pd.concat(parts).drop_duplicates(["family", "model", "memory", "task_id", "seed"]).reset_index(drop=True)


def ordered(table: pd.DataFrame, extra: list[str] | None = None) -> pd.DataFrame:
    """Rows by family (paper order), model (weakest first), method (``full`` first, ``acg`` last)."""
    if table.empty:
        return table
    models = {m: i for i, m in enumerate(model_order(list(table.model)))} if "model" in table else {}
    keys = {"family": lambda s: s.map(FAMILIES.index), "model": lambda s: s.map(models),
            "memory": lambda s: s.map(METHODS.index)}
    by = [c for c in keys if c in table] + (extra or [])
    return table.sort_values(by, key=lambda s: keys[s.name](s) if s.name in keys else s,
                             kind="stable").reset_index(drop=True)


def _rate(group: pd.DataFrame, n_resamples: int, seed: int) -> dict[str, float]:
    rate = stats.success_rate_with_bootstrap_sd(group, n_resamples=n_resamples, seed=seed)
    return {"success": rate.rate, "success_sd": rate.sd, "tasks": rate.n_tasks, "episodes": rate.n_episodes}


def success_table(episodes: pd.DataFrame, n_resamples: int, seed: int) -> pd.DataFrame:
    """Table 1: success (± task-bootstrap SD) per family, model and method, and the method's rank
    within its setting (1 = highest success; ties share the better rank)."""
    rows = [{**dict(zip(GROUP, key)), **_rate(group, n_resamples, seed)}
            for key, group in episodes.groupby(GROUP, sort=True)]
    table = pd.DataFrame(rows, columns=[*GROUP, "success", "success_sd", "tasks", "episodes"])
    if table.empty:
        return table.assign(rank=pd.Series(dtype=int), flag=pd.Series(dtype=str))
    table["rank"] = table.groupby(SETTING).success.rank(method="min", ascending=False).astype(int)
    return ordered(with_flags(table, episodes, GROUP))


def shared_families(table: pd.DataFrame) -> list[str]:
    """The families in which every method of the table ran, for every model."""
    methods = set(table.memory)
    ran = table.groupby(["family", "model"]).memory.agg(set)
    return [f for f in FAMILIES if f in set(table.family) and all(ran[f].apply(lambda m: m == methods))]


def average_table(table: pd.DataFrame, families: list[str] | None = None) -> pd.DataFrame:
    """The equal-weight average of success over ``families`` (default: every family of the model)
    for each method that ran all of them (their task sets are independent, so the SD is the root
    of the summed variances over their count), the settings it is first in, and its rank by it."""
    rows = []
    if families is not None:
        table = table[table.family.isin(families)]
    for model, part in table.groupby("model", sort=True):
        methods = part.groupby("memory").family.nunique()
        families_run = [f for f in FAMILIES if f in set(part.family)]
        for memory in sorted(methods[methods == len(families_run)].index):
            own = part[part.memory == memory]
            rows.append({"model": model, "memory": memory, "families": "+".join(families_run),
                         "average_success": own.success.mean(),
                         "average_sd": float(np.sqrt((own.success_sd ** 2).sum())) / len(own),
                         "first_in": int((own["rank"] == 1).sum())})
    out = pd.DataFrame(rows, columns=["model", "memory", "families", "average_success", "average_sd", "first_in"])
    if out.empty:
        return out.assign(rank=pd.Series(dtype=int))
    out["rank"] = out.groupby("model").average_success.rank(method="min", ascending=False).astype(int)
    return ordered(out)


def structure_label(row: pd.Series) -> str:
    """A task's structural group, as Fig. 2's axis shows it."""
    if row.family == "planning":
        return f"{row.planning_kind} L{int(row.level)}"
    if row.family == "corpus":
        return f"{int(row.n_clues)} clues"
    if pd.notna(row.get("n_issues")):  # a long-horizon backlog: its issue count
        return f"{int(row.n_issues)} issues"
    return f"{int(row.n_hunks)} hunk" + ("s" if int(row.n_hunks) != 1 else "")


def _percentile_interval(group: pd.DataFrame, n_resamples: int, seed: int) -> tuple[float, float]:
    """The 95% task-bootstrap percentile interval of the success rate."""
    means = stats.per_task_means(group).to_numpy()
    if np.ptp(means) == 0.0:
        return float(means[0]), float(means[0])
    boot = stats.bootstrap_counts(len(means), n_resamples, np.random.default_rng(seed)) @ means / len(means)
    low, high = np.quantile(boot, [0.025, 0.975])
    return float(low), float(high)


def structure_table(episodes: pd.DataFrame, n_resamples: int, seed: int) -> pd.DataFrame:
    """Fig. 2: success per family, model, method and structural group, with the 95% interval."""
    columns = [*GROUP, "structure", "success", "success_sd", "ci_low", "ci_high", "tasks", "episodes"]
    rows = []
    for family, part in episodes.groupby("family", sort=True):
        missing = [c for c in STRUCTURE.get(family, []) if c not in part or part[c].isna().any()]
        if family not in STRUCTURE or missing:
            raise ValueError(f"{family} rows lack their structure columns {missing or '(no structure known)'}; "
                             "re-score the run (pushbench score RUN_DIR)")
        part = part.assign(structure=part.apply(structure_label, axis=1))
        for key, group in part.groupby([*GROUP, "structure"], sort=True):
            low, high = _percentile_interval(group, n_resamples, seed)
            rows.append({**dict(zip([*GROUP, "structure"], key)), **_rate(group, n_resamples, seed),
                         "ci_low": low, "ci_high": high})
    return cell_flags(ordered(pd.DataFrame(rows, columns=columns), ["structure"]))


def cell_flags(table: pd.DataFrame, rate: str = "success") -> pd.DataFrame:
    """Each cell's own ceiling/floor flag (``analysis.flags``): a per-structure or per-length cell
    where every episode succeeded (or none did) says so, since it cannot rank methods."""
    return table.assign(flag=[flag_of([r]) for r in table[rate]]) if len(table) else table.assign(flag=pd.Series(dtype=str))


LENGTH_COLUMNS = [*GROUP, *stats.SVL_COLUMNS]


def length_curves(episodes: pd.DataFrame, bin_width: float = 5, bandwidth: float = 7.0,
                  min_bins: int = 3, min_tasks: int = MIN_SEGMENT_TASKS) -> pd.DataFrame:
    """Fig. 3: smoothed success vs realised execution length (recorded external actions,
    ``steps``) per family, model and method (``stats.success_vs_length``: App. B.3's settings)."""
    frames = []
    for key, group in episodes.groupby(GROUP, sort=True):
        curve = stats.success_vs_length(group.steps.to_numpy(), group.success.astype(float).to_numpy(),
                                        bin_width, bandwidth, min_bins, min_tasks)
        if not curve.empty:
            frames.append(curve.assign(**dict(zip(GROUP, key))))
    if not frames:
        return pd.DataFrame(columns=LENGTH_COLUMNS)
    return ordered(pd.concat(frames, ignore_index=True)[LENGTH_COLUMNS], ["segment", "bin_center"])


def length_bands(episodes: pd.DataFrame, edges: tuple[int, ...] = (0, 20, 40, 60, 100)) -> pd.DataFrame:
    """Raw success within realised-length bands (the paper's "1-20 actions" vs "61-100 actions")."""
    labels = [f"{lo + 1}-{hi}" for lo, hi in zip(edges, edges[1:])]
    band = pd.cut(episodes.steps, bins=list(edges), labels=labels, include_lowest=True)
    out = (episodes.assign(band=band).groupby([*GROUP, "band"], sort=True, observed=True)
           .success.agg(["mean", "size"]).reset_index().rename(columns={"mean": "success", "size": "episodes"}))
    return cell_flags(ordered(out, ["band"]))


def cost_table(episodes: pd.DataFrame) -> pd.DataFrame:
    """§4.5: median LLM calls (auxiliary calls included) and median tokens (input + output) per
    family, model and method, beside success, and their ratios to ``full`` in the same setting."""
    frame = episodes.assign(tokens=episodes.input_tokens + episodes.output_tokens)
    table = (frame.groupby(GROUP, sort=True)
             .agg(success=("success", "mean"), median_llm_calls=("llm_calls", "median"),
                  median_steps=("steps", "median"), median_tokens=("tokens", "median"), episodes=("success", "size"))
             .reset_index())
    base = table[table.memory == "full"][[*SETTING, "median_llm_calls", "median_tokens"]]
    joined = table.merge(base, on=SETTING, how="left", suffixes=("", "_full"))
    table["calls_ratio"] = joined.median_llm_calls / joined.median_llm_calls_full
    table["tokens_ratio"] = joined.median_tokens / joined.median_tokens_full
    return ordered(table)


def progress_share(episodes: pd.DataFrame) -> pd.Series:
    """Each episode's progress in [0, 1]: its family's graded measure (``PROGRESS``), else the share
    of the target accepted (accepted items / target, at most 1)."""
    share = (episodes.valid_count / episodes.target.where(episodes.target > 0)).clip(upper=1.0)
    for family, column in PROGRESS.items():
        if column in episodes:  # a short task has no graded measure (corpus) or the same verdict (planning)
            graded = (episodes.family == family) & episodes[column].notna()
            share = share.where(~graded, episodes[column].astype(float))
    return share


def progress_table(episodes: pd.DataFrame) -> pd.DataFrame:
    """Per family and model, each method's progress as a column: the task mean of ``progress_share``,
    graded where success is at the floor."""
    per_task = episodes.assign(progress=progress_share(episodes)).groupby([*GROUP, "task_id"], sort=True).progress.mean()
    return ordered(by_method(per_task.groupby(GROUP).mean().reset_index(), "progress"))


def progress_takeaway(table: pd.DataFrame) -> str:
    """One line per family and model: the method with the most progress, and ``full``'s."""
    methods = [m for m in METHODS if m in table.columns]
    lines = []
    for row in table.to_dict("records"):
        best = max(methods, key=lambda m: -1.0 if pd.isna(row[m]) else row[m])
        lines.append(f"{row['family']} {row['model']}: most progress under {best} ({row[best]:.2f})"
                     + (f", full {row['full']:.2f}" if "full" in row and best != "full" else ""))
    return "\n".join(lines) or "no long-split episodes"


def seed_table(episodes: pd.DataFrame) -> pd.DataFrame:
    """pass^k for every k up to the seeds run, and the seed-to-seed spread of success (SD over
    seeds of each seed's success rate: the noise floor), where a setting ran >= 2 seeds."""
    rows = []
    for key, group in episodes.groupby(GROUP, sort=True):
        per_task = group.groupby("task_id").seed.nunique()
        k_max = int(per_task.min())
        if k_max < 2:
            continue
        by_seed = group.groupby("seed").success.mean()
        row = {**dict(zip(GROUP, key)), "seeds": k_max, "success": float(group.success.mean()),
               "seed_sd": float(by_seed.std(ddof=1)), "seed_range": float(by_seed.max() - by_seed.min())}
        clean = group.assign(success=group.success.astype(int))
        row.update({f"pass^{k}": stats.pass_hat_k(clean, k) for k in range(1, k_max + 1)})
        rows.append(row)
    return ordered(pd.DataFrame(rows) if rows else pd.DataFrame(columns=[*GROUP, "seeds", "success", "seed_sd",
                                                                          "seed_range"]))


def deltas_vs_full(episodes: pd.DataFrame, n_resamples: int, seed: int) -> pd.DataFrame:
    """Paired success deltas (method - ``full``) per setting, matched by task and seed, with the
    noise floor beside each: the larger of the two methods' seed SDs (NaN with one seed)."""
    spread = seed_table(episodes)
    sd = spread.set_index(GROUP).seed_sd if not spread.empty else pd.Series(dtype=float)
    rows = []
    for key, group in episodes.groupby(SETTING, sort=True):
        if "full" not in set(group.memory):
            continue
        for memory in [m for m in METHODS if m != "full" and m in set(group.memory)]:
            d = stats.paired_bootstrap_delta(group, "memory", "full", memory, n_resamples=n_resamples, seed=seed)
            floor = [sd.get((*key, m), np.nan) for m in ("full", memory)]
            rows.append({**dict(zip(SETTING, key)), "memory": memory, "delta": d.delta, "ci_low": d.ci_low,
                         "ci_high": d.ci_high, "pairs": d.n_pairs,
                         "noise_floor": np.nan if np.isnan(floor).any() else float(max(floor))})
    return ordered(pd.DataFrame(rows, columns=[*GROUP, "delta", "ci_low", "ci_high", "pairs", "noise_floor"]))


__all__ = ["FAMILIES", "MIN_SEGMENT_TASKS", "STRUCTURE", "average_table", "cost_table", "deltas_vs_full",
           "eval_rows", "length_bands", "length_curves", "matched", "progress_share", "progress_table", "progress_takeaway",
           "seed_table", "shared_families", "structure_table", "success_table"]
