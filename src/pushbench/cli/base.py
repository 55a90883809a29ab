"""What every command shares: one-line errors, the ``--debug`` switch and the project-root check.

``CleanGroup`` is the root command's class. It runs the command line without click's standalone
handling and turns whatever escapes into one line on stderr and a non-zero exit: a usage error
(bad option, bad value) exits 2, a user error (``UserError``, an unknown name, a bad grid, a
locked run folder, a missing file, no project root) exits 1, and anything else — a bug — exits 1
with its type named and a hint to rerun with ``--debug``, which shows the traceback instead.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Sequence

import typer
from typer.core import TyperGroup

from pushbench import config

DEBUG_FLAG = "--debug"
DEBUG_ENV = "PUSHBENCH_DEBUG"  # "1": as --debug
MAX_MESSAGE = 600


class UserError(typer.TyperException):
    """A mistake of the user: the message says what was wrong and what is allowed (exit code 1)."""


def one_line(text: object) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= MAX_MESSAGE else line[: MAX_MESSAGE - 1] + "…"


def _user_errors() -> tuple[type[BaseException], ...]:
    from pushbench.registry import UnknownName
    from pushbench.runner.checks import GridError
    from pushbench.runner.lock import RunLocked
    from pushbench.sandbox.jail import JailUnavailable

    return (config.ProjectRootError, UnknownName, GridError, RunLocked, JailUnavailable, FileNotFoundError, NotADirectoryError,
            IsADirectoryError, PermissionError, FileExistsError)


def _debugging(args: Sequence[str]) -> bool:
    head = list(args)[: list(args).index("--")] if "--" in args else list(args)
    return DEBUG_FLAG in head or os.environ.get(DEBUG_ENV) == "1"


def _say(message: str) -> None:
    typer.echo(f"error: {one_line(message)}", err=True)


class CleanGroup(TyperGroup):
    """The root group: errors become one line (see the module docstring)."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,  # type: ignore[override]
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        code = self._run(argv, prog_name, complete_var, **extra)
        if standalone_mode:
            sys.exit(code)
        return code

    def _run(self, argv: list[str], prog_name: str | None, complete_var: str | None, **extra: Any) -> int:
        debug = _debugging(argv)
        try:
            result = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
            return result if isinstance(result, int) else 0
        except typer.TyperException as err:  # typer's (vendored) click errors and UserError
            return self._typer_error(err, debug)
        except typer.Abort:
            _say("aborted")
            return 1
        except KeyboardInterrupt:
            _say("interrupted")
            return 130
        except Exception as err:  # noqa: BLE001 — the whole point: no traceback unless --debug
            if debug:
                raise
            if isinstance(err, _user_errors()):
                _say(str(err) or type(err).__name__)
            else:
                _say(f"unexpected {type(err).__name__}: {err} (a bug; rerun with {DEBUG_FLAG} for the traceback)")
            return 1


    @staticmethod
    def _typer_error(err: typer.TyperException, debug: bool) -> int:
        ctx = getattr(err, "ctx", None)
        if type(err).__name__ == "NoArgsIsHelpError":  # a group named without a command: its help
            help_text = ctx.get_help() if ctx is not None else ""
            if help_text:
                typer.echo(help_text)
            return 2
        code = int(getattr(err, "exit_code", 1))
        if debug and code != 2:
            raise err
        hint = f" (see `{ctx.command_path} --help`)" if code == 2 and ctx is not None else ""  # a usage error
        _say(err.format_message() + hint)
        return code


def debug_option(debug: bool = typer.Option(False, DEBUG_FLAG, help="Show the full traceback of an error.")) -> None:
    """The root callback: ``--debug`` itself is read by ``CleanGroup`` before parsing."""


def need_root() -> None:
    """Commands that read the project's params, manifests or snapshots call this first."""
    config.require_root()


def split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def targets(value: str | None) -> list[int] | None:
    """``--target 10,25`` as numbers (None: every target)."""
    if not value:
        return None
    try:
        return [int(t) for t in split(value)]
    except ValueError:
        raise UserError(f"--target takes whole numbers separated by commas (e.g. 10,25); got {value!r}") from None


def experiment_name(name: str) -> None:
    """A key under ``experiments`` in params.yaml, else a ``UserError`` listing them."""
    from pushbench.runner.experiment import experiment_names

    if name not in experiment_names():
        raise UserError(f"no experiment {name!r} in params.yaml; experiments: {', '.join(experiment_names())}")
