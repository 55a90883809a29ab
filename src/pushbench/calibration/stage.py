"""The calibrate stage: fit each profile to its named model, then check the fit with the probe.

For every profile in params.yaml ``calibration.profiles`` it builds the probe contexts of the
published measurements (Lost in the Middle's 10/20/30 documents; one context per RULER length,
up to the model's claimed length), fits the profile's recall parameters (``fit.fit``, starting
from the prior in ``profiles.PRIORS``, never from an earlier fit, so the stage does not depend on
its own output) and then poses every probe question to SimLM with the fitted profile
``repetitions`` times. It writes ``fitted.json`` (parameters, fit error, the model each profile is
calibrated to) and ``probe.json`` (published, expected and SimLM-probed value of every point),
both sorted JSON with no timestamps or paths.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from pushbench.calibration.fit import FitResult, Point, fit, litm_curve, predict, read_rows, ruler_curve
from pushbench.calibration.probe import Context, Layout, build_context, layout, run_probe
from pushbench.policies.sim.profiles import PRIORS, Profile
from pushbench.sandbox.files import write_text_atomic

LITM_FILE, RULER_FILE = "lost_in_the_middle_qa.csv", "ruler.csv"


@dataclass(frozen=True)
class Target:
    """One profile's calibration target, from params.yaml."""
    profile: str
    litm_model: str
    ruler_model: str
    reason: str


@dataclass(frozen=True)
class Settings:
    data: Path
    doc_tokens: int
    depths: int
    repetitions: int
    seed: int
    ruler_table: str
    targets: tuple[Target, ...]

    @classmethod
    def from_params(cls, block: dict[str, Any], root: Path) -> "Settings":
        targets = tuple(Target(name, str(t["litm"]), str(t["ruler"]), str(t["reason"]))
                        for name, t in sorted(block["profiles"].items()))
        unknown = [t.profile for t in targets if t.profile not in PRIORS]
        if unknown:
            raise ValueError(f"calibration.profiles names unknown SimLM profiles: {', '.join(unknown)}")
        return cls(root / block["data"], int(block["doc_tokens"]), int(block["depths"]),
                   int(block["repetitions"]), int(block["seed"]), str(block["ruler_table"]), targets)


def _claimed_tokens(rows: list[dict[str, str]], model: str, table: str) -> int:
    claimed = {r["claimed_length"] for r in rows if r["model"] == model and r["table"] == table}
    m = re.fullmatch(r"(\d+)K", claimed.pop()) if len(claimed) == 1 else None
    if m is None:
        raise ValueError(f"RULER {table!r}: no single claimed length for {model!r}")
    return int(m.group(1)) * 1024


def build_points(settings: Settings, target: Target) -> tuple[list[Context], list[Point]]:
    """The probe contexts and the published points of one target, normalised as ``fit`` explains."""
    litm = litm_curve(read_rows(settings.data / LITM_FILE), target.litm_model)
    ruler_rows = read_rows(settings.data / RULER_FILE)
    claimed = _claimed_tokens(ruler_rows, target.ruler_model, settings.ruler_table)
    ruler = {n: v for n, v in ruler_curve(ruler_rows, target.ruler_model, settings.ruler_table).items() if n <= claimed}
    contexts: list[Context] = []
    points: list[Point] = []
    for n_docs in sorted({n for n, _ in litm}):
        contexts.append(build_context(n_docs, settings.doc_tokens, settings.seed))
        for (n, position), value in litm.items():
            if n == n_docs:
                label = f"{n} docs, position {position}"
                points.append(Point("litm", label, len(contexts) - 1, (position - 1,), value))
    first = len(points)
    for length, value in ruler.items():
        n_docs = max(1, round(length / settings.doc_tokens))
        contexts.append(build_context(n_docs, settings.doc_tokens, settings.seed))
        docs = tuple(sorted({int(round(d * (n_docs - 1))) for d in np.linspace(0.0, 1.0, settings.depths)}))
        points.append(Point("ruler", f"{length} tokens", len(contexts) - 1, docs, value, first))
    return contexts, points


def probe_points(profile: Profile, contexts: list[Context], points: list[Point], reps: int, seed: int) -> list[float]:
    """SimLM's own accuracy on each point (normalised like the published value)."""
    raw = []
    for i, point in enumerate(points):
        accs = [run_probe(profile, contexts[point.context], doc + 1, reps, seed + 7919 * i + doc) for doc in point.docs]
        raw.append(float(np.mean(accs)))
    return [raw[i] / max(raw[p.normaliser], 1e-9) if p.normaliser is not None else raw[i] for i, p in enumerate(points)]


def calibrate_one(settings: Settings, target: Target) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    prior = PRIORS[target.profile]
    contexts, points = build_points(settings, target)
    layouts: list[Layout] = [layout(c, prior) for c in contexts]
    result: FitResult = fit(prior, layouts, points)
    fitted = replace(prior, **result.params)  # type: ignore[arg-type]  # the fitted names are float fields
    expected = predict(fitted, layouts, points)
    probed = probe_points(fitted, contexts, points, settings.repetitions, settings.seed)
    rows: list[dict[str, Any]] = [{"profile": target.profile, "source": p.source, "point": p.label, "published": round(p.value, 6),
             "expected": round(float(e), 6), "probe": round(q, 6), "context_tokens": layouts[p.context].total,
             "model": target.litm_model if p.source == "litm" else target.ruler_model}
            for p, e, q in zip(points, expected, probed)]
    probe_err = float(np.sqrt(np.mean([(r["probe"] - r["published"]) ** 2 for r in rows])))
    entry = {"calibrated_to": f"{target.litm_model} (Lost in the Middle) + {target.ruler_model} (RULER)",
             "reason": target.reason, "params": result.params, "rmse": result.rmse,
             "rmse_by_source": result.rmse_by_source, "probe_rmse": round(probe_err, 6), "points": result.points,
             "prior": {k: getattr(prior, k) for k in result.params}}
    return entry, rows


def run(settings: Settings, out_dir: Path) -> tuple[Path, Path]:
    fitted: dict[str, Any] = {}
    probe_rows: list[dict[str, Any]] = []
    for target in settings.targets:
        entry, rows = calibrate_one(settings, target)
        fitted[target.profile] = entry
        probe_rows.extend(rows)
    out_dir.mkdir(parents=True, exist_ok=True)
    fitted_path, probe_path = out_dir / "fitted.json", out_dir / "probe.json"
    doc = {"method": "scipy.optimize.least_squares (trf) on recall fractions; see pushbench.calibration.fit",
           "profiles": fitted}
    write_text_atomic(fitted_path, json.dumps(doc, sort_keys=True, indent=1) + "\n")
    write_text_atomic(probe_path, json.dumps({"points": probe_rows}, sort_keys=True, indent=1) + "\n")
    return fitted_path, probe_path
