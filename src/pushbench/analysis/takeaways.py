"""One-line takeaways computed from a notebook section's table: paired deltas, success by target
N, the best condition per model and the unit pass rate by type. Each line states only what the
table holds and names SimLM when every model in it is a SimLM profile."""

from __future__ import annotations

import pandas as pd

from pushbench.analysis.figures import model_order


def simlm(models: list[str]) -> str:
    """The line's prefix: "SimLM: " when every model is a SimLM profile (``sim/...``)."""
    return "SimLM: " if models and all(str(m).startswith("sim/") for m in models) else ""


def _native(table: pd.DataFrame) -> pd.DataFrame:
    """Native-backend rows when the table has a backend column and any native row."""
    if "backend" in table.columns and (table.backend == "native").any():
        return table[table.backend == "native"]
    return table


def _signed(value: float) -> str:
    return f"{value:+.3f}"


def delta_line(deltas: pd.DataFrame, comparison: str) -> str:
    """Which models' paired 95% interval for ``comparison`` lies above 0, includes 0 or lies below
    0, and the largest delta with its interval (native backend when the table has one)."""
    rows = _native(deltas[deltas.comparison == comparison]) if "comparison" in deltas.columns else deltas.iloc[0:0]
    if rows.empty:
        return f"no {comparison} deltas"
    rows = rows.set_index("model").loc[model_order(list(rows.model))]
    groups = {"above 0": rows.ci_low > 0, "includes 0": (rows.ci_low <= 0) & (rows.ci_high >= 0),
              "below 0": rows.ci_high < 0}
    parts = [f"{name} for {', '.join(rows.index[mask])}" for name, mask in groups.items() if mask.any()]
    top = rows.delta.idxmax()
    best = rows.loc[top]
    backend = " (native backend)" if "backend" in deltas.columns else ""
    return (f"{simlm(list(rows.index))}{comparison}{backend}, paired 95% interval {'; '.join(parts)}; largest "
            f"{_signed(best.delta)} [{best.ci_low:.3f}, {best.ci_high:.3f}] ({top})")


def target_line(by_n: pd.DataFrame, controllers: list[str]) -> str:
    """Success at the smallest and the largest target N for the first model in profile order, and
    the controllers whose success at the largest N is above 0 for every model."""
    if by_n.empty:
        return "no success-by-N rows"
    low, high = int(by_n.target.min()), int(by_n.target.max())
    model = model_order(list(by_n.model))[0]
    rate = by_n.set_index(["model", "controller", "target"]).success_rate
    moves = [f"{c} {rate[model, c, low]:.2f} → {rate[model, c, high]:.2f}" for c in controllers
             if (model, c, low) in rate.index and (model, c, high) in rate.index]
    if not moves:
        return f"no controller of {', '.join(controllers)} ran at both N = {low} and N = {high} for {model}"
    top = by_n[by_n.target == high]
    models = set(by_n.model)
    nonzero = [c for c in controllers
               if set(top[top.controller == c].model) == models and (top[top.controller == c].success_rate > 0).all()]
    return (f"{simlm(list(models))}{model} success from N = {low} to N = {high}: {', '.join(moves)}; "
            f"above 0 at N = {high} for all {len(models)} models: {', '.join(nonzero) or 'none'}")


def best_condition_line(table: pd.DataFrame, column: str, reference: str) -> str:
    """Per model, the condition(s) with the highest success beside the ``reference`` condition's
    (native backend when the table has one; more than three tied conditions are counted)."""
    if table.empty:
        return "no conditions"
    native, parts = _native(table), []
    for model in model_order(list(native.model)):
        rows = native[native.model == model]
        best = rows[rows.success == rows.success.max()]
        ref = rows[rows[column] == reference].success
        beside = f"{reference} {ref.iloc[0]:.3f}" if len(ref) else f"no {reference}"
        names = " = ".join(best[column]) if len(best) <= 3 else f"{len(best)} conditions tied"
        parts.append(f"{model} {names} {best.success.iloc[0]:.3f} ({beside})")
    backend = " (native backend)" if "backend" in table.columns else ""
    return f"{simlm(list(native.model))}highest success{backend}: {'; '.join(parts)}"


def unit_type_line(units: pd.DataFrame, controller: str) -> str:
    """Pass rate per unit type under ``controller`` (native backend, plain transcript), pooled over
    models by unit count."""
    rows = units[(units.controller == controller) & (units.memory == "full")] if not units.empty else units
    rows = _native(rows)
    if rows.empty:
        return f"no {controller} units"
    pooled = rows.assign(passed=rows.unit_pass_rate * rows.units).groupby("unit_type", sort=True)[["passed", "units"]].sum()
    parts = [f"{kind} {row.passed / row.units:.3f} of {int(row.units)} units" for kind, row in pooled.iterrows()]
    return f"{simlm(list(rows.model))}{controller} unit pass rate pooled over models: {'; '.join(parts)}"
