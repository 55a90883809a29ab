"""``pipeline.lockfile``: one stage's dvc.lock entry written in place is byte for byte what DVC's
round-trip rewrite of the whole file gives (a changed entry, a new one, an unchanged one)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from dvc.utils.serialize import dumps_yaml, parse_yaml_for_update

from pushbench.pipeline.lockfile import entry_block, spliced

ROOT = Path(__file__).resolve().parents[2]
LONG = ".venv/bin/python -m pushbench.analysis.notebooks " + "x" * 90 + " --a-long-flag-that-wraps 'quoted: value'"


def stage(cmd: str, *deps: str) -> dict[str, Any]:
    return {"cmd": cmd,
            "deps": [{"path": d, "hash": "md5", "md5": f"{len(d):032x}", "size": 7} for d in deps],
            "params": {"params.yaml": {"seed": 7, "run.workers": 2}},
            "outs": [{"path": "data/out", "hash": "md5", "md5": "a" * 32 + ".dir", "size": 9, "nfiles": 3}]}


def lock() -> str:
    stages = {"snapshots": stage("make snapshots", "snapshots/lock.yaml"),
              "manifests@planning": stage("python -m m planning", "src/a", "src/b"),
              "notebooks@09-acg-eval": stage(LONG, "data/runs/a", "paper_figures/x.csv")}
    return dumps_yaml({"schema": "2.0", "stages": stages})


def dvc_dump(text: str, entry: dict[str, Any]) -> str:
    """What DVC's Lockfile.dump_stages writes: the whole file re-read, updated and re-dumped."""
    data = parse_yaml_for_update(text, "dvc.lock")
    data["stages"].update(entry)
    return dumps_yaml(data)


@pytest.mark.parametrize("name", ["snapshots", "manifests@planning", "notebooks@09-acg-eval"])
def test_a_changed_entry_is_written_in_place_as_dvc_writes_it(name: str) -> None:
    text = lock()
    entry = copy.deepcopy(parse_yaml_for_update(text, "dvc.lock")["stages"][name])
    assert spliced(text, entry_block({name: entry})) == text  # unchanged: the same bytes
    entry = {**dict(entry), "cmd": entry["cmd"] + " --more", "deps": [*entry["deps"], {"path": "src/new", "md5": "b"}]}
    assert spliced(text, entry_block({name: entry})) == dvc_dump(text, {name: entry}) != text


def test_a_new_entry_goes_after_the_last_as_dvc_puts_it() -> None:
    text = lock()
    entry = {"runs@planning-long": stage(LONG, "data/manifests/planning.jsonl")}
    assert spliced(text, entry_block(entry)) == dvc_dump(text, entry)


def test_a_layout_dvc_does_not_write_is_left_to_dvc() -> None:
    entry = entry_block({"a": stage("true")})
    assert spliced("schema: '2.0'\nstages: {}\n", entry) is None
    assert spliced("schema: '2.0'\n", entry) is None


def test_every_entry_of_the_projects_lock_is_reproduced() -> None:
    text = (ROOT / "dvc.lock").read_text(encoding="utf-8")
    entries = parse_yaml_for_update(text, "dvc.lock")["stages"]
    assert len(entries) > 50
    for name, entry in entries.items():
        assert spliced(text, entry_block({name: copy.deepcopy(entry)})) == text, name
