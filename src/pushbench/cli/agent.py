"""CLI commands of the black-box path: ``serve-mcp`` and ``agent run|grid|deltas`` (heavy imports lazy)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from pushbench import config
from pushbench.cli.base import UserError, need_root, one_line, split
from pushbench.cli.tables import FORMAT_OPTION, TableFormat, print_table
from pushbench.log.names import EPISODES

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
    from pushbench.harness.mcp_server import ServerPaths, ServerSetupError, serve
    from pushbench.snapshots import SnapshotError

    _need_root(data_root, snapshot_root)
    try:
        serve(task, log, http, ServerPaths(data_root, snapshot_root))
    except (ServerSetupError, SnapshotError, FileNotFoundError) as error:
        raise UserError(str(error)) from None


def _need_root(*paths: Path) -> None:
    """The project root is needed unless every data path was given explicitly."""
    if any(Path(p) in (config.DATA, config.SNAPSHOT_SRC) for p in paths):
        need_root()


def _agent(agent: str, agent_cmd: Optional[str], agent_name: Optional[str], with_sim: bool = False,
           sim_model: Optional[str] = None, pass_env: Optional[str] = None):
    from dataclasses import replace

    from pushbench.harness.launcher import AgentSpec, resolve_agent, sim_model_name

    keep = tuple(split(pass_env))
    if agent_cmd:
        name = agent_name or "custom"
        if with_sim or sim_model:  # a serve-sim per episode, as the declared products get
            served, model = sim_model_name(sim_model, name)
            return AgentSpec(name, agent_cmd, model, sim_model=served, pass_env=keep)
        return AgentSpec(name, agent_cmd, name, pass_env=keep)
    if with_sim or sim_model:
        raise ValueError("--with-sim and --sim-model go with --agent-cmd (a declared product takes "
                         "NAME/sim-<profile>)")
    return replace(resolve_agent(agent), pass_env=keep)


WITH_SIM = typer.Option(False, "--with-sim", help="With --agent-cmd: start a serve-sim (SimLM) per episode, "
                        "seeded like the episode; its URL is {sim_url} / $PUSHBENCH_SIM_URL, its usage the row's.")
SIM_MODEL = typer.Option(None, help="The serve-sim model for --with-sim (default sim-base).")
PASS_ENV = typer.Option(None, help="Comma-separated variables to pass to the agent although provider "
                        "variables (ANTHROPIC_*, OPENAI_*, GEMINI_*, GOOGLE_*, ...) are dropped.")


@agent_app.command("run")
def agent_run(task: str = typer.Option(..., help="RepoScan task id."),
              agent_cmd: Optional[str] = typer.Option(None, help="Agent command template ({prompt}, {mcp_config}, …)."),
              agent_name: Optional[str] = typer.Option(None, help="Name for --agent-cmd rows (model column)."),
              agent: str = typer.Option("standin-sim-base", help="Known agent when no --agent-cmd: "
                                        "standin-sim-<profile>, a declared product (claude-code, codex, opencode, "
                                        "gemini-cli, or a declaration file .yaml), optionally /sim-<profile>."),
              with_sim: bool = WITH_SIM, sim_model: Optional[str] = SIM_MODEL, pass_env: Optional[str] = PASS_ENV,
              prompt: str = typer.Option("default", help="default or checklist."),
              timeout: float = typer.Option(900.0, min=0.1, help="Wall-clock limit in seconds."),
              transport: str = typer.Option("stdio", help="stdio (agent starts the server) or http."),
              seed: int = typer.Option(0, min=0, help="Seed index (rows' seed)."),
              out: Path = typer.Option(..., help="Output folder (episodes.jsonl, episodes/, traces/)."),
              data_root: Path = DATA_ROOT, snapshot_root: Path = SNAPSHOT_ROOT) -> None:
    """Run one agent episode against the MCP server and score it from the verifier log."""
    from pushbench.harness.grid import run_plans
    from pushbench.harness.launcher import EpisodePlan, preflight
    from pushbench.harness.mcp_server import ServerPaths, ServerSetupError, find_task

    _need_root(data_root, snapshot_root)
    try:
        spec = find_task(task, ServerPaths(data_root, snapshot_root))
        plan = EpisodePlan(spec, _agent(agent, agent_cmd, agent_name, with_sim, sim_model, pass_env), prompt,
                           timeout, seed, transport, data_root, snapshot_root)
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
               agents: str = typer.Option("standin-sim-base", help="Comma-separated agents (as --agent of "
                                          "`agent run`, or NAME=COMMAND); `products` is every declared product."),
               prompts: str = typer.Option("default,checklist", help="Comma-separated prompts."),
               seeds: int = typer.Option(1, min=1, help="Seeds per task and condition."),
               timeout: float = typer.Option(900.0, min=0.1, help="Per-episode wall-clock limit (s)."),
               transport: str = typer.Option("stdio", help="stdio or http."),
               workers: int = typer.Option(1, min=1, help="Episodes run at once."),
               out: Path = typer.Option(..., help="Output folder."),
               pass_env: Optional[str] = PASS_ENV, data_root: Path = DATA_ROOT, snapshot_root: Path = SNAPSHOT_ROOT,
               fmt: TableFormat = FORMAT_OPTION) -> None:
    """The black-box grid: tasks × agents × prompts; writes episodes.jsonl and deltas.json."""
    from pushbench.harness.grid import grid_plans, grid_tasks, run_plans
    from pushbench.harness.launcher import EpisodePlan, preflight

    _need_root(data_root, snapshot_root)
    try:
        numbers = [int(t) for t in split(targets)]
    except ValueError:
        raise UserError(f"--targets takes whole numbers separated by commas (e.g. 50,100); got {targets!r}") from None
    try:
        chosen = grid_tasks(numbers, tasks, data_root / "manifests")
        base = EpisodePlan(chosen[0], _agent("standin-sim-base", None, None), "default", timeout, 0, transport,
                           data_root, snapshot_root)
        _check_plan(base)
        plans = grid_plans(chosen, [_agent(a, None, None, pass_env=pass_env) for a in _agent_names(agents)],
                           split(prompts), seeds, base)
        for plan in plans:
            preflight(plan)
        path = run_plans(plans, out, workers)
    except (ValueError, RuntimeError, FileNotFoundError) as error:
        raise UserError(str(error)) from None
    _report_deltas(path, out / "deltas.json", fmt)


def _agent_names(text: str) -> list[str]:
    from pushbench.harness.declaration import builtin

    names = split(text)
    return [n for name in names for n in (list(builtin()) if name == "products" else [name])]


@agent_app.command("install")
def agent_install(names: Optional[str] = typer.Argument(None, help="Comma-separated products (default: every "
                                                                  "declared one)."),
                  declaration: Optional[Path] = typer.Option(None, help="Install this declaration file's product.")) -> None:
    """Install the declared agent products' pinned npm packages into .agents/ (what `make agents` runs)."""
    from pushbench.harness import products
    from pushbench.harness.declaration import DeclarationError, builtin, load

    need_root()  # installs into the checkout's .agents/
    try:
        known = {d.name: d for d in ([load(declaration)] if declaration else builtin().values())}
    except DeclarationError as error:
        raise UserError(str(error)) from None
    chosen = split(names) or list(known)
    if unknown := [n for n in chosen if n not in known]:
        raise UserError(f"unknown products {', '.join(unknown)}; declared: {', '.join(known)}")
    failed = []
    for name in chosen:
        try:
            typer.echo(f"{name}: {products.install(known[name])}")
        except ValueError as error:
            failed.append(name)
            typer.echo(f"{name}: not installed: {error}", err=True)
    if failed:
        raise UserError(f"not installed: {', '.join(failed)} (their tests are skipped; the others can run)")


@agent_app.command("list")
def agent_list(fmt: TableFormat = FORMAT_OPTION) -> None:
    """The declared agent products: package, wire API, tool names, and what is installed."""
    import pandas as pd

    from pushbench.harness import products
    from pushbench.harness.declaration import builtin

    need_root()
    rows = []
    for d in builtin().values():
        try:
            installed = products.installed_version(d)
        except ValueError as error:
            installed = f"no: {one_line(error)[:80]}"
        rows.append({"product": d.name, "package": f"{d.install.npm}@{d.install.version}" if d.install else "",
                     "api": d.api, "tool names": d.tool_names, "transports": ",".join(d.transports),
                     "installed": installed})
    print_table(pd.DataFrame(rows), fmt)


@agent_app.command("deltas")
def agent_deltas(run: Path = typer.Argument(..., help="A grid folder or its episodes.jsonl."),
                 fmt: TableFormat = FORMAT_OPTION) -> None:
    """Paired checklist-minus-default success deltas per agent and N (Table 7)."""
    folder = run if run.is_dir() else run.parent
    _report_deltas(folder / EPISODES if run.is_dir() else run, folder / "deltas.json", fmt)


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
