"""SimLM profiles: plain behavioural parameters, each with the reason it has its value.

The recall parameters (``RECALL_PARAMS``, the U-shaped curve of ``attention.py``) of ``mini``,
``base`` and ``pro`` are fitted by the ``calibrate`` stage to published long-context measurements
of one named model each (``pushbench.calibration``, params.yaml ``calibration:``) and read from
``data/calibration/fitted.json``; the values written below are the documented priors the fit starts
from (and what a profile uses if that file is absent, said in a warning on stderr when one is
used). Every other
parameter (window, reader noise, conflation, patience, guidance following, ...) is a documented
prior no measurement covers. Nothing is fitted to the PushBench or ACG papers' numbers. ``perfect`` is the reference upper bound (full
recall, noiseless reader, no fatigue) that must solve every task within budget.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from pushbench import config

RECALL_PARAMS = ("primacy", "primacy_span", "recency", "recency_span", "middle", "length_decay")
FITTED_FILE = Path("data/calibration/fitted.json")  # written by the calibrate stage, committed


@dataclass(frozen=True)
class Profile:
    name: str
    seed: int
    window: int  # tokens visible at all; older text is gone
    primacy: float  # recall through the start of the context, at its very start
    primacy_span: float  # ... decaying as exp(-x / primacy_span) over relative position x
    recency: float  # recall through the end of the context, at its very end
    recency_span: float  # ... decaying as exp(-(1 - x) / recency_span)
    middle: float  # recall any visible fact has, whatever its position, in a 4,096-token context
    length_decay: float  # ... falling as a power of length: middle * (n / 4096)**(-length_decay)
    false_positive: float  # reader calls an invalid hit valid
    false_negative: float  # reader misses a valid hit
    conflate: float  # counting from memory, a rejected/duplicate verdict is taken as progress
    patience: int  # steps without recalled progress before giving up
    fatigue: float  # patience shrinks by this fraction as the context fills the window
    follow_guidance: float  # obeys an explicit controller instruction
    claim_on_stop: float  # when giving up, calls final(believed count) rather than just stopping
    check_status: float  # calls status() before claiming completion
    pages_per_submit: int  # search pages read before submitting the candidates found
    skip_checker: float  # work units: submits right after an edit without running the checker
    calibrated_to: str = "priors (uncalibrated)"  # the published model(s) the recall parameters are fitted to
    # --- work-unit mechanisms (issue 19 items 3-5); values in WORK_UNIT_PRIORS below ---
    pass_as_done: float = 0.0  # work units: takes a passing checker run for the unit done (no submit)


PRIORS: dict[str, Profile] = {
    "mini": Profile(
        name="mini", seed=101,
        window=32_000,  # small models: short usable context
        # recall priors: both ends well used, a weak middle that fades with length
        primacy=0.6, primacy_span=0.1, recency=0.7, recency_span=0.1, middle=0.5, length_decay=0.4,
        false_positive=0.08, false_negative=0.12,  # sloppier judgment of snippets
        conflate=0.5,  # often counts submissions as successes
        patience=8, fatigue=0.6,
        follow_guidance=0.7, claim_on_stop=0.8, check_status=0.1,
        pages_per_submit=2, skip_checker=0.5),
    "base": Profile(
        name="base", seed=202,
        window=64_000,
        primacy=0.7, primacy_span=0.1, recency=0.8, recency_span=0.1,
        middle=0.6, length_decay=0.3,
        false_positive=0.04, false_negative=0.06,
        conflate=0.3, patience=12, fatigue=0.4,
        follow_guidance=0.85, claim_on_stop=0.7, check_status=0.3,
        pages_per_submit=2, skip_checker=0.3),
    "pro": Profile(
        name="pro", seed=303,
        window=128_000,  # strong long-context recall
        primacy=0.8, primacy_span=0.1, recency=0.9, recency_span=0.1,
        middle=0.7, length_decay=0.2,
        false_positive=0.02, false_negative=0.03,
        conflate=0.1, patience=20, fatigue=0.2,
        follow_guidance=0.95, claim_on_stop=0.6, check_status=0.6,
        pages_per_submit=2, skip_checker=0.1),
    "perfect": Profile(
        name="perfect", seed=404,
        window=10**9, primacy=1.0, primacy_span=1.0, recency=1.0, recency_span=1.0,
        middle=1.0, length_decay=0.0,
        false_positive=0.0, false_negative=0.0,
        conflate=0.0, patience=10**6, fatigue=0.0,
        follow_guidance=1.0, claim_on_stop=1.0, check_status=0.0,
        pages_per_submit=1, skip_checker=0.0),
}


# --- work-unit mechanisms (issue 19 items 3-5): documented priors, never fitted ----------------------
# Both apply only when the mind does not recall (or does not follow) the objective's rule that a
# unit counts only if its check passes at submit (guidance.RULE_UNIT_VERIFIED); skip_checker above is
# read the same way. The values order the profiles like the rest of the table: weaker models lose
# the instruction's point more often.
WORK_UNIT_PRIORS: dict[str, dict[str, float]] = {
    "mini": {"pass_as_done": 0.4},  # small models often stop at "the check passes" and move on
    "base": {"pass_as_done": 0.2},  # mid models mostly submit, sometimes forget after a pass
    "pro": {"pass_as_done": 0.1},  # strong models rarely treat a pass as a submit
    "perfect": {"pass_as_done": 0.0},  # the reference bound never does
}
PRIORS = {name: replace(p, **WORK_UNIT_PRIORS.get(name, {})) for name, p in PRIORS.items()}  # type: ignore[arg-type]


def load_fitted(path: Path | None = None) -> dict[str, dict[str, object]]:
    """The calibrate stage's fitted recall parameters by profile ({} when the file is absent)."""
    path = path or config.ROOT / FITTED_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
        return {name: entry for name, entry in data["profiles"].items()}
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{path.name}: not a calibration file ({exc}); rerun the calibrate stage") from exc


def calibrated(priors: dict[str, Profile], fitted: dict[str, dict[str, object]]) -> dict[str, Profile]:
    """Each prior profile with the recall parameters fitted for it (profiles not fitted unchanged)."""
    out = dict(priors)
    for name, entry in fitted.items():
        if name in out:
            values: dict[str, object] = dict(entry["params"])  # type: ignore[call-overload]
            params = {k: float(v) for k, v in values.items() if k in RECALL_PARAMS}  # type: ignore[arg-type]
            out[name] = replace(out[name], calibrated_to=str(entry["calibrated_to"]), **params)  # type: ignore[arg-type]
    return out


FITTED = load_fitted()
PROFILES: dict[str, Profile] = calibrated(PRIORS, FITTED)
_WARNED: list[str] = []  # the missing-calibration warning is said once per process


def warn_uncalibrated(name: str) -> None:
    """One ``warning:`` line on stderr the first time a profile the calibrate stage fits is used
    without its fit (``fitted.json`` missing): it then recalls by its priors, which no measurement
    backs. (Not at import: the calibrate stage itself imports the priors to fit them.)"""
    if name in PRIORS and name != "perfect" and name not in FITTED and not _WARNED:
        _WARNED.append(name)
        print(f"warning: {FITTED_FILE.as_posix()} not found: sim/{name} recalls by its uncalibrated priors "
              "(run the calibrate stage; outside a checkout set PUSHBENCH_ROOT)", file=sys.stderr)


def split_window(name: str) -> tuple[str, int | None]:
    """``base@8k`` -> ("base", 8000): a profile name with an optional context-window override in
    tokens (``k`` = 1,000), so a window sweep is a grid of model names (``sim/base@8k``)."""
    key, at, window = name.partition("@")
    if not at:
        return key, None
    digits = window[:-1] if window.lower().endswith("k") else window
    if not digits.isdigit() or int(digits) < 1:
        raise KeyError(f"bad SimLM context window {window!r} in {name!r}: use @<tokens> or @<n>k (e.g. sim/base@8k)")
    return key, int(digits) * (1000 if window.lower().endswith("k") else 1)


def window_suffix(window: int) -> str:
    """The ``@...`` suffix naming a window override (8000 -> "@8k", 8192 -> "@8192")."""
    return f"@{window // 1000}k" if window % 1000 == 0 else f"@{window}"


def get_profile(name: str, **overrides: object) -> Profile:
    """A profile by name (``sim/base``, ``sim-base``, ``base``), optionally with a window override
    (``sim/base@8k``); ``overrides`` replace any other field."""
    key, window = split_window(name.removeprefix("sim/").removeprefix("sim-"))
    if key not in PROFILES:
        raise KeyError(f"unknown SimLM profile {name!r}; known: {', '.join('sim/' + p for p in PROFILES)}")
    if window is not None:
        overrides = {"window": window, **overrides}
    warn_uncalibrated(key)
    return replace(PROFILES[key], **overrides) if overrides else PROFILES[key]  # type: ignore[arg-type]
