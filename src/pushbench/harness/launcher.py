"""Launch one external agent episode against the PushBench MCP server.

Per episode the harness writes, into its own folder: ``mcp.json`` (an ``mcpServers`` config that
points at ``pushbench serve-mcp`` for the task), ``prompt.txt``, the server's ``server/``
log folder, the agent's stdout/stderr and an empty ``workdir/`` used as the agent's cwd. The
agent command is a template: placeholders (table in docs/blackbox.md) are substituted per argument
after shell-style splitting, and the same values are exported as ``PUSHBENCH_*`` variables.
The agent runs in its own process group; at the time limit the whole group is terminated.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pushbench import config
from pushbench.harness import declaration as declarations
from pushbench.harness import products
from pushbench.harness.declaration import Declaration
from pushbench.harness.processes import GRACE_SECONDS, stop_group
from pushbench.harness.prompts import render_prompt
from pushbench.harness.zygote import ENTRY_POINTS
from pushbench.harness.scoring import close_log, read_usage, score
from pushbench.runner import EpisodeSpec
from pushbench.tasks.base import TaskSpec
from pushbench.verifier import hidden_path

SERVER_KEY = "pushbench"
STANDIN_PREFIX = "standin-"
DEFAULT_SIM_MODEL = "sim-base"
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class AgentSpec:
    """An agent: its name (rows' ``agent``), command template and the ``model`` its rows report."""

    name: str
    command: str
    model: str
    product: str | None = None  # a declared agent product (harness/agents/*.yaml or a file), driven by serve-sim
    sim_model: str | None = None  # the serve-sim model it talks to (sim-base, ...); None: no serve-sim
    declaration: Declaration | None = field(default=None, compare=False)  # the product's, by its name
    pass_env: tuple[str, ...] = ()  # inherited variables passed through although provider variables are dropped

    @property
    def memory(self) -> str:
        # An agent driven by serve-sim keeps its own context (its compaction), so it is the row's
        # memory; this also keeps claude-code/sim-base and standin-sim-base episodes apart.
        return self.name if self.sim_model else "agent"


def sim_model_name(text: str | None, who: str) -> tuple[str, str]:
    """(serve-sim model, the rows' model ``sim/<profile>``) for ``sim-<profile>`` (default sim-base)."""
    from pushbench.serve.app import MODELS as SIM_MODELS  # FastAPI: only for agents behind serve-sim

    name = text or DEFAULT_SIM_MODEL
    if name not in SIM_MODELS:
        raise ValueError(f"unknown model {name!r} for {who}; serve-sim has {', '.join(SIM_MODELS)}")
    return name, "sim/" + SIM_MODELS[name]


def resolve_agent(text: str) -> AgentSpec:
    """``standin-sim-<profile>``, a declared product (a built-in name such as ``claude-code``, or
    a declaration file ``path.yaml``; optionally ``/sim-<profile>``, default sim-base) or
    ``NAME=COMMAND``."""
    name, sep, command = text.partition("=")
    name = name.strip()
    if sep:
        if not name or not command.strip():
            raise ValueError(f"custom agent {text!r} must look like NAME=COMMAND")
        return AgentSpec(name, command.strip(), name)
    if name.startswith(STANDIN_PREFIX + "sim-") and len(name) > len(STANDIN_PREFIX) + 4:
        model = "sim/" + name[len(STANDIN_PREFIX) + 4:]
        return AgentSpec(name, f"{{python}} -m pushbench.harness.standin --model {model}", model)
    product, sim = name, None
    if "/" in name and name.rsplit("/", 1)[1].startswith("sim-"):
        product, sim = name.rsplit("/", 1)
    declared = declarations.find(product)
    if declared is None:
        raise ValueError(f"unknown agent {text!r}: use standin-sim-<profile>, {', '.join(declarations.builtin())} "
                         "or a declaration file (.yaml) (optionally /sim-<profile>), or NAME=COMMAND")
    sim_model, model = sim_model_name(sim, declared.name)
    return AgentSpec(declared.name, "", model, declared.name, sim_model, declared)


@dataclass(frozen=True)
class EpisodePlan:
    task: TaskSpec
    agent: AgentSpec
    prompt: str  # the variant: default or checklist
    timeout: float
    seed: int = 0
    transport: str = "stdio"
    data_root: Path = config.DATA
    snapshot_root: Path = config.SNAPSHOT_SRC
    zygote: Path | None = None  # a running fork server's folder (harness/zygote.py): start-up once

    @property
    def spec(self) -> EpisodeSpec:
        return EpisodeSpec("reposcan", self.task.task_id, self.prompt, self.agent.memory, self.agent.model,
                           "blackbox", self.seed)


def server_argv(plan: EpisodePlan, log_dir: Path, port: int | None = None) -> list[str]:
    # the lean entry point of `pushbench serve-mcp` (same options): one server starts per episode
    argv = [sys.executable, "-m", "pushbench.harness.mcp_main", "serve-mcp", "--task", plan.task.task_id,
            "--log", str(log_dir.resolve()), "--data-root", str(Path(plan.data_root).resolve()),
            "--snapshot-root", str(Path(plan.snapshot_root).resolve())]
    return via_zygote(plan, argv + (["--http", str(port)] if port is not None else []))


def via_zygote(plan: EpisodePlan, argv: list[str]) -> list[str]:
    """With a fork server, a command that runs one of its entry points under this interpreter
    goes through its launcher: the same process, forked instead of started from scratch."""
    if plan.zygote is None or len(argv) < 3 or argv[:2] != [sys.executable, "-m"] or argv[2] not in ENTRY_POINTS:
        return argv
    return [sys.executable, "-m", "pushbench.harness.zygote", "run", str(plan.zygote), *argv[2:]]


def mcp_config(plan: EpisodePlan, log_dir: Path, url: str | None) -> dict[str, Any]:
    if url is not None:
        return {"mcpServers": {SERVER_KEY: {"type": "http", "url": url}}}
    argv = server_argv(plan, log_dir)
    return {"mcpServers": {SERVER_KEY: {"type": "stdio", "command": argv[0], "args": argv[1:], "env": server_env()}}}


def server_env() -> dict[str, str]:
    """What a stdio server needs from the environment an agent starts it with: products start it
    with a minimal one, in the agent's working folder (outside the checkout), so it gets the
    package path and the project root (its search-index cache is the project's data/tmp/)."""
    env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
    if config.FOUND is not None:
        env["PUSHBENCH_ROOT"] = str(config.FOUND)
    return env


def substitute(template: str, values: dict[str, str]) -> list[str]:
    """Split the template like a shell would, then fill known placeholders inside each argument."""
    try:
        tokens = shlex.split(template)
    except ValueError as err:
        raise ValueError(f"cannot split the agent command: {err}") from None
    if not tokens:
        raise ValueError("the agent command is empty")
    return [_PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), token) for token in tokens]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the MCP server exited with code {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"the MCP server did not listen on port {port} within {timeout:.0f} s")


def reap_server(log_dir: Path, wait: float = 5.0) -> None:
    """Wait for a stdio server the agent started to exit (it sees EOF when the agent dies), so the
    log is complete before scoring; stop it if it lingers. The pid is checked against the server's
    command line so that a recycled pid is never signalled."""
    try:
        pid = int((log_dir / "server.pid").read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return
    deadline = time.monotonic() + wait
    for sig in (signal.SIGTERM, signal.SIGKILL):
        while _is_our_server(pid, log_dir) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not _is_our_server(pid, log_dir):
            return
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + GRACE_SECONDS


def _is_our_server(pid: int, log_dir: Path) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z" and b"serve-mcp" in cmdline and str(log_dir.resolve()).encode() in cmdline


def run_process(argv: list[str], env: dict[str, str], cwd: Path, timeout: float,
                folder: Path) -> tuple[int | None, bool]:
    """Run the agent in a new process group; returns (exit code, timed out)."""
    with open(folder / "agent.stdout", "wb") as out, open(folder / "agent.stderr", "wb") as err:
        try:
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=err, start_new_session=True)
        except OSError as exc:
            err.write(f"cannot start the agent: {exc}\n".encode())
            return None, False
        try:
            proc.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
        stop_group(proc)  # at the limit, or leftovers of an agent that exited
        proc.wait()
    return proc.returncode, timed_out


def _toml_array(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def placeholder_values(plan: EpisodePlan, folder: Path, prompt: str, url: str | None,
                       sim_url: str | None = None) -> dict[str, Any]:
    argv = server_argv(plan, folder / "server")
    values: dict[str, Any] = {
        "prompt": prompt, "prompt_file": str((folder / "prompt.txt").resolve()),
        "mcp_config": str((folder / "mcp.json").resolve()), "mcp_url": url or "", "python": sys.executable,
        "task": plan.task.task_id, "seed": str(plan.spec.policy_seed(int(config.params("seed")))),
        "server_command_toml": json.dumps(argv[0]), "server_args_toml": _toml_array(argv[1:]),
        "home": str((folder / "home").resolve()), "workdir": str((folder / "workdir").resolve()),
        "server_command": argv[0], "server_args": argv[1:], "server_argv": argv, "server_env": server_env(),
        "model": plan.agent.sim_model or "", "sim_url": sim_url or ""}
    if plan.agent.declaration is not None:
        values["cli"] = str(products.find_cli(plan.agent.declaration))
    return values


def agent_env(plan: EpisodePlan, values: dict[str, Any], folder: Path) -> dict[str, str]:
    """A private HOME, no inherited provider variables (but ``--pass-env``'s), and the episode's
    ``PUSHBENCH_*`` values."""
    drop = tuple(plan.agent.declaration.clear_env) if plan.agent.declaration else ()
    env = products.base_env(folder / "home", drop, plan.agent.pass_env)
    env.update({"PUSHBENCH_PROMPT": values["prompt"], "PUSHBENCH_MCP_CONFIG": values["mcp_config"],
                "PUSHBENCH_MCP_URL": values["mcp_url"], "PUSHBENCH_TASK": values["task"],
                "PUSHBENCH_SEED": values["seed"], "PUSHBENCH_SIM_URL": values["sim_url"],
                "PUSHBENCH_MODEL": values["model"],
                "PUSHBENCH_AGENT_REPORT": str((folder / "report.json").resolve())})
    return env


def agent_launch(plan: EpisodePlan, folder: Path, values: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The agent's argv and environment: from its declaration, else its command template."""
    env = agent_env(plan, values, folder)
    if plan.agent.declaration is not None:
        return products.launch(plan.agent.declaration, values, folder, env, SERVER_KEY)
    text = {k: v if isinstance(v, str) else json.dumps(v) for k, v in values.items()}
    return via_zygote(plan, substitute(plan.agent.command, text)), env


@dataclass
class EpisodeOutcome:
    row: dict[str, Any]
    events: list[dict[str, Any]]
    exit_code: int | None
    timed_out: bool
    wall_seconds: float


def preflight(plan: EpisodePlan) -> None:
    """Fail before launching anything when the server could not start for this task."""
    if plan.transport not in ("stdio", "http"):
        raise ValueError(f"unknown transport {plan.transport!r}; use stdio or http")
    declared = plan.agent.declaration
    if declared is not None:
        products.find_cli(declared)  # installed by `make agents`, never here
        if plan.transport not in declared.transports:
            raise ValueError(f"{declared.name} declares MCP entries for {', '.join(declared.transports)} only; "
                             f"use --transport {declared.transports[0]}")
    if plan.task.repo is None or not (Path(plan.snapshot_root) / plan.task.repo).is_dir():
        raise ValueError(f"snapshot {plan.task.repo!r} is not extracted under {plan.snapshot_root}")
    if not hidden_path("reposcan", plan.task.task_id, Path(plan.data_root) / "hidden").is_file():
        raise ValueError(f"no hidden answers for {plan.task.task_id}; build the manifests first")


def _prefixes(plan: EpisodePlan) -> tuple[str, ...]:
    declared = plan.agent.declaration
    return (declared.tool_prefix(SERVER_KEY),) if declared is not None else ()


def run_agent_episode(plan: EpisodePlan, folder: Path) -> EpisodeOutcome:
    """Prepare the folder, run the agent (and, over HTTP, the server; with a model, serve-sim),
    score from the log."""
    preflight(plan)
    started = time.perf_counter()
    (folder / "workdir").mkdir(parents=True, exist_ok=True)
    log_dir = folder / "server"
    prompt = render_prompt(plan.task, plan.prompt)
    (folder / "prompt.txt").write_text(prompt + "\n", encoding="utf-8")
    server, url, sim = None, None, None
    if plan.transport == "http":
        port = free_port()
        with open(folder / "server.stderr", "wb") as err:
            server = subprocess.Popen(server_argv(plan, log_dir, port), stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        url = f"http://127.0.0.1:{port}/mcp"
    try:
        if server is not None:
            wait_for_port(port, server, timeout=60)
        (folder / "mcp.json").write_text(json.dumps(mcp_config(plan, log_dir, url), indent=1) + "\n",
                                         encoding="utf-8")
        seed = int(plan.spec.policy_seed(int(config.params("seed"))))
        if plan.agent.sim_model:
            sim = products.start_sim(free_port(), seed, folder, tool_prefixes=_prefixes(plan))
        argv, env = agent_launch(plan, folder, placeholder_values(plan, folder, prompt, url, sim.url if sim else None))
        code, timed_out = run_process(argv, env, folder / "workdir", plan.timeout, folder)
        if server is None:
            reap_server(log_dir)
    finally:
        if sim is not None:
            (folder / "report.json").write_text(json.dumps(sim.usage(), sort_keys=True) + "\n", encoding="utf-8")
            stop_group(sim.proc)
            sim.proc.wait()
        if server is not None:
            stop_group(server)
            server.wait()
    reason = "timeout" if timed_out else ("give_up" if code == 0 else "agent_error")
    events = close_log(log_dir / "events.jsonl", plan.task.target, reason)
    row = score(plan.spec, plan.task, events, plan.agent.name, read_usage(folder / "report.json"))
    return EpisodeOutcome(row, events, code, timed_out, round(time.perf_counter() - started, 3))
