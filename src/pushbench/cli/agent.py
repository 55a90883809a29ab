"""CLI commands of the black-box path: ``serve-mcp`` and ``agent run|grid|deltas`` (heavy imports lazy)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from pushbench import config
from pushbench.cli.base import UserError, need_root, split
from pushbench.cli.tables import FORMAT_OPTION, TableFormat, print_table

agent_app = typer.Typer(no_args_is_help=True, help="Black-box agents (any MCP-capable agent CLI).")
show = Console()

DATA_ROOT = typer.Option(config.DATA, "--data-root", help="Data root holding manifests/ and hidden/.")
SNAPSHOT_ROOT = typer.Option(config.SNAPSHOT_SRC, "--snapshot-root", help="Extracted snapshot trees.")


def serve_mcp(task: str = typer.Option(..., help="RepoScan task id."),
              log: Path = typer.Option(..., help="Folder for the verifier event log (events.jsonl)."),
              http: Optional[int] = typer.Option(None, min=1, max=65535,
                                                 help="Serve streamable HTTP on 127.0.0.1:PORT (default: stdio)."),
              data_root: Path = DATA_ROOT, snapshot_root: Path = SNAPSHOT_ROOT) -> None:
    """An MCP server for one RepoScan task: search, submit, status, final (answers stay in the verifier)."""
    from pushbench.mcp_server import ServerPaths, ServerSetupError, serve
    from pushbench.snapshots import SnapshotError

    try:
        serve(task, log, http, ServerPaths(data_root, snapshot_root))
    except (ServerSetupError, SnapshotError, FileNotFoundError) as error:
        raise UserError(str(error)) from None


def _need_root(*paths: Path) -> None:
    """The project root is needed unless every data path was given explicitly."""
    if any(Path(p) in (config.DATA, config.SNAPSHOT_SRC) for p in paths):
        need_root()


def _agent(agent: str, agent_cmd: Optional[str], agent_name: Optional[str]):
    from pushbench.harness.launcher import AgentSpec, resolve_agent

    if agent_cmd:
        name = agent_name or "custom"
        return AgentSpec(name, agent_cmd, name)
    return resolve_agent(agent)


@agent_app.command("run")
def agent_run(task: str = typer.Option(..., help="RepoScan task id."),
              agent_cmd: Optional[str] = typer.Option(None, help="Agent command template ({prompt}, {mcp_config}, …)."),
              agent_name: Optional[str] = typer.Option(None, help="Name for --agent-cmd rows (model column)."),
              agent: str = typer.Option("standin-sim-base", help="Known agent when no --agent-cmd: "
                                        "standin-sim-<profile>, claude-code, codex."),
              prompt: str = typer.Option("default", help="default or checklist."),
              timeout: float = typer.Option(900.0, min=0.1, help="Wall-clock limit in seconds."),
              transport: str = typer.Option("stdio", help="stdio (agent starts the server) or http."),
              seed: int = typer.Option(0, min=0, help="Seed index (rows' seed)."),
              out: Path = typer.Option(..., help="Output folder (episodes.jsonl, episodes/, traces/)."),
              data_root: Path = DATA_ROOT, snapshot_root: Path = SNAPSHOT_ROOT) -> None:
    """Run one agent episode against the MCP server and score it from the verifier log."""
    from pushbench.harness.grid import run_plans
    from pushbench.harness.launcher import EpisodePlan, preflight
    from pushbench.mcp_server import ServerPaths, ServerSetupError, find_task

    _need_root(data_root, snapshot_root)
    try:
        spec = find_task(task, ServerPaths(data_root, snapshot_root))
        plan = EpisodePlan(spec, _agent(agent, agent_cmd, agent_name), prompt, timeout, seed, transport,
                           data_root, snapshot_root)
        _check_plan(plan)
        preflight(plan)
        path = run_plans([plan], out)
    except (ValueError, RuntimeError, ServerSetupError, FileNotFoundError) as error:
        raise UserError(str(error)) from None
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    row = next(r for r in rows if r["episode_id"] == plan.spec.episode_id)
    typer.echo(json.dumps(row, sort_keys=True))


def _check_plan(plan) -> None:
    from pushbench.harness.prompts import PROMPTS

    if plan.prompt not in PROMPTS:
        raise ValueError(f"unknown prompt {plan.prompt!r}; choose one of {', '.join(PROMPTS)}")


@agent_app.command("grid")
def agent_grid(targets: str = typer.Option("50,100", help="Target counts N."),
               tasks: int = typer.Option(18, help="Tasks in all, split evenly over the targets."),
               agents: str = typer.Option("standin-sim-base", help="Comma-separated agents."),
               prompts: str = typer.Option("default,checklist", help="Comma-separated prompts."),
               seeds: int = typer.Option(1, min=1, help="Seeds per task and condition."),
               timeout: float = typer.Option(900.0, min=0.1, help="Per-episode wall-clock limit (s)."),
               transport: str = typer.Option("stdio", help="stdio or http."),
               workers: int = typer.Option(1, min=1, help="Episodes run at once."),
               out: Path = typer.Option(..., help="Output folder."),
               data_root: Path = DATA_ROOT, snapshot_root: Path = SNAPSHOT_ROOT,
               fmt: TableFormat = FORMAT_OPTION) -> None:
    """The black-box grid: tasks × agents × prompts; writes episodes.jsonl and deltas.json."""
    from pushbench.harness.grid import grid_plans, grid_tasks, run_plans
    from pushbench.harness.launcher import EpisodePlan, preflight, resolve_agent

    _need_root(data_root, snapshot_root)
    try:
        numbers = [int(t) for t in split(targets)]
    except ValueError:
        raise UserError(f"--targets takes whole numbers separated by commas (e.g. 50,100); got {targets!r}") from None
    try:
        chosen = grid_tasks(numbers, tasks, data_root / "manifests")
        base = EpisodePlan(chosen[0], resolve_agent("standin-sim-base"), "default", timeout, 0, transport,
                           data_root, snapshot_root)
        _check_plan(base)
        plans = grid_plans(chosen, [resolve_agent(a) for a in split(agents)], split(prompts), seeds, base)
        for plan in plans:
            preflight(plan)
        path = run_plans(plans, out, workers)
    except (ValueError, RuntimeError, FileNotFoundError) as error:
        raise UserError(str(error)) from None
    _report_deltas(path, out / "deltas.json", fmt)


@agent_app.command("deltas")
def agent_deltas(run: Path = typer.Argument(..., help="A grid folder or its episodes.jsonl."),
                 fmt: TableFormat = FORMAT_OPTION) -> None:
    """Paired checklist-minus-default success deltas per agent and N (Table 7)."""
    folder = run if run.is_dir() else run.parent
    _report_deltas(folder / "episodes.jsonl" if run.is_dir() else run, folder / "deltas.json", fmt)


def _report_deltas(path: Path, dest: Path, fmt: TableFormat = TableFormat.auto) -> None:
    from pushbench.harness.grid import checklist_deltas
    from pushbench.scoring import load_episodes

    try:
        table = checklist_deltas(load_episodes(path))
    except (ValueError, KeyError, FileNotFoundError) as error:
        raise UserError(f"cannot compute deltas: {error}") from None
    records = table.to_dict(orient="records")
    dest.write_text(json.dumps(records, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    print_table(table, fmt)
    show.print("(stand-in rows come from SimLM, not from a real model)", style="dim")
