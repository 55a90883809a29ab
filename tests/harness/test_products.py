"""The real agent products (Claude Code, Codex CLI) over serve-sim and serve-mcp, offline.

Marked ``agents``: they run when ``make agents`` installed the CLIs and are skipped otherwise.
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
from pushbench.harness.launcher import EpisodePlan, free_port, resolve_agent, run_agent_episode
from pushbench.harness.products import PRODUCTS, SimProcess, find_cli
from pushbench.mcp_server import ServerPaths, find_task

TASK = "reposcan-requests-fixture-n010"
HELPERS = Path(__file__).resolve().parents[1] / "helpers"


def _installed(name: str) -> str | None:
    try:
        find_cli(PRODUCTS[name])
    except ValueError as err:
        return str(err)
    return None


def _data_ready() -> bool:
    return (config.MANIFESTS / "reposcan.jsonl").is_file() and (config.SNAPSHOT_SRC / "requests").is_dir()


def product(name: str):
    reason = _installed(name)
    return pytest.param(name, marks=[pytest.mark.agents, pytest.mark.skipif(
        reason is not None, reason=f"{reason} (the agents tests need the real CLIs)")], id=name)


PRODUCT_PARAMS = [product("claude-code"), product("codex")]


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


HOSTILE = [["search", {"query": "../../data/hidden", "page": -3}],
           ["submit", {"ids": ["../../../data/hidden/reposcan", "/etc/passwd", "a\u0007b"]}]]


@pytest.mark.parametrize("name", PRODUCT_PARAMS)
def test_hostile_arguments_from_a_product_reach_the_servers_error_path(name: str, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def scripted(port: int, seed: int, folder: Path, timeout: float = 60) -> SimProcess:
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
    assert [c["tool"] for c in calls] == ["search", "submit"], (tmp_path / "agent.stdout").read_text()[-2000:]
    assert all(not c["ok"] and c["error"] for c in calls)
    assert outcome.row["invalid_actions"] == 2 and outcome.row["valid_count"] == 0
    assert leftovers(tmp_path) == []


# --------------------------------------------------------------------------- recipes, no CLI needed

def test_the_recipes_point_the_products_at_serve_sim_and_serve_mcp_only(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import tomllib

    monkeypatch.setenv("ANTHROPIC_API_KEY", "a-real-key")  # never handed to a product
    monkeypatch.setenv("OPENAI_BASE_URL", "http://example.invalid")
    server = {"command": "/py", "args": ["-m", "pushbench.cli", "serve-mcp", "--task", "t"], "env": {}}
    argv, env = products.codex_launch(Path("/bin/codex"), "the task", server, "sim-base", "http://127.0.0.1:9",
                                      tmp_path / "home")
    cfg = tomllib.loads((Path(env["CODEX_HOME"]) / "config.toml").read_text())
    provider = cfg["model_providers"][cfg["model_provider"]]
    assert provider["wire_api"] == "responses" and provider["base_url"] == "http://127.0.0.1:9/v1"
    mcp = cfg["mcp_servers"]["pushbench"]
    assert mcp["command"] == "/py" and mcp["args"] == server["args"] and mcp["required"] is True
    assert cfg["features"]["shell_tool"] is False and cfg["web_search"] == "disabled"
    assert argv[-1] == "the task" and "read-only" in argv and "OPENAI_BASE_URL" not in env
    argv, env = products.claude_launch(Path("/bin/claude"), "the task", tmp_path / "mcp.json", "sim-base",
                                       "http://127.0.0.1:9", tmp_path / "home")
    assert argv[argv.index("--tools") + 1] == "" and "--strict-mcp-config" in argv
    assert argv[argv.index("--allowedTools") + 1].split(",") == [f"mcp__pushbench__{t}" for t in products.TASK_TOOLS]
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9" and env["ANTHROPIC_API_KEY"] == products.OFFLINE_KEY
    assert env["HOME"] == str((tmp_path / "home").resolve()) and env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"


def test_a_missing_cli_is_a_clear_error_before_anything_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pushbench.harness.launcher import preflight

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(products, "AGENTS_DIR", tmp_path / "none")
    monkeypatch.setattr(products.find_cli, "__defaults__", (tmp_path / "none",))
    with pytest.raises(ValueError, match="make agents"):
        preflight(EpisodePlan(find_task(TASK, ServerPaths()) if _data_ready() else None,  # type: ignore[arg-type]
                              resolve_agent("codex"), "default", 10))
