"""The real agent products, Claude Code and Codex CLI, run offline with SimLM as their model.

``make agents`` installs the pinned CLIs from the npm registry into ``.agents/``; nothing is
installed at run time. Per episode the harness starts a local ``serve-sim`` (SimLM behind the
Anthropic Messages and OpenAI Responses APIs), points the product at it and at ``serve-mcp``,
and gives it a private HOME (and CODEX_HOME) inside the episode folder, so no user settings,
credentials or sessions are read or written. The products' own file and shell tools are off,
telemetry, update checks and other non-essential traffic too. The flags fit the versions in
``PRODUCTS`` (checked by running them here); other versions may need other flags.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pushbench import config
from pushbench.harness.processes import stop_group

AGENTS_DIR = config.ROOT / ".agents"  # `make agents` installs here (git-ignored)
OFFLINE_KEY = "sk-pushbench-offline-not-a-key"
SERVER_KEY = "pushbench"
TASK_TOOLS = ("search", "submit", "status", "final")
# Claude Code's built-in tools, denied as well as left out (--tools ""), in case one is added back
CLAUDE_BUILTINS = "Bash,Read,Edit,Write,Glob,Grep,WebFetch,WebSearch,Task,NotebookEdit,TodoWrite"
# Codex features that bring tools other than the MCP server's (its shell, sub-agents, apps, ...)
CODEX_FEATURES_OFF = ("shell_tool", "unified_exec", "shell_snapshot", "multi_agent", "goals", "apps", "plugins",
                      "image_generation", "browser_use", "computer_use", "view_image", "tool_suggest",
                      "skill_mcp_dependency_install", "in_app_updates", "remote_plugin", "memories")
# inherited variables that could point a product at a real service or real credentials
DROPPED_ENV = ("ANTHROPIC_", "OPENAI_", "CODEX_", "CLAUDE_", "AWS_", "GOOGLE_", "AZURE_")


@dataclass(frozen=True)
class Product:
    name: str
    binary: str
    package: str
    version: str


PRODUCTS = {
    "claude-code": Product("claude-code", "claude", "@anthropic-ai/claude-code", "2.1.328"),
    "codex": Product("codex", "codex", "@openai/codex", "0.169.0"),
}


def find_cli(product: Product, root: Path = AGENTS_DIR) -> Path:
    """The product's CLI from ``make agents`` (``.agents/``), else from PATH."""
    local = root / "node_modules" / ".bin" / product.binary
    if local.is_file():
        return local
    found = shutil.which(product.binary)
    if found:
        return Path(found)
    raise ValueError(f"{product.binary!r} ({product.package}) is not installed: run `make agents` "
                     f"(installs {product.package}@{product.version} into .agents/)")


def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(DROPPED_ENV)}
    home.mkdir(parents=True, exist_ok=True)
    env.update({"HOME": str(home.resolve()), "XDG_CONFIG_HOME": str((home / ".config").resolve()),
                "XDG_CACHE_HOME": str((home / ".cache").resolve()), "NO_COLOR": "1",
                "DISABLE_TELEMETRY": "1", "DO_NOT_TRACK": "1"})
    return env


def claude_launch(cli: Path, prompt: str, mcp_json: Path, model: str, sim_url: str,
                  home: Path) -> tuple[list[str], dict[str, str]]:
    tools = ",".join(f"mcp__{SERVER_KEY}__{t}" for t in TASK_TOOLS)
    argv = [str(cli), "-p", prompt, "--tools", "", "--mcp-config", str(mcp_json.resolve()),
            "--strict-mcp-config", "--allowedTools", tools, "--disallowedTools", CLAUDE_BUILTINS,
            "--model", model, "--no-session-persistence", "--output-format", "json"]
    env = base_env(home)
    env.update({"ANTHROPIC_BASE_URL": sim_url, "ANTHROPIC_API_KEY": OFFLINE_KEY,
                "CLAUDE_CONFIG_DIR": str((home / ".claude").resolve()),
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
                "DISABLE_ERROR_REPORTING": "1", "DISABLE_BUG_COMMAND": "1",
                "MCP_TIMEOUT": "60000"})  # the MCP server loads the task's code index first
    return argv, env


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in sorted(value.items())) + " }"
    return json.dumps(value)


def codex_config(model: str, sim_url: str, server: dict[str, Any]) -> str:
    """Codex's config.toml: the serve-sim provider (Responses API), the MCP server, tools off."""
    lines = [f"model = {_toml(model)}", 'model_provider = "pushbench-sim"', 'approval_policy = "never"',
             'sandbox_mode = "read-only"', 'web_search = "disabled"', "check_for_update_on_startup = false",
             "", "[analytics]", "enabled = false", "", "[features]",
             *(f"{name} = false" for name in CODEX_FEATURES_OFF), "",
             "[model_providers.pushbench-sim]", 'name = "serve-sim (SimLM, not a real model)"',
             f"base_url = {_toml(sim_url + '/v1')}", 'wire_api = "responses"', "", f"[mcp_servers.{SERVER_KEY}]",
             f"command = {_toml(server['command'])}", f"args = {_toml(server['args'])}",
             f"env = {_toml(server.get('env') or {})}",
             "required = true",  # without it Codex 0.169 sends its first request before the tools are listed
             "startup_timeout_sec = 60", "tool_timeout_sec = 120",
             'default_tools_approval_mode = "approve"']  # MCP calls otherwise need an approval exec cannot give
    return "\n".join(lines) + "\n"


def codex_launch(cli: Path, prompt: str, server: dict[str, Any], model: str, sim_url: str,
                 home: Path) -> tuple[list[str], dict[str, str]]:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(codex_config(model, sim_url, server), encoding="utf-8")
    argv = [str(cli), "exec", "--skip-git-repo-check", "--ephemeral", "--ignore-rules", "--color", "never",
            "--sandbox", "read-only", "--json", prompt]
    env = base_env(home)
    env["CODEX_HOME"] = str(codex_home.resolve())
    return argv, env


# --------------------------------------------------------------------------- serve-sim per episode

@dataclass
class SimProcess:
    proc: subprocess.Popen
    url: str

    def usage(self) -> dict[str, int]:
        """LLM calls and tokens serve-sim answered in this episode (for the row)."""
        import httpx  # lazily: the stand-in grid never needs it

        try:
            stats = httpx.get(self.url + "/sim/stats", timeout=10).json()
        except (httpx.HTTPError, ValueError):
            return {}
        calls = int(stats.get("messages", 0)) + int(stats.get("responses", 0))
        return {"llm_calls": calls, "input_tokens": int(stats.get("input_tokens", 0)),
                "output_tokens": int(stats.get("output_tokens", 0))}


def start_sim(port: int, seed: int, folder: Path, timeout: float = 60) -> SimProcess:
    """``serve-sim`` on 127.0.0.1:port in its own process group; waits until it answers."""
    argv = [sys.executable, "-m", "pushbench.cli", "serve-sim", "--host", "127.0.0.1", "--port", str(port),
            "--policy-seed", str(seed)]
    with open(folder / "serve-sim.stderr", "wb") as err:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                start_new_session=True)
    import httpx

    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(url + "/v1/models", timeout=2).status_code == 200:
                return SimProcess(proc, url)
        except httpx.HTTPError:
            time.sleep(0.1)
    stop_group(proc)
    proc.wait()
    raise RuntimeError(f"serve-sim did not answer on port {port} within {timeout:.0f} s "
                       f"(see {folder / 'serve-sim.stderr'})")
