"""``serve-sim``: SimLM behind an OpenAI-compatible endpoint (``serve-mcp`` is in ``agent``)."""

from __future__ import annotations

from typing import Optional

import typer

from pushbench.cli.base import UserError


def serve_sim(host: str = typer.Option("127.0.0.1", help="Address to listen on."),
              port: int = typer.Option(8000, min=1, max=65535, help="Port to listen on."),
              fault_rate: float = typer.Option(0.0, help="Fraction of attempts answered with a transport fault "
                                               "(429 with Retry-After, 500, or a stall), mixed."),
              malformed_rate: float = typer.Option(0.0, help="Fraction of requests answered with broken tool-call JSON."),
              fault_delay: float = typer.Option(5.0, help="Seconds a stall fault holds the request."),
              retry_after: float = typer.Option(1.0, help="Seconds a 429 asks the client to wait."),
              seed: int = typer.Option(0, help="Seed of the fault draws."),
              policy_seed: int = typer.Option(0, min=0, help="SimLM's request seed for agent products "
                                              "(/v1/messages, /v1/responses send none)."),
              tool_prefix: Optional[list[str]] = typer.Option(
                  None, help="An agent product's prefix for the task's MCP tools (e.g. mcp__pushbench__, "
                  "pushbench_); repeatable. Default: every prefix ending in _ is tried."),
              log_level: str = typer.Option("warning", help="uvicorn log level.")) -> None:
    """Serve SimLM as /v1/chat/completions, /v1/responses (OpenAI), /v1/messages (Anthropic) and
    /v1beta/models/<model>:generateContent (Gemini) (models sim-mini, sim-base, ...)."""
    from pushbench.serve.app import ServeConfig, serve

    try:
        settings = ServeConfig(fault_rate, malformed_rate, fault_delay, retry_after, seed, policy_seed,
                               tuple(tool_prefix or ()))
    except ValueError as err:
        raise UserError(str(err)) from None
    levels = ("critical", "error", "warning", "info", "debug", "trace")
    if log_level.lower() not in levels:
        raise UserError(f"unknown --log-level {log_level!r}; choose one of {', '.join(levels)}")
    typer.echo(f"serve-sim: SimLM (a simulator, not a real model) on http://{host}:{port}/v1", err=True)
    serve(host, port, settings, log_level.lower())
