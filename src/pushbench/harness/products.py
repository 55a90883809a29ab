"""Real agent products run offline with SimLM as their model, each from its declaration.

``pushbench agent install`` (``make agents``) installs each declared product's pinned npm package
into ``.agents/<name>/``; nothing is installed at run time. Per episode the harness starts a local
``serve-sim`` (SimLM behind the chat-completions, Messages, Responses and Gemini APIs, told the
product's tool prefix), writes the product's config files from its declaration, and starts it
with a private HOME inside the episode folder and an environment without inherited provider
variables, so no user settings, credentials or sessions are read or written. What each product
needs (flags, config, denied tools) is in ``harness/agents/<name>.yaml``; the flags fit the
versions declared there (checked by running them here); other versions may need other flags.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pushbench import config
from pushbench.harness.declaration import Declaration, file_text, render
from pushbench.harness.processes import stop_group

AGENTS_DIR = config.ROOT / ".agents"  # `pushbench agent install` installs here (git-ignored)
OFFLINE_KEY = "sk-pushbench-offline-not-a-key"
TASK_TOOLS = ("search", "submit", "status", "final")
# inherited variables that could point an agent at a real service or real credentials
DROPPED_ENV = ("ANTHROPIC_", "OPENAI_", "CODEX_", "CLAUDE_", "OPENCODE_", "GEMINI_", "GOOGLE_", "VERTEX",
               "AWS_", "AZURE_", "OPENROUTER_", "MISTRAL_", "GROQ_", "DEEPSEEK_", "XAI_", "TOGETHER_", "COHERE_",
               "LITELLM_", "OLLAMA_", "HF_", "HUGGING")
LOCAL = "127.0.0.1,localhost"


def cli_path(declaration: Declaration, root: Path | None = None) -> Path:
    return (root or AGENTS_DIR) / declaration.name / "node_modules" / ".bin" / declaration.binary


def find_cli(declaration: Declaration, root: Path | None = None) -> Path:
    """The product's executable from ``pushbench agent install`` (``.agents/<name>/``), else PATH."""
    local = cli_path(declaration, root)
    if local.is_file():
        return local
    found = shutil.which(declaration.binary)
    if found:
        return Path(found)
    pin = f" (installs {declaration.install.npm}@{declaration.install.version} into .agents/{declaration.name}/)" \
        if declaration.install else ""
    raise ValueError(f"{declaration.binary!r} ({declaration.name}) is not installed: run `make agents`{pin}")


def base_env(home: Path, drop: tuple[str, ...] = (), keep: tuple[str, ...] = ()) -> dict[str, str]:
    """The inherited environment without provider variables (but ``keep``'s names), with a
    private HOME and local addresses exempt from any proxy."""
    dropped = DROPPED_ENV + tuple(drop)
    env = {k: v for k, v in os.environ.items() if k in keep or not k.startswith(dropped)}
    home.mkdir(parents=True, exist_ok=True)
    env.update({"HOME": str(home.resolve()), "XDG_CONFIG_HOME": str((home / ".config").resolve()),
                "XDG_CACHE_HOME": str((home / ".cache").resolve()),
                "XDG_DATA_HOME": str((home / ".local" / "share").resolve()),
                "XDG_STATE_HOME": str((home / ".local" / "state").resolve()), "NO_COLOR": "1",
                "DISABLE_TELEMETRY": "1", "DO_NOT_TRACK": "1"})
    for name in ("NO_PROXY", "no_proxy"):
        env[name] = ",".join(p for p in (env.get(name), LOCAL) if p)
    return env


def product_values(declaration: Declaration, server: str, values: dict[str, Any]) -> dict[str, Any]:
    """The declaration's own placeholders beside the episode's: tool names, denied tools and the
    MCP entry for the episode's transport."""
    prefix = declaration.tool_prefix(server)
    task_tools = [prefix + tool for tool in TASK_TOOLS]
    out = {**values, "server": server, "api_key": OFFLINE_KEY, "task_tools": task_tools,
           "task_tools_csv": ",".join(task_tools), "deny_tools": list(declaration.deny_tools),
           "deny_tools_csv": ",".join(declaration.deny_tools),
           "deny_tools_off": dict.fromkeys(declaration.deny_tools, False)}
    transport: Literal["stdio", "http"] = "http" if values.get("mcp_url") else "stdio"
    out["mcp_entry"] = render(declaration.mcp[transport], out)
    return out


def write_files(declaration: Declaration, values: dict[str, Any], folder: Path) -> None:
    """The product's config files, each inside the episode folder."""
    inside = folder.resolve()
    for spec in declaration.files:
        path = Path(render(spec.path, values)).resolve()
        if not path.is_relative_to(inside):
            raise ValueError(f"{declaration.name}: the file {spec.path!r} is outside the episode folder")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(file_text(render(spec.content, values), spec.format), encoding="utf-8")


def launch(declaration: Declaration, values: dict[str, Any], folder: Path, env: dict[str, str],
           server: str) -> tuple[list[str], dict[str, str]]:
    """The argv and environment of the product for this episode, its config files written."""
    filled = product_values(declaration, server, values)
    write_files(declaration, filled, folder)
    argv = [str(a) for a in render(declaration.command, filled)]
    return argv, {**env, **{k: str(v) for k, v in render(declaration.env, filled).items()}}


# --------------------------------------------------------------------------- installing

def install(declaration: Declaration, root: Path | None = None) -> str:
    """Install the pinned npm package into ``.agents/<name>/`` and return the version it reports."""
    if declaration.install is None:
        raise ValueError(f"{declaration.name} declares no npm package; install {declaration.binary!r} yourself")
    npm = shutil.which("npm")
    if npm is None:
        raise ValueError("installing the agent products needs npm (Node.js 20 or later)")
    prefix = (root or AGENTS_DIR) / declaration.name
    spec = f"{declaration.install.npm}@{declaration.install.version}"
    done = subprocess.run([npm, "install", "--prefix", str(prefix), "--no-save", "--no-package-lock", "--no-fund",
                           "--no-audit", "--loglevel=error", spec], capture_output=True, text=True)
    if done.returncode != 0:
        raise ValueError(f"npm could not install {spec}: {' '.join(done.stderr.split())[-300:]}")
    return installed_version(declaration, root)


def installed_version(declaration: Declaration, root: Path | None = None) -> str:
    """What the installed CLI says its version is; a ValueError if it is not the pinned one."""
    cli = find_cli(declaration, root)
    home = (root or AGENTS_DIR) / declaration.name / "home"  # no user settings read while asking
    try:
        done = subprocess.run([str(cli), *declaration.version_args], capture_output=True, text=True, timeout=120,
                              env=base_env(home), stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ValueError(f"{cli} {' '.join(declaration.version_args)} failed: {err}") from None
    said = (done.stdout or done.stderr).strip().splitlines()[0] if (done.stdout or done.stderr).strip() else ""
    if declaration.install and declaration.install.version not in said:
        raise ValueError(f"{cli} reports {said!r}, not the declared {declaration.install.version}")
    return said


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
        return {"llm_calls": int(stats.get("completions", 0)), "input_tokens": int(stats.get("input_tokens", 0)),
                "output_tokens": int(stats.get("output_tokens", 0))}


def start_sim(port: int, seed: int, folder: Path, timeout: float = 60,
              tool_prefixes: tuple[str, ...] = ()) -> SimProcess:
    """``serve-sim`` on 127.0.0.1:port in its own process group; waits until it answers."""
    argv = [sys.executable, "-m", "pushbench.cli", "serve-sim", "--host", "127.0.0.1", "--port", str(port),
            "--policy-seed", str(seed), *(a for p in tool_prefixes for a in ("--tool-prefix", p))]
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
