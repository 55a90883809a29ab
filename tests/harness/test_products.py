"""The real agent products (every declaration in harness/agents/) over serve-sim and serve-mcp, offline.

Marked ``agents``: each runs when ``make agents`` installed its CLI and is skipped otherwise.
One short RepoScan episode through each product ends with verifier events and a scored row; a
product's tool call with hostile arguments (sent by a scripted model endpoint) reaches the MCP
server's error path; nothing the episode started is left running afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from pushbench import config
from pushbench.harness import products
from pushbench.harness.declaration import builtin
from pushbench.harness.launcher import EpisodePlan, free_port, resolve_agent, run_agent_episode
from pushbench.harness.products import SimProcess, find_cli
from pushbench.harness.mcp_server import ServerPaths, find_task

TASK = "reposcan-requests-fixture-n010"
HELPERS = Path(__file__).resolve().parents[1] / "helpers"


def _installed(name: str) -> str | None:
    try:
        find_cli(builtin()[name])
    except ValueError as err:
        return str(err)
    return None


def _data_ready() -> bool:
    return (config.MANIFESTS / "reposcan.jsonl").is_file() and (config.SNAPSHOT_SRC / "requests").is_dir()


def product(name: str):
    reason = _installed(name)
    return pytest.param(name, marks=[pytest.mark.agents, pytest.mark.skipif(
        reason is not None, reason=f"{reason} (the agents tests need the real CLIs)")], id=name)


PRODUCT_PARAMS = [product(name) for name in builtin()]


def plan(agent: str, timeout: float = 300) -> EpisodePlan:
    if not _data_ready():
        pytest.skip("needs the RepoScan manifest and the requests snapshot (make test builds them)")
    return EpisodePlan(find_task(TASK, ServerPaths()), resolve_agent(agent), "default", timeout)


def leftovers(folder: Path) -> list[int]:
    """Processes whose command line or environment names the episode folder."""
    mark, found = str(folder.resolve()).encode(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if mark in (entry / "cmdline").read_bytes() or mark in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("name", PRODUCT_PARAMS)
def test_a_product_episode_is_scored_from_the_verifier_log(name: str, tmp_path: Path) -> None:
    outcome = run_agent_episode(plan(name), tmp_path)
    kinds = [e["kind"] for e in outcome.events]
    assert {"call", "verdict", "end"} <= set(kinds), (tmp_path / "agent.stderr").read_text()
    row = outcome.row
    assert row["agent"] == name and row["model"] == "sim/base" and row["backend"] == "blackbox"
    assert row["memory"] == name and name in row["episode_id"]
    assert row["steps"] >= 3 and row["termination"] in ("final", "give_up", "budget")
    assert row["llm_calls"] >= row["steps"] and row["input_tokens"] > 0
    assert not outcome.timed_out and outcome.exit_code == 0
    assert leftovers(tmp_path) == []  # the product's process group, serve-sim and serve-mcp are gone


# Products that check a call's arguments against the tool's schema themselves: search's page -3
# (the schema's minimum is 1) never leaves them; the schema-valid hostile ids still do.
CHECKS_ARGUMENTS = {"gemini-cli"}
HOSTILE = [["search", {"query": "../../data/hidden", "page": -3}],
           ["submit", {"ids": ["../../../data/hidden/reposcan", "/etc/passwd", "a\u0007b"]}]]


@pytest.mark.parametrize("name", PRODUCT_PARAMS)
def test_hostile_arguments_from_a_product_reach_the_servers_error_path(name: str, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def scripted(port: int, seed: int, folder: Path, timeout: float = 60, tool_prefixes: tuple = ()) -> SimProcess:
        port = free_port()
        with open(folder / "scripted.stderr", "wb") as err:
            proc = subprocess.Popen([sys.executable, str(HELPERS / "scripted_model.py"), str(port),
                                     json.dumps(HOSTILE)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=err, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1)
                return SimProcess(proc, f"http://127.0.0.1:{port}")
            except httpx.HTTPError:
                time.sleep(0.1)
        raise AssertionError("the scripted model did not start")

    monkeypatch.setattr(products, "start_sim", scripted)
    outcome = run_agent_episode(plan(name), tmp_path)
    calls = [e for e in outcome.events if e["kind"] == "call"]
    reached = ["submit"] if name in CHECKS_ARGUMENTS else ["search", "submit"]
    assert [c["tool"] for c in calls] == reached, (tmp_path / "agent.stdout").read_text()[-2000:]
    assert all(not c["ok"] and c["error"] for c in calls)
    assert outcome.row["invalid_actions"] == len(reached) and outcome.row["valid_count"] == 0
    assert leftovers(tmp_path) == []


# --------------------------------------------------------------------------- recipes, no CLI needed

def test_a_missing_cli_is_a_clear_error_before_anything_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pushbench.harness.launcher import preflight

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(products, "AGENTS_DIR", tmp_path / "none")
    for name in builtin():
        with pytest.raises(ValueError, match=f"make agents.*{builtin()[name].install.npm}"):
            preflight(EpisodePlan(find_task(TASK, ServerPaths()) if _data_ready() else None,  # type: ignore[arg-type]
                                  resolve_agent(name), "default", 10))
