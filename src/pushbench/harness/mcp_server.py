"""An MCP server exposing one RepoScan task's tools (search, submit, status, final).

Every ``tools/call`` is handed, name and arguments untouched, to the same ``RepoScanEnv`` an
in-process episode uses, so the verifier judges and logs it exactly as it would there: unknown
tools, wrong types, oversize arguments and hostile ids become error observations that count as
invalid actions and cost a step, and after the budget (or ``final``) every call is refused.
Hidden answers stay inside the verifier; the agent only ever sees observation text.

The verifier's event log is written as JSONL to ``LOG/events.jsonl``, one line per event, flushed
as it happens (a killed server loses nothing it logged); ``LOG/task.json`` holds the task's
agent-visible id, target and budget for scoring.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import mcp_types as types
from mcp.server.mcpserver import MCPServer

from pushbench import config
from pushbench.harness.mcp_stdio import serve_stdio
from pushbench.tasks import get_family, load_tasks
from pushbench.tasks.base import TaskSpec
from pushbench.tools.base import Environment, ToolCall

EVENTS_FILE = "events.jsonl"
TASK_FILE = "task.json"
PID_FILE = "server.pid"  # present while a server process serves this log folder
SERVER_NAME = "pushbench"
META_DONE = "pushbench/done"  # _meta keys on each result: episode over, steps used
META_STEPS = "pushbench/steps"
log = logging.getLogger(__name__)


class ServerSetupError(Exception):
    """The server cannot start (unknown task, used log folder, missing data)."""


@dataclass(frozen=True)
class ServerPaths:
    """Where the task data lives: manifests and hidden answers under ``data``; snapshot trees."""

    data: Path = config.DATA
    snapshots: Path = config.SNAPSHOT_SRC


def find_task(task_id: str, paths: ServerPaths) -> TaskSpec:
    tasks = {t.task_id: t for t in load_tasks("reposcan", paths.data / "manifests")}
    if task_id not in tasks:
        raise ServerSetupError(f"no RepoScan task {task_id[:100]!r} in {paths.data / 'manifests'}")
    return tasks[task_id]


class EventLog:
    """The verifier's sink: one JSON line per event, flushed immediately."""

    def __init__(self, folder: Path, task: TaskSpec):
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / EVENTS_FILE
        if path.exists() and path.stat().st_size:
            raise ServerSetupError(f"{path} already holds an episode; give each server a fresh --log folder")
        info = {"task_id": task.task_id, "family": task.family, "target": task.target, "budget": task.budget}
        (folder / TASK_FILE).write_text(json.dumps(info, sort_keys=True) + "\n", encoding="utf-8")
        self.path = path
        self._handle: IO[str] = open(path, "w", encoding="utf-8")

    def __call__(self, record: dict[str, Any]) -> None:
        self._handle.write(json.dumps(record, sort_keys=True, default=str) + "\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()


class QGPServer(MCPServer):
    """MCPServer whose tool list and calls come from a PushBench environment.

    The listed input schemas are the environment's own JSON schemas (the ones an in-process
    policy receives); calls bypass the SDK's signature-based validation on purpose, so that a
    malformed call reaches the environment and is logged as an invalid action, as in-process.
    """

    def __init__(self, env: Environment):
        super().__init__(SERVER_NAME, instructions="The tools of one PushBench RepoScan task.", log_level="WARNING")
        self.env = env

    async def run_stdio_async(self) -> None:
        # The SDK's own stdio transport writes no reply to an unparsable line (harness/mcp_stdio.py);
        # MCPServer has no public accessor for its low-level server, hence the private attribute.
        await serve_stdio(self._lowlevel_server)

    async def list_tools(self) -> list[types.Tool]:
        return [types.Tool(name=s["function"]["name"], description=s["function"]["description"],
                           input_schema=s["function"]["parameters"]) for s in self.env.schemas()]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> types.CallToolResult:
        # Synchronous on purpose: calls are applied one at a time, in arrival order.
        try:
            obs = self.env.execute(ToolCall(str(name), arguments if arguments is not None else {}))
        except Exception:  # a bug must not take the episode's server down with it
            log.exception("tool %r crashed", str(name)[:100])
            return _result("ERROR: internal error while executing the tool.", False, self.env)
        return _result(obs.text, obs.ok, self.env)


def _result(text: str, ok: bool, env: Environment) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=not ok,
                                _meta={META_DONE: env.done, META_STEPS: env.steps})


def build_server(task_id: str, log_dir: Path, paths: ServerPaths | None = None) -> tuple[QGPServer, EventLog]:
    paths = paths or ServerPaths()
    task = find_task(task_id, paths)
    if task.family != "reposcan":
        raise ServerSetupError(f"task {task_id!r} is not a RepoScan task")
    sink = EventLog(log_dir, task)
    try:
        env = get_family("reposcan").environment(task, snapshot_root=paths.snapshots,
                                                 hidden_root=paths.data / "hidden", sink=sink)
    except Exception:
        sink.close()
        raise
    return QGPServer(env), sink


def serve(task_id: str, log_dir: Path, http_port: int | None = None, paths: ServerPaths | None = None) -> None:
    """Serve until the client disconnects (stdio) or the process is stopped (HTTP)."""
    server, sink = build_server(task_id, log_dir, paths)
    pid_file = log_dir / PID_FILE
    pid_file.write_text(f"{os.getpid()}\n", encoding="utf-8")
    try:
        if http_port is None:
            server.run("stdio")
        else:
            print(f"pushbench MCP server on http://127.0.0.1:{http_port}/mcp", file=sys.stderr, flush=True)
            server.run("streamable-http", host="127.0.0.1", port=http_port)
    finally:
        sink.close()
        pid_file.unlink(missing_ok=True)
