"""Fit a profile's recall parameters to one named model's published curves, by least squares.

What is compared (the probe's question shape, ``probe.py``):
- **Lost in the Middle** (multi-document QA, App. G Tables 5-7): accuracy with the answer document
  at position p of 10, 20 or 30 documents, divided by the model's oracle accuracy (Table 1, the
  answer document alone). SimLM's probe answers right exactly when it recalls the document, so
  its accuracy is the recall probability of that document; dividing by the oracle takes the
  reader's own error (which SimLM models separately, as reader noise) out of the published number.
- **RULER** (Table 3, 13-task average vs context length): the score at each length divided by the
  score at the shortest length (4K), against SimLM's mean recall over a grid of depths at that
  length divided by the same at 4K, so only the fall with length is fitted, not the tasks' difficulty.

``scipy.optimize.least_squares`` (trust-region reflective, bounds below) minimises the sum of
squared differences over all points of both sources, each point one residual. The expected recall
is computed exactly from ``attention.recall_probability`` at the token offsets SimLM's own reader
gives each document (``probe.layout``), so the objective is smooth and deterministic.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

from pushbench.calibration.probe import Layout
from pushbench.policies.sim.attention import recall_probability
from pushbench.policies.sim.profiles import RECALL_PARAMS, Profile

# bounds of each recall parameter, in RECALL_PARAMS order
LOWER = np.array([0.0, 0.005, 0.0, 0.005, 0.0, 0.0])
UPPER = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 3.0])


@dataclass(frozen=True)
class Point:
    """One published measurement, as a recall fraction, and where it sits in the probe."""
    source: str  # "litm" or "ruler"
    label: str  # e.g. "20 docs, position 10" or "32768 tokens"
    context: int  # index into the list of probe layouts
    docs: tuple[int, ...]  # 0-based documents whose recall is averaged
    value: float  # the published number, normalised (see the module docstring)
    normaliser: int | None = None  # index of the point whose prediction divides this one's


@dataclass(frozen=True)
class FitResult:
    params: dict[str, float]
    rmse: float
    rmse_by_source: dict[str, float]
    points: int
    cost: float


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def litm_curve(rows: list[dict[str, str]], model: str) -> dict[tuple[int, int], float]:
    """{(documents, answer position): accuracy / oracle accuracy} for ``model``."""
    oracle = [float(r["accuracy"]) for r in rows if r["model"] == model and r["table"].startswith("Table 1 (oracle)")]
    curve = {(int(r["total_documents"]), int(r["answer_position"])): float(r["accuracy"])
             for r in rows if r["model"] == model and r["table"].startswith("Table ") and int(r["total_documents"]) > 1}
    if len(oracle) != 1 or not curve:
        raise ValueError(f"Lost in the Middle has no oracle row and position rows for {model!r}")
    return {key: acc / oracle[0] for key, acc in sorted(curve.items())}


def ruler_curve(rows: list[dict[str, str]], model: str, table: str) -> dict[int, float]:
    """{length in tokens: score / score at the shortest length} for ``model`` in ``table``."""
    curve = {int(r["length_tokens"]): float(r["accuracy"]) for r in rows if r["model"] == model and r["table"] == table}
    if len(curve) < 2:
        raise ValueError(f"RULER {table!r} has fewer than two lengths for {model!r}")
    first = curve[min(curve)]
    return {length: acc / first for length, acc in sorted(curve.items())}


def with_params(profile: Profile, vector: np.ndarray) -> Profile:
    return replace(profile, **dict(zip(RECALL_PARAMS, vector.tolist())))


def to_vector(profile: Profile) -> np.ndarray:
    return np.clip(np.array([getattr(profile, name) for name in RECALL_PARAMS], dtype=np.float64), LOWER, UPPER)


def predict(profile: Profile, layouts: list[Layout], points: list[Point]) -> np.ndarray:
    """Each point's expected recall fraction under ``profile`` (normalised like its published value)."""
    probs = [recall_probability(profile, lay.offsets, lay.total) for lay in layouts]
    raw = np.array([float(np.mean(probs[p.context][list(p.docs)])) for p in points])
    out = raw.copy()
    for i, point in enumerate(points):
        if point.normaliser is not None:
            out[i] = raw[i] / max(raw[point.normaliser], 1e-9)
    return out


def fit(prior: Profile, layouts: list[Layout], points: list[Point]) -> FitResult:
    """Least-squares fit of the recall parameters of ``prior``, starting from its values."""
    observed = np.array([p.value for p in points])

    def residuals(vector: np.ndarray) -> np.ndarray:
        return predict(with_params(prior, vector), layouts, points) - observed

    result = least_squares(residuals, to_vector(prior), bounds=(LOWER, UPPER), method="trf",
                           x_scale="jac", xtol=1e-10, ftol=1e-10, gtol=1e-10, max_nfev=2000)
    fitted = with_params(prior, result.x)
    errors = residuals(result.x)
    by_source = {s: float(np.sqrt(np.mean(errors[[p.source == s for p in points]] ** 2)))
                 for s in sorted({p.source for p in points})}
    params = {name: round(float(getattr(fitted, name)), 6) for name in RECALL_PARAMS}
    return FitResult(params, round(float(np.sqrt(np.mean(errors**2))), 6),
                     {k: round(v, 6) for k, v in by_source.items()}, len(points), round(float(result.cost), 8))
