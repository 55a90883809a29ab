"""Agent products as declarations (harness/agents/*.yaml), no installed CLI needed.

Every built-in declaration renders into a command, an environment and config files that point
the product at serve-sim and serve-mcp only (no inherited provider variable, a private HOME); the
tool names it declares reach SimLM's mind lookup as the task's bare names through serve-sim's
mapping; a malformed declaration is one clear error. A fifth product declared in a YAML file
(a small MCP agent on PATH with its own config format and tool names) and the generic
``--agent-cmd ... --with-sim`` path each run a RepoScan episode end to end, scored, with
serve-sim's usage in the row.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from pushbench.harness import products
from pushbench.harness.declaration import DeclarationError, builtin, load, parse, render
from pushbench.harness.launcher import EpisodePlan, resolve_agent, run_agent_episode
from pushbench.policies.sim import mind_name
from pushbench.serve.products import task_view
from test_products import TASK, _data_ready

HELPERS = Path(__file__).resolve().parents[1] / "helpers"
SERVER = {"server_command": "/py", "server_args": ["-m", "pushbench.harness.mcp_main", "serve-mcp", "--task", "t"],
          "server_argv": ["/py", "-m", "pushbench.harness.mcp_main", "serve-mcp", "--task", "t"],
          "server_env": {"PUSHBENCH_ROOT": "/checkout"}}
REAL = {"ANTHROPIC_API_KEY": "a-real-key", "OPENAI_BASE_URL": "http://example.invalid", "GEMINI_API_KEY": "real",
        "GOOGLE_API_KEY": "real", "OPENCODE_CONFIG": "/elsewhere.json", "CODEX_HOME": "/elsewhere"}


def values(tmp_path: Path, url: str = "") -> dict:
    return {"prompt": "the task", "cli": "/bin/product", "home": str(tmp_path / "home"), "model": "sim-base",
            "sim_url": "http://127.0.0.1:9", "mcp_url": url, **SERVER}


def rendered(name: str, tmp_path: Path, url: str = "") -> tuple[list[str], dict[str, str], dict[str, object]]:
    declaration = builtin()[name]
    env = products.base_env(tmp_path / "home", tuple(declaration.clear_env))
    argv, env = products.launch(declaration, values(tmp_path, url), tmp_path, env, "pushbench")
    files = {}
    for path in (tmp_path / "home").rglob("*"):
        if path.suffix == ".json":
            files[path.name] = json.loads(path.read_text())
        elif path.suffix == ".toml":
            files[path.name] = tomllib.loads(path.read_text())
    return argv, env, files


@pytest.mark.parametrize("name", sorted(builtin()))
def test_each_declaration_points_its_product_at_serve_sim_and_serve_mcp_only(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in REAL.items():
        monkeypatch.setenv(key, value)  # never handed to a product
    declaration = builtin()[name]
    assert declaration.install is not None and declaration.install.version  # pinned, installed by make agents
    argv, env, files = rendered(name, tmp_path)
    assert argv[0] == "/bin/product" and "the task" in argv
    assert env["HOME"] == str((tmp_path / "home").resolve()) and "127.0.0.1" in env["NO_PROXY"]
    for key, value in REAL.items():
        assert env.get(key) != value, key
    everything = json.dumps([argv, env, files])
    assert "http://127.0.0.1:9" in everything and "example.invalid" not in everything
    entries = [e for f in files.values() for e in _server_entries(f)]
    assert len(entries) == 1, files  # the MCP server, configured once, started as serve-mcp
    assert "serve-mcp" in json.dumps(entries[0]) and "/checkout" in json.dumps(entries[0])
    for tool in declaration.deny_tools:
        assert tool in everything


def _server_entries(config: object) -> list:
    if not isinstance(config, dict):
        return []
    for key in ("mcpServers", "mcp", "mcp_servers"):
        if isinstance(config.get(key), dict) and "pushbench" in config[key]:
            return [config[key]["pushbench"]]
    return []


def test_claude_code_and_codex_recipes(tmp_path: Path) -> None:
    argv, env, files = rendered("claude-code", tmp_path)
    assert argv[argv.index("--tools") + 1] == "" and "--strict-mcp-config" in argv
    assert argv[argv.index("--allowedTools") + 1].split(",") == [f"mcp__pushbench__{t}" for t in products.TASK_TOOLS]
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9" and env["ANTHROPIC_API_KEY"] == products.OFFLINE_KEY
    assert files["mcp.json"]["mcpServers"]["pushbench"] == {"type": "stdio", "command": "/py",
                                                           "args": SERVER["server_args"], "env": SERVER["server_env"]}
    argv, env, files = rendered("codex", tmp_path / "codex")
    cfg = files["config.toml"]
    provider = cfg["model_providers"][cfg["model_provider"]]
    assert provider["wire_api"] == "responses" and provider["base_url"] == "http://127.0.0.1:9/v1"
    mcp = cfg["mcp_servers"]["pushbench"]
    assert mcp["command"] == "/py" and mcp["args"] == SERVER["server_args"] and mcp["required"] is True
    assert cfg["features"]["shell_tool"] is False and cfg["web_search"] == "disabled"
    assert argv[-1] == "the task" and "read-only" in argv and env["CODEX_HOME"].endswith(".codex")


def test_opencode_and_gemini_recipes_over_both_transports(tmp_path: Path) -> None:
    _, env, files = rendered("opencode", tmp_path)
    cfg = files["opencode.json"]
    assert cfg["provider"]["pushbench-sim"]["options"]["baseURL"] == "http://127.0.0.1:9/v1"
    assert cfg["mcp"]["pushbench"]["command"] == SERVER["server_argv"] and cfg["tools"]["bash"] is False
    assert env["OPENCODE_CONFIG"].endswith("opencode.json") and env["npm_config_offline"] == "true"
    _, _, files = rendered("opencode", tmp_path / "http", url="http://127.0.0.1:7/mcp")
    assert files["opencode.json"]["mcp"]["pushbench"] == {"type": "remote", "url": "http://127.0.0.1:7/mcp",
                                                          "enabled": True, "timeout": 60000}
    argv, env, files = rendered("gemini-cli", tmp_path / "gemini")
    assert env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:9" and env["GEMINI_API_KEY"] == products.OFFLINE_KEY
    assert files["settings.json"]["mcpServers"]["pushbench"]["trust"] is True
    policy = files["pushbench-policy.toml"]["rule"][0]
    assert policy["decision"] == "deny" and "run_shell_command" in policy["toolName"]
    assert argv[argv.index("--policy") + 1].endswith("pushbench-policy.toml")


@pytest.mark.parametrize("name", sorted(builtin()))
def test_declared_tool_names_reach_simlms_mind_lookup_as_the_tasks(name: str) -> None:
    from agentkit import make_env

    schemas = make_env(TASK).schemas()
    prefix = builtin()[name].tool_prefix("pushbench")
    own = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]
    offered = own + [{"type": "function", "function": {**s["function"], "name": prefix + s["function"]["name"]}}
                     for s in schemas]
    expected = mind_name(schemas)
    for declared in ((prefix,), ()):  # as serve-sim is told the prefix, and as it infers it
        view = task_view(offered, declared)
        assert view is not None and view.prefix == prefix
        assert mind_name(view.tools) == expected
        assert sorted(view.product_names.values()) == sorted(prefix + s["function"]["name"] for s in schemas)


@pytest.mark.parametrize("change, message", [
    ({"command": ["{cli}", "{promt}"]}, "unknown placeholders promt"),
    ({"tool_names": "{tool}__{server}"}, "must end with {tool}"),
    ({"api": "grpc"}, "api"),
    ({"colour": "blue"}, "colour"),
    ({"mcp": {}}, "mcp"),
])
def test_a_malformed_declaration_is_one_clear_error(change: dict, message: str) -> None:
    data = {**builtin()["opencode"].model_dump(), **change}
    with pytest.raises(DeclarationError, match=message):
        parse(data, "mine.yaml")


def test_a_config_file_outside_the_episode_folder_is_refused(tmp_path: Path) -> None:
    data = builtin()["opencode"].model_dump()
    data["files"] = [{"path": "{home}/../../escape.json", "format": "json", "content": {}}]
    with pytest.raises(ValueError, match="outside the episode folder"):
        products.launch(parse(data, "mine.yaml"), values(tmp_path / "episode"), tmp_path / "episode", {}, "pushbench")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed")
    with pytest.raises(DeclarationError, match="no valid YAML"):
        load(bad)


def test_render_keeps_structure_for_exact_placeholders() -> None:
    got = render({"{server}": "{server_args}", "cmd": "{server_command} --x", "n": 3},
                 {"server": "s", "server_args": ["-a", "b"], "server_command": "/py"})
    assert got == {"s": ["-a", "b"], "cmd": "/py --x", "n": 3}


# --------------------------------------------------------------------------- episodes (need the data)

FIFTH = """\
name: tiny
description: a small MCP agent declared in a file (tests/helpers/tiny_agent.py)
binary: tiny-agent
api: chat-completions
tool_names: "{server}-{tool}"
deny_tools: []
command: ["{cli}", "--config", "{home}/tiny.yaml", "--base-url", "{sim_url}/v1", "--model", "{model}",
          "--prompt-file", "{prompt_file}", "--tool-prefix", "{server}-"]
files:
  - path: "{home}/tiny.yaml"
    format: yaml
    content: {servers: {"{server}": "{mcp_entry}"}}
mcp:
  stdio: {command: "{server_command}", args: "{server_args}", env: "{server_env}"}
"""


def _on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "tiny-agent"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {HELPERS / 'tiny_agent.py'} \"$@\"\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def _plan(agent: str) -> EpisodePlan:
    from pushbench.harness.mcp_server import ServerPaths, find_task

    if not _data_ready():
        pytest.skip("needs the RepoScan manifest and the requests snapshot (make test builds them)")
    return EpisodePlan(find_task(TASK, ServerPaths()), resolve_agent(agent), "default", 120)


def test_a_fifth_product_declared_in_a_file_runs_and_is_scored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _on_path(tmp_path, monkeypatch)
    monkeypatch.setenv("OPENAI_API_KEY", "a-real-key")
    declaration = tmp_path / "tiny.yaml"
    declaration.write_text(FIFTH)
    plan = _plan(f"{declaration}/sim-base")
    outcome = run_agent_episode(plan, tmp_path / "episode")
    folder = tmp_path / "episode"
    assert yaml.safe_load((folder / "home" / "tiny.yaml").read_text())["servers"]["pushbench"]["command"]
    row = outcome.row
    assert outcome.exit_code == 0, (folder / "agent.stderr").read_text()[-2000:]
    assert row["agent"] == "tiny" and row["memory"] == "tiny" and row["model"] == "sim/base"
    assert row["steps"] >= 3 and row["termination"] == "final" and row["llm_calls"] == row["steps"] + 1
    seen = json.loads((folder / "workdir" / "seen-env.json").read_text())
    assert seen["HOME"] == str((folder / "home").resolve()) and seen["provider"] == []
    stats = (folder / "serve-sim.stderr").read_text()
    assert "Traceback" not in stats


def test_the_generic_path_with_sim_gets_what_products_get(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from pushbench.cli import app

    if not _data_ready():
        pytest.skip("needs the RepoScan manifest and the requests snapshot (make test builds them)")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://example.invalid")
    monkeypatch.setenv("OPENAI_ORG_ID", "passed-on-purpose")
    command = (f"{{python}} {HELPERS / 'tiny_agent.py'} --config {{mcp_config}} --base-url {{sim_url}}/v1 "
               "--model {model} --prompt-file {prompt_file} --tool-prefix pushbench_")
    result = CliRunner().invoke(app, ["agent", "run", "--task", TASK, "--agent-cmd", command, "--agent-name", "tiny",
                                      "--with-sim", "--pass-env", "OPENAI_ORG_ID", "--timeout", "120",
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    row = json.loads(result.output.strip().splitlines()[-1])
    assert row["model"] == "sim/base" and row["memory"] == "tiny" and row["termination"] == "final"
    assert row["llm_calls"] == row["steps"] + 1 and row["input_tokens"] > 0
    folder = next((tmp_path / "out" / "episodes").iterdir())
    seen = json.loads((folder / "workdir" / "seen-env.json").read_text())
    assert seen["HOME"] == str((folder / "home").resolve()) and seen["provider"] == ["OPENAI_ORG_ID"]
    assert seen["PUSHBENCH_SIM_URL"].startswith("http://127.0.0.1:")
    refused = CliRunner().invoke(app, ["agent", "run", "--task", TASK, "--agent", "codex", "--with-sim",
                                       "--out", str(tmp_path / "x")])
    assert refused.exit_code == 1 and "--with-sim" in refused.output
