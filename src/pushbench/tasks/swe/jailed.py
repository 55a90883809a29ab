"""How a workspace's tests run in the bubblewrap jail: binds, environment, bytecode and the fork server.

``runs`` (the ``Workspace`` and ``run_tests``) calls these; its module note says what each run may
see. The jail's paths: the copy at ``IN_REPO`` (writable, the cwd), the home folder at ``IN_HOME``,
the snapshot's read-only bytecode at ``IN_BYTECODE`` and the pinned pytest at ``IN_PYTEST``. A run is
a child forked from the workspace's server (``sandbox.forkserver``) when one is running, else a
fresh jail; both see the same files, environment and limits.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import threading
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Protocol

from pushbench import config
from pushbench.sandbox import JAIL, SANDBOX_VERSION, Bind, Limits, SandboxResult, clean_env, run_jailed
from pushbench.sandbox.jail import interpreter



class Workspace(Protocol):
    """What these functions read of a ``runs.Workspace``."""

    repo: str
    pristine: Path  # the snapshot's folder (trusted)
    runner: Path | None  # the pinned pytest's import root, or None for pytest itself
    root: Path  # the copy (agent-edited)
    home: Path
    bytecode: Path
    reports: Path  # the verdict reports' folder (bound writable; emptied after each run)

    def fork_server(self): ...

TEST_ROOTS = ("tests/", "testing/")  # reset to the snapshot before every check, like test config
WARM_LIMITS = Limits(cpu_seconds=300, wall_seconds=300.0, memory_bytes=1024**3)  # trusted: the whole suite collected
_WARMING = threading.Lock()
WARM_SCRIPT = ("import compileall, subprocess, sys\n"
               "for folder in sys.argv[2:]:\n"
               "    compileall.compile_dir(folder, quiet=2)\n"
               "subprocess.call([sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '--collect-only', '-q',"
               " *sys.argv[1].split(',')])\n")
IN_REPO, IN_HOME, IN_BYTECODE, IN_PYTEST = (f"{JAIL}/repo", f"{JAIL}/home", f"{JAIL}/bytecode",
                                            f"{JAIL}/pytest-runner")
IN_PLUGIN, IN_REPORTS = f"{JAIL}/verdict-plugin", f"{JAIL}/verdict"  # the verdict's plugin (read-only), its reports
PLUGIN_DIR = Path(__file__).with_name("plugin")  # pushbench_verdict.py: trusted, stdlib and pytest only
REPORT_ENV = "PUSHBENCH_VERDICT_REPORT"  # the plugin takes the report's name from here and removes it



def warm_bytecode(ws: Workspace) -> Path:
    """The read-only bytecode folder of ``ws``'s snapshot, filled once (see the module note)."""
    key = json.dumps([SANDBOX_VERSION, sys.version, str(ws.pristine.resolve()), str(ws.runner),
                      _stat_print(ws.pristine), _stat_print(ws.runner)])  # a re-extracted snapshot: new folder
    shared = ws.pristine.parent.resolve() == config.SNAPSHOT_SRC.resolve()
    # another snapshot root (a test's, a miner's) keeps its bytecode beside it, removed with it
    top = config.DATA / "tmp" / "swe-bytecode" if shared else ws.pristine.parent / ".pushbench-bytecode"
    folder = top / f"{ws.repo}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    with _WARMING:
        if folder.is_dir():
            return folder
        folder.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
        try:
            (scratch / "cache").mkdir()
            (scratch / "home").mkdir()
            roots = [r.rstrip("/") for r in TEST_ROOTS if (ws.pristine / r).is_dir()]
            binds = [Bind(ws.pristine, IN_REPO), Bind(scratch / "cache", IN_BYTECODE, writable=True),
                     Bind(scratch / "home", IN_HOME, writable=True)]
            folders = [f"{IN_REPO}/src"]
            if ws.runner is not None and ws.runner.is_dir():
                binds.append(Bind(ws.runner, IN_PYTEST))
                folders.append(IN_PYTEST)
            env = jail_env(ws)
            python, _ = interpreter()
            run_jailed([python, "-c", WARM_SCRIPT, ",".join(roots) or ".", *folders], binds, IN_REPO, env,
                       WARM_LIMITS)
            os.rename(scratch / "cache", folder)
        except OSError:
            if not folder.is_dir():
                raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return folder


def _stat_print(root: Path | None) -> str:
    """A digest of (path, size, mtime) of the Python files under ``root``: what bytecode depends on."""
    if root is None or not root.is_dir():
        return ""
    rows = sorted((p.relative_to(root).as_posix(), p.stat().st_size, p.stat().st_mtime_ns)
                  for p in root.rglob("*.py") if p.is_file() and not p.is_symlink())
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()


def jail_env(ws: Workspace) -> dict[str, str]:
    pythonpath = [Path(IN_REPO) / "src"]
    if ws.runner is not None and ws.runner.is_dir():
        pythonpath.append(Path(IN_PYTEST))
    pythonpath.append(Path(IN_PLUGIN))
    return clean_env(Path(IN_HOME), pythonpath, {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
                     bytecode_cache=Path(IN_BYTECODE))


def run_jailed_tests(ws: Workspace, nodeids: list[str], limits: Limits, report: str) -> SandboxResult:
    """The run; ``report`` is the verdict report's file name in the workspace's report folder."""
    python, _ = interpreter()
    env = {**jail_env(ws), REPORT_ENV: f"{IN_REPORTS}/{report}"}
    server = ws.fork_server()
    if server is not None:
        argv = pytest_argv(nodeids, python)[3:]  # after "python -m pytest"
        result = server.run("pytest", argv, IN_REPO, env, pythonpath(ws), limits)
        if result is not None:
            return result
    return run_jailed(pytest_argv(nodeids, python), run_binds(ws), IN_REPO, env, limits)


def run_binds(ws: Workspace) -> list[Bind]:
    """The copy writable, but its tests, conftest files and test configuration read-only (bound over
    it), so nothing a run imports can rewrite a test before it is collected."""
    binds = [Bind(ws.root, IN_REPO, writable=True), Bind(ws.home, IN_HOME, writable=True),
             Bind(ws.bytecode, IN_BYTECODE), Bind(PLUGIN_DIR, IN_PLUGIN), Bind(ws.reports, IN_REPORTS, writable=True)]
    binds += [Bind(ws.root / rel, f"{IN_REPO}/{rel}") for rel in read_only_test_paths(ws.root)]
    if ws.runner is not None and ws.runner.is_dir():
        binds.append(Bind(ws.runner, IN_PYTEST))
    return binds


def read_only_test_paths(root: Path) -> list[str]:
    """The test folders and every conftest file outside them, relative to ``root``."""
    folders = [r.rstrip("/") for r in TEST_ROOTS if (root / r).is_dir()]
    # (the root's test configuration is read before any code of the copy runs, and put back after every run)
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("conftest.py") if p.is_file() and not p.is_symlink())
    return folders + [f for f in files if not any(f.startswith(folder + "/") for folder in folders)]


def pythonpath(ws: Workspace) -> list[str]:
    return jail_env(ws)["PYTHONPATH"].split(os.pathsep)


def server_env(ws: Workspace) -> dict[str, str]:
    """The fork server's environment: a run's, but only trusted code (the runner) on PYTHONPATH."""
    env = jail_env(ws)
    trusted = [p for p in pythonpath(ws) if p in (IN_PYTEST, IN_PLUGIN)]
    env.pop("PYTHONPATH")
    if trusted:
        env["PYTHONPATH"] = os.pathsep.join(trusted)
    return env


def preload(ws: Workspace) -> str:
    """What the server imports before forking: every module a pristine run's start imports from
    outside the copy (the runner, the standard library, the library's venv dependencies such as
    werkzeug or urllib3), in the order they were first imported; never one of the copy's own."""
    own = {p.name.removesuffix(".py") for p in (ws.pristine / "src").iterdir()}
    return json.dumps([m for m in _trusted_imports(ws.pristine, ws.runner, ws.bytecode)
                       if m.split(".")[0] not in own])


PROBE_SCRIPT = """import json, os, sys
import pytest
for name in sys.argv[1:]:
    __import__(name)
inside = os.environ["PUSHBENCH_PROBE_REPO"] + "/"
shown = []
for name, module in list(sys.modules.items()):
    where = getattr(module, "__file__", None)
    if name != "__main__" and (where is not None or not hasattr(module, "__path__")) \
            and not (where or "").startswith(inside):
        shown.append(name)
print(json.dumps(shown))
"""


@lru_cache(maxsize=8)
def _trusted_imports(pristine: Path, runner: Path | None, bytecode: Path) -> tuple[str, ...]:
    """The modules ``import pytest`` and the library's own packages load from outside the repository,
    probed once per process in a jail over the pristine snapshot (trusted code only)."""
    python, _ = interpreter()
    binds = [Bind(pristine, IN_REPO), Bind(bytecode, IN_BYTECODE)]
    paths = [Path(IN_REPO) / "src"]
    if runner is not None and runner.is_dir():
        binds.append(Bind(runner, IN_PYTEST))
        paths.append(Path(IN_PYTEST))
    env = clean_env(Path("/tmp"), paths, {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PUSHBENCH_PROBE_REPO": IN_REPO},
                    bytecode_cache=Path(IN_BYTECODE))
    packages = sorted(p.name.removesuffix(".py") for p in (pristine / "src").iterdir()
                      if p.suffix == ".py" or (p / "__init__.py").is_file())
    result = run_jailed([python, "-c", PROBE_SCRIPT, *packages], binds, "/", env, WARM_LIMITS)
    try:
        return tuple(json.loads(result.output.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return ()


def pytest_argv(nodeids: Iterable[str], python: str = sys.executable) -> list[str]:
    return [python, "-m", "pytest", "-p", "no:cacheprovider", "-p", "pushbench_verdict", "-q", "--tb=short", "-rA",
            "--color=no", *nodeids]
