"""environment.yml (for conda users) pins exactly what requirements.lock pins."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)$")


def _pin(line: str) -> tuple[str, str]:
    match = PIN.match(line.strip())
    assert match, f"not a name==version pin: {line!r}"
    return match.group(1).lower(), match.group(2)


def lock_pins() -> list[tuple[str, str]]:
    lines = (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines()
    return [_pin(line) for line in lines if line.strip() and not line.lstrip().startswith("#")]


def environment() -> dict:
    with open(ROOT / "environment.yml", encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def conda_and_pip(env: dict) -> tuple[list[str], list[str]]:
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pip_sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(pip_sections) == 1, "environment.yml needs exactly one pip: section"
    return conda, pip_sections[0]


def test_environment_yml_pins_every_package_of_requirements_lock() -> None:
    _, pip = conda_and_pip(environment())
    env_pins = [_pin(line) for line in pip]
    lock = lock_pins()
    assert lock, "requirements.lock has no pins"
    assert len(env_pins) == len(set(env_pins)), "environment.yml lists a pin twice"
    assert set(env_pins) == set(lock), (
        f"only in environment.yml: {sorted(set(env_pins) - set(lock))}; "
        f"only in requirements.lock: {sorted(set(lock) - set(env_pins))}")
    assert env_pins == lock, "environment.yml should keep requirements.lock's order"


def test_environment_yml_is_python_311_from_conda_forge() -> None:
    env = environment()
    assert env["name"] == "pushbench"
    assert env["channels"] == ["conda-forge"]
    conda, _ = conda_and_pip(env)
    pythons = [d for d in conda if re.match(r"^python\b", d)]
    assert pythons == ["python=3.11"], pythons
    assert "pip" in conda
