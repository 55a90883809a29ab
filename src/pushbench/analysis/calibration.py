"""Tables and figures of the calibrate stage (notebook 00-calibration): the fit against the published
points, and the calibrated recall of one fact by depth and context length (where it goes flat)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pushbench.analysis.figures import model_order

PANELS = ("10 docs", "20 docs", "30 docs", "length")


def load_points(folder: Path) -> pd.DataFrame:
    """Every published point beside the fitted curve and SimLM's probe (probe.json), one row each."""
    rows = json.loads((folder / "probe.json").read_text())["points"]
    table = pd.DataFrame(rows)
    table["published_model"] = table.pop("model")
    table["model"] = "sim/" + table.pop("profile")
    litm = table.source == "litm"
    table["panel"] = table.point.str.extract(r"^(\d+ docs)")[0].where(litm, "length")
    position = table.point.str.extract(r"position (\d+)$")[0]
    tokens = table.point.str.extract(r"^(\d+) tokens$")[0]
    table["x"] = position.where(litm, tokens).astype(int)
    return table


def fit_table(folder: Path) -> pd.DataFrame:
    """One row per profile: the model it is calibrated to, the fitted parameters, the fit errors."""
    fitted = json.loads((folder / "fitted.json").read_text())["profiles"]
    rows = [{"model": f"sim/{name}", "calibrated_to": entry["calibrated_to"], **entry["params"],
             "rmse": entry["rmse"], "rmse_litm": entry["rmse_by_source"]["litm"],
             "rmse_ruler": entry["rmse_by_source"]["ruler"], "probe_rmse": entry["probe_rmse"],
             "points": entry["points"]} for name, entry in fitted.items()]
    table = pd.DataFrame(rows)
    rank = {m: i for i, m in enumerate(model_order(list(table.model)))}
    return table.sort_values("model", key=lambda c: c.map(rank)).reset_index(drop=True)


def plot_calibration(points: pd.DataFrame) -> plt.Figure:
    """Rows: profiles; columns: Lost in the Middle at 10/20/30 documents (recall / oracle by answer
    position) and RULER (score / 4K score by length). Dots: published; line: fitted; crosses: SimLM's probe."""
    models = model_order(list(points.model))
    fig, axes = plt.subplots(len(models), len(PANELS), figsize=(11, 2.4 * len(models)), squeeze=False)
    for r, model in enumerate(models):
        for c, panel in enumerate(PANELS):
            ax = axes[r][c]
            cell = points[(points.model == model) & (points.panel == panel)].sort_values("x")
            if cell.empty:
                ax.set_visible(False)
                continue
            ax.plot(cell.x, cell.published, "o", color="#4c72b0", label="published")
            ax.plot(cell.x, cell.expected, "-", color="#dd8452", label="fitted curve")
            ax.plot(cell.x, cell.probe, "x", color="#55a868", label="SimLM probe")
            ax.set_ylim(0, 1.1)
            if panel == "length":
                ax.set_xscale("log", base=2)
                ax.set_xlabel("context tokens")
            else:
                ax.set_xlabel("answer position")
            ax.set_title(f"{model}: {panel} ({cell.published_model.iloc[0]})", fontsize=8)
            if c == 0:
                ax.set_ylabel("recall fraction")
    axes[0][0].legend(fontsize=7, loc="lower left")
    fig.suptitle("SimLM recall calibrated to published measurements (model: SimLM, not a real LLM)", fontsize=9)
    fig.tight_layout()
    return fig


# --- forgetting by position and length (issue 30 item 5) -------------------------------------------
LENGTHS = (4_000, 8_000, 16_000, 32_000, 64_000, 128_000)  # tokens of context (the windows are 32k, 64k, 128k)
DEPTHS = {"start": 0.0, "quarter": 0.25, "middle": 0.5, "three quarters": 0.75, "end": 1.0}  # of the context
FLAT_CONTENT = 0.05  # a content term below this no longer lowers recall with length, in effect


def fitted_profiles(folder: Path) -> dict[str, Any]:
    """The calibrated profiles as ``fitted.json`` in ``folder`` makes them (priors for the rest)."""
    from pushbench.policies.sim.profiles import PRIORS, calibrated, load_fitted

    fitted = load_fitted(folder / "fitted.json")
    return {f"sim/{name}": profile for name, profile in calibrated(PRIORS, fitted).items() if name in fitted}


def forgetting_table(profiles: dict[str, Any], lengths: tuple[int, ...] = LENGTHS) -> pd.DataFrame:
    """One row per profile, context length and depth: the calibrated recall of one fact there
    (``attention.recall_probability``: 0 where the fact is beyond the window), the content term
    M(n) and the fact's distance from the end in tokens. ``depth`` "mean" averages 101 depths."""
    from pushbench.policies.sim.attention import length_term, recall_probability

    rows = []
    for model, profile in profiles.items():
        for n in lengths:
            spread = np.linspace(0, n - 1, 101).astype(np.int64)
            depths = {**{k: int(v * (n - 1)) for k, v in DEPTHS.items()}, "mean": None}
            for depth, offset in depths.items():
                at = spread if offset is None else np.array([offset])
                recall = float(recall_probability(profile, at, n).mean())
                rows.append({"model": model, "tokens": n, "depth": depth, "recall": round(recall, 4),
                             "distance_from_end": None if offset is None else n - 1 - offset,
                             "content_term": round(float(length_term(profile, min(n, profile.window))), 4),
                             "window": profile.window})
    return pd.DataFrame(rows)


def flat_from(profile: Any, threshold: float = FLAT_CONTENT, limit: int = 10**6) -> int | None:
    """The context length (tokens) past which the profile's content term M(n) stays below
    ``threshold`` (recall then depends on position alone, not on length); None if it does not get
    there within ``limit`` tokens."""
    if profile.middle < threshold:
        return 0
    if profile.length_decay <= 0:
        return None
    tokens = int(np.ceil(4096 * (profile.middle / threshold) ** (1 / profile.length_decay)))
    return tokens if tokens <= limit else None


def flat_table(profiles: dict[str, Any]) -> pd.DataFrame:
    """Per profile: its window, content-term parameters and the length past which it is flat."""
    rows = [{"model": model, "window": p.window, "middle": p.middle, "length_decay": p.length_decay,
             "flat_from_tokens": flat_from(p)} for model, p in profiles.items()]
    table = pd.DataFrame(rows)
    table["flat_from_tokens"] = table["flat_from_tokens"].astype("Int64")  # empty: not within 1M tokens
    return table


def plot_forgetting(table: pd.DataFrame, flats: pd.DataFrame) -> plt.Figure:
    """Per profile: recall of one fact against context length at each depth (log axis), the
    profile's window (beyond it the oldest text is gone) and where its content term goes flat."""
    models = model_order(list(table.model.unique()))
    fig, axes = plt.subplots(1, len(models), figsize=(3.6 * len(models), 3.0), squeeze=False, sharey=True)
    styles = {"start": ":", "quarter": "--", "middle": "-", "three quarters": "-.", "end": ":", "mean": "-"}
    for ax, model in zip(axes[0], models):
        cell = table[table.model == model]
        for depth, style in styles.items():
            line = cell[cell.depth == depth].sort_values("tokens")
            ax.plot(line.tokens, line.recall, style, marker="o", markersize=3, label=depth,
                    linewidth=2.2 if depth == "mean" else 1.2)
        window = int(cell.window.iloc[0])
        ax.axvline(window, color="grey", linewidth=0.8)
        ax.text(window, 0.02, " window", fontsize=7, color="grey")
        flat = flats.loc[flats.model == model, "flat_from_tokens"].iloc[0]
        if flat is not None and not pd.isna(flat):
            ax.axvspan(max(float(flat), float(line.tokens.min())), float(line.tokens.max()), color="#dddddd", alpha=0.5)
            ax.text(max(float(flat), float(line.tokens.min())), 0.93, f" flat past {int(flat):,}", fontsize=7)
        ax.set_xscale("log", base=2)
        ticks = sorted(cell.tokens.unique())
        ax.set_xticks(ticks, [f"{t // 1000}k" for t in ticks], fontsize=7)
        ax.minorticks_off()
        ax.set_ylim(0, 1.0)
        ax.set_xlabel("context tokens")
        ax.set_title(model, fontsize=9)
    axes[0][0].set_ylabel("recall of one fact")
    axes[0][-1].legend(fontsize=7, loc="lower left", title="depth", title_fontsize=7)
    fig.suptitle("SimLM recall by depth and context length, calibrated (model: SimLM, not a real LLM)", fontsize=9)
    fig.tight_layout()
    return fig


def fit_line(fits: pd.DataFrame) -> str:
    """The fit error per profile and the largest gap between SimLM's probe and the published points."""
    if fits.empty:
        return "no fitted profiles"
    rmse = ", ".join(f"{row.model} {row.rmse:.3f}" for row in fits.itertuples())
    worst = fits.loc[fits.probe_rmse.idxmax()]
    return f"SimLM fit rmse: {rmse}; largest probe_rmse {worst.probe_rmse:.3f} ({worst.model})"


def flat_line(flats: pd.DataFrame) -> str:
    """Which profiles go flat (content term below 0.05) and from which length."""
    if flats.empty:
        return "no fitted profiles"
    flat = flats[flats.flat_from_tokens.notna()]
    parts = [f"{row.model} from {int(row.flat_from_tokens):,} tokens" for row in flat.itertuples()]
    rest = [str(m) for m in flats.model[flats.flat_from_tokens.isna()]]
    return (f"SimLM flat profiles: {', '.join(parts) or 'none'}; "
            f"not flat within 1M tokens: {', '.join(rest) or 'none'}")


def forgetting_lines(forgetting: pd.DataFrame, flats: pd.DataFrame) -> str:
    """Per profile: a middle fact's recall at 8k and 32k, the ends' at 32k, the mean over depths at 128k."""
    recall = forgetting.set_index(["model", "depth", "tokens"]).recall
    points = [("middle", 8_000), ("middle", 32_000), ("start", 32_000), ("end", 32_000), ("mean", 128_000)]
    lines = []
    for row in flats.itertuples():
        if any((row.model, depth, tokens) not in recall.index for depth, tokens in points):
            lines.append(f"{row.model}: not all depths and lengths computed")
            continue
        r = {point: float(recall[(row.model, *point)]) for point in points}
        lines.append(f"{row.model}: middle {r['middle', 8_000]:.2f} at 8k -> {r['middle', 32_000]:.2f} at 32k; "
                     f"start {r['start', 32_000]:.2f}, end {r['end', 32_000]:.2f} at 32k; "
                     f"mean over depths {r['mean', 128_000]:.2f} at 128k (window {int(row.window):,})")
    return "\n".join(lines)



def _shapes(points: pd.DataFrame, column: str) -> tuple[int, int, int, int]:
    """(U-shaped Lost in the Middle panels, such panels, profiles falling with RULER length, profiles)."""
    u_shaped = panels = falling = lengths = 0
    for (_, panel), cell in points.groupby(["model", "panel"], sort=True):
        y = cell.sort_values("x")[column].to_numpy(float)
        if panel == "length":
            lengths += 1
            falling += int(y[-1] < y[0])
        elif len(y) >= 3:
            panels += 1
            u_shaped += int(y[0] > y[len(y) // 2] and y[-1] > y[len(y) // 2])
    return u_shaped, panels, falling, lengths


def curve_line(points: pd.DataFrame) -> str:
    """What the figure shows, for the published points, the fitted curve and SimLM's probe: in how
    many Lost in the Middle panels both end positions lie above the middle one, and for how many
    profiles RULER recall is lower at the longest length than at the shortest."""
    if points.empty:
        return "no calibration points"
    names = {"published": "published", "expected": "fitted", "probe": "SimLM probe"}
    shapes = {name: _shapes(points, column) for column, name in names.items()}
    u = ", ".join(f"{name} {s[0]}" for name, s in shapes.items())
    fall = ", ".join(f"{name} {s[2]}" for name, s in shapes.items())
    _, panels, _, lengths = shapes["published"]
    return (f"Lost in the Middle panels with both end positions above the middle: {u} of {panels}; "
            f"profiles with lower RULER recall at the longest length than at the shortest: {fall} of {lengths}")
