"""The ``pushbench`` command line (entry point ``pushbench.cli:app``; ``python -m pushbench.cli``).

Layout: ``base`` (one-line errors, ``--debug``, the project-root check), ``tables`` (rich /
Markdown / CSV output), and one module per group of commands: ``run`` (run, score, summarize,
experiment, aggregate, notebook), ``estimate``, ``spend`` (caps, checks and usage of a run), ``data`` (snapshots, manifests, tools, show-task), ``serve``
(serve-sim); ``memory`` (memory recall); ``agent`` (serve-mcp, agent run|grid|deltas: the black-box path). A new
option is a parameter of its command's function; a new command is a function plus one line below.
"""

from __future__ import annotations

import typer
from rich.console import Console

from pushbench.cli.base import CleanGroup, UserError, debug_option
from pushbench.cli.data import manifests_app, show_task, snapshots_app, tools_app
from pushbench.cli.estimate import estimate_cmd
from pushbench.cli.run import aggregate_cmd, experiment, notebook_cmd, run, score_cmd, summarize_cmd
from pushbench.cli.serve import serve_sim
from pushbench.cli.agent import agent_app, serve_mcp
from pushbench.cli.memory import memory_app
from pushbench.cli.fork import fork
from pushbench.cli.view import view

app = typer.Typer(cls=CleanGroup, add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="PushBench: quantitative goal persistence. Errors are one line; --debug shows the traceback.")
app.callback()(debug_option)
app.add_typer(snapshots_app, name="snapshots")
app.add_typer(manifests_app, name="manifests")
app.add_typer(tools_app, name="tools")
app.command("run")(run)
app.command("score")(score_cmd)
app.command("summarize")(summarize_cmd)
app.command("experiment")(experiment)
app.command("estimate")(estimate_cmd)
app.command("aggregate")(aggregate_cmd)
app.command("notebook")(notebook_cmd)
app.command("show-task")(show_task)
app.command("serve-sim")(serve_sim)
app.command("serve-mcp")(serve_mcp)
app.add_typer(agent_app, name="agent")
app.add_typer(memory_app, name="memory")
app.command("view")(view)
app.command("fork")(fork)
console = Console()

__all__ = ["UserError", "app", "console"]
