"""The MCP server's lean entry point: ``python -m pushbench.harness.mcp_main serve-mcp --task ID --log DIR``.

It takes the same options as ``pushbench serve-mcp`` and calls the same ``serve``, but without the
whole command line's imports (typer, rich, the viewer, pandas): the harness starts one server per
episode, and those imports cost more CPU than the server's own work on a short episode. A
regression test keeps this module's import path free of them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

COMMAND = "serve-mcp"  # kept in the argv: the harness recognises its servers by it


def _port(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not in 1..65535")
    return value


def parser() -> argparse.ArgumentParser:
    from pushbench import config

    cli = argparse.ArgumentParser(prog=f"python -m pushbench.harness.mcp_main {COMMAND}",
                                  description="An MCP server for one RepoScan task (as `pushbench serve-mcp`).")
    cli.add_argument("--task", required=True, help="RepoScan task id.")
    cli.add_argument("--log", required=True, type=Path, help="Folder for the verifier event log.")
    cli.add_argument("--http", type=_port, default=None, help="Serve streamable HTTP on 127.0.0.1:PORT.")
    cli.add_argument("--data-root", type=Path, default=config.DATA, help="Data root (manifests/, hidden/).")
    cli.add_argument("--snapshot-root", type=Path, default=config.SNAPSHOT_SRC, help="Extracted snapshot trees.")
    return cli


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] != COMMAND:
        print(f"usage: python -m pushbench.harness.mcp_main {COMMAND} --task ID --log DIR [...]", file=sys.stderr)
        return 2
    options = parser().parse_args(args[1:])
    from pushbench import config

    defaults = (config.DATA, config.SNAPSHOT_SRC)
    if config.FOUND is None and (options.data_root in defaults or options.snapshot_root in defaults):
        try:  # as every command: outside a checkout (and no explicit paths), say how to point at one
            config.require_root()
        except config.ProjectRootError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
    from pushbench.harness.mcp_server import ServerPaths, ServerSetupError, serve
    from pushbench.snapshots import SnapshotError

    try:
        serve(options.task, options.log, options.http, ServerPaths(options.data_root, options.snapshot_root))
    except (ServerSetupError, SnapshotError, OSError) as error:  # as `pushbench serve-mcp`: one line
        print(f"error: {' '.join(str(error).split())}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
