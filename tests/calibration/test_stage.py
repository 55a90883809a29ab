"""The calibrate stage: same bytes twice, independent of its own output, clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pushbench import config
from pushbench.calibration.stage import Settings, run
from pushbench.policies.sim.profiles import PRIORS, PROFILES, RECALL_PARAMS, calibrated, load_fitted


def small_block() -> dict:
    block = json.loads(json.dumps(config.params("calibration")))
    block["profiles"] = {"pro": block["profiles"]["pro"]}
    block.update(repetitions=3, depths=3)
    return block


def test_stage_writes_the_same_bytes_twice(tmp_path: Path) -> None:
    settings = Settings.from_params(small_block(), config.ROOT)
    first = [p.read_bytes() for p in run(settings, tmp_path / "a")]
    second = [p.read_bytes() for p in run(settings, tmp_path / "b")]
    assert first == second
    fitted = json.loads(first[0])
    entry = fitted["profiles"]["pro"]
    assert set(entry["params"]) == set(RECALL_PARAMS)
    assert "Claude-1.3 (100K)" in entry["calibrated_to"] and entry["rmse"] < 0.1
    assert first[0].decode() == json.dumps(fitted, sort_keys=True, indent=1) + "\n"  # sorted JSON
    assert str(tmp_path) not in first[0].decode() + first[1].decode()  # no paths
    points = json.loads(first[1])["points"]
    assert {p["source"] for p in points} == {"litm", "ruler"}
    assert all(0.0 <= p["probe"] <= 1.5 and 0.0 <= p["expected"] <= 1.5 for p in points)


def test_committed_fit_is_what_the_profiles_use() -> None:
    fitted = load_fitted()
    assert set(fitted) == set(config.params("calibration.profiles"))
    for name, entry in fitted.items():
        for key, value in entry["params"].items():
            assert getattr(PROFILES[name], key) == pytest.approx(value)
        assert PROFILES[name].calibrated_to == entry["calibrated_to"]
        # the fit starts from the documented priors, never from an earlier fit
        assert entry["prior"] == {k: getattr(PRIORS[name], k) for k in RECALL_PARAMS}
    assert PROFILES["perfect"] == PRIORS["perfect"]  # not fitted: full recall stays


def test_a_broken_fitted_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "fitted.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not a calibration file"):
        load_fitted(bad)
    assert calibrated(PRIORS, {}) == PRIORS


def test_a_missing_fitted_file_falls_back_to_the_priors_with_one_warning_line(tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from pushbench.policies.sim import profiles

    assert load_fitted(tmp_path / "missing.json") == {}
    profiles.get_profile("sim/base")  # the committed fit: silent
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(profiles, "FITTED", {})
    monkeypatch.setattr(profiles, "_WARNED", [])
    profiles.get_profile("sim/perfect")  # never fitted: nothing to say
    assert capsys.readouterr().err == ""
    profiles.get_profile("sim/base@8k")
    profiles.get_profile("sim/mini")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("warning: data/calibration/fitted.json not found: sim/base")
