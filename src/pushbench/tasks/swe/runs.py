"""SWE-lite workspaces and test runs: a per-episode copy of a snapshot, and its targeted tests.

A ``Workspace`` is a temporary folder ``<tmp>/repo`` (the copy the agent works in) plus
``<tmp>/home`` (HOME and TMPDIR of test processes). Only the tools change the copy: it records
every file they wrote, and after each test run it undoes whatever the test process wrote, created
or removed there (a faulty library can make a test open a data file for writing). So the *state*
of the copy is exactly the set of tool-written files that differ from the pristine snapshot.

``run_tests`` runs ``python -m pytest -p no:cacheprovider -q --tb=short -rA <node ids>`` in the
sandbox (``pushbench.sandbox``): cwd = the copy, ``PYTHONPATH=<copy>/src`` (plus, for flask and
requests, the pinned pytest 8.3.3 snapshot as the runner: the venv's newer pytest cannot run
flask 3.0.3's conftest), plugin autoloading off. Output is made stable and path-free (timings,
temp paths, object addresses removed) before anyone sees it.

Runs are cached on disk by (repo, node ids, the exact content of every file that differs from the
snapshot, Python version): the same tree and command give the same outcome, so a rerun of the
same state is looked up instead of executed. ``PUSHBENCH_SWE_TEST_CACHE=off`` disables it.

Compiled bytecode goes to one shared folder outside every copy (``bytecode_dir()``, via
``PYTHONPYCACHEPREFIX``), so the interpreter's own modules and the pinned pytest runner are
compiled once, not on every run; a workspace's share of it is removed with the workspace. Python
trusts a ``.pyc`` while the source's mtime (whole seconds) and size match, so every tool write
gives the file a new, unique mtime: an edit can never be shadowed by bytecode of an earlier edit.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import weakref
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from pushbench import config
from pushbench.sandbox import Limits, clean_env, resolve_inside, run_sandboxed

CACHE_VERSION = 4  # 2: test runs cannot change the copy; 3: random temp names removed from output; 4: 1 GiB limit
SHOWN_CHARS = 3_000  # an agent sees at most this much of a test run's output
COPIED = ("src", "tests", "testing", "pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "PKG-INFO")
TEST_LIMITS = Limits(cpu_seconds=120, wall_seconds=120.0, memory_bytes=1024**3)  # a faulty loop dies at 1 GiB
_OUTCOME = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS) (\S.*?)(?: - .*)?$")
_TIMING = re.compile(r" in \d+(?:\.\d+)?s(?: \(\d+:\d+:\d+\))?")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{4,}\b")
_TEMPNAME = re.compile(r"\btmp[a-z0-9_]{8}\b")  # tempfile.mkdtemp/mkstemp's random names
EDIT_EPOCH = 100_000_000  # mtimes of tool-written files count up from here (1973: no sdist file has it)


@dataclass(frozen=True)
class CheckRun:
    passed: bool
    outcomes: dict[str, str]  # node id -> PASSED / FAILED / ERROR / XFAIL / XPASS
    output: str  # sanitized full output
    returncode: int | None
    cached: bool = False

    def shown(self, limit: int = SHOWN_CHARS) -> str:
        """What an agent sees: the head (first failures) and the tail (the summary)."""
        text = self.output.strip()
        if len(text) <= limit:
            return text
        head, tail = text[: limit * 2 // 3], text[-(limit // 3):]
        return f"{head}\n[... {len(text) - len(head) - len(tail)} characters cut ...]\n{tail}"


class Workspace:
    """A private copy of one snapshot; removed by ``close()`` (or when collected, or at exit)."""

    def __init__(self, repo: str, snapshot_root: Path | None = None):
        self.repo = repo
        self.pristine = (snapshot_root or config.SNAPSHOT_SRC) / repo
        if not self.pristine.is_dir():
            raise FileNotFoundError(f"snapshot {repo!r} is not extracted at {self.pristine}")
        self.base = Path(tempfile.mkdtemp(prefix=f"pushbench-swe-{repo}-"))
        self.root = self.base / "repo"
        self.home = self.base / "home"
        self.root.mkdir()
        for name in COPIED:
            source = self.pristine / name
            if source.is_dir():
                shutil.copytree(source, self.root / name, symlinks=True)
            elif source.is_file():
                shutil.copy2(source, self.root / name)
        self.written: dict[str, str] = {}  # every file the tools wrote, with its current text
        self._writes = 0
        # removed on close(), on garbage collection or at interpreter exit, whichever comes first
        self._finalizer = weakref.finalize(self, _remove, self.base)
        self._stamps = self._scan()

    def _scan(self) -> dict[str, tuple[int, int]]:
        """(size, mtime) of every file in the copy: what a test run may not change."""
        stamps = {}
        for path in self.root.rglob("*"):
            if path.is_file() and not path.is_symlink():
                st = path.stat()
                stamps[path.relative_to(self.root).as_posix()] = (st.st_size, st.st_mtime_ns)
        return stamps

    def restore(self) -> list[str]:
        """Undo whatever a test process changed in the copy (files written, created or removed);
        only the tools change the workspace. Returns the paths it had to restore."""
        now = self._scan()
        changed = sorted(p for p in set(now) | set(self._stamps) if now.get(p) != self._stamps.get(p))
        for rel in changed:
            target = self.root / rel
            if rel not in self._stamps:
                target.unlink(missing_ok=True)
            elif rel in self.written:
                target.parent.mkdir(parents=True, exist_ok=True)
                self._put(target, self.written[rel])
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(self.pristine / rel, target)
        if changed:
            self._stamps = self._scan()
        return changed

    def path(self, relative: str) -> Path:
        return resolve_inside(self.root, relative)

    def read(self, relative: str) -> str:
        return self.path(relative).read_text(encoding="utf-8")

    def write(self, relative: str, text: str) -> None:
        target = self.path(relative)
        if not target.is_file():
            raise FileNotFoundError(f"{relative} is not a file of the workspace")
        self._put(target, text)
        rel = target.relative_to(self.root.resolve()).as_posix()
        self.written[rel] = text
        st = target.stat()
        self._stamps[rel] = (st.st_size, st.st_mtime_ns)

    def _put(self, target: Path, text: str) -> None:
        """Write with a new whole-second mtime, unique in this workspace (see the module note)."""
        target.write_text(text, encoding="utf-8")
        self._writes += 1
        stamp = (EDIT_EPOCH + self._writes) * 10**9
        os.utime(target, ns=(stamp, stamp))

    def diff_state(self) -> list[tuple[str, str]]:
        """(path, sha256) of every file that now differs from the pristine snapshot."""
        state = []
        for relative in sorted(self.written):
            current = self.written[relative].encode("utf-8")
            original = self.pristine / relative
            if not original.is_file() or original.read_bytes() != current:
                state.append((relative, hashlib.sha256(current).hexdigest()))
        return state

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def close(self) -> None:
        self._finalizer()


def _remove(base: Path) -> None:
    """Delete a workspace and its share of the bytecode folder (mirrored under its absolute path)."""
    shutil.rmtree(base, ignore_errors=True)
    shutil.rmtree(bytecode_dir() / base.relative_to(base.anchor), ignore_errors=True)


def bytecode_dir() -> Path:
    return config.DATA / "tmp" / "swe-bytecode"


def runner_path(repo: str, snapshot_root: Path | None = None) -> list[Path]:
    """Extra import roots for the test runner: the pinned pytest, except for pytest itself."""
    if repo == "pytest":
        return []
    return [(snapshot_root or config.SNAPSHOT_SRC) / "pytest" / "src"]


def pytest_argv(nodeids: Iterable[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--tb=short", "-rA",
            "--color=no", *nodeids]


def run_tests(ws: Workspace, nodeids: list[str], cache: Path | None | str = "default",
              limits: Limits = TEST_LIMITS) -> CheckRun:
    """Run the node ids in the workspace (sandboxed); cached by exact tree state."""
    folder = cache_dir() if cache == "default" else (Path(cache) if cache else None)
    key = _cache_key(ws, nodeids)
    if folder is not None:
        hit = folder / f"{key}.json"
        if hit.is_file():
            try:
                return CheckRun(**{**json.loads(hit.read_text(encoding="utf-8")), "cached": True})
            except (json.JSONDecodeError, TypeError):
                pass  # a damaged entry is recomputed
    result = _execute(ws, nodeids, limits)
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{key}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps({k: v for k, v in asdict(result).items() if k != "cached"}, sort_keys=True),
                       encoding="utf-8")
        os.replace(tmp, folder / f"{key}.json")
    return result


def cache_dir() -> Path | None:
    value = os.environ.get("PUSHBENCH_SWE_TEST_CACHE", "")
    if value.lower() in ("off", "0", "no", "false"):
        return None
    return Path(value) if value else config.DATA / "tmp" / "swe-test-cache"


def _cache_key(ws: Workspace, nodeids: list[str]) -> str:
    blob = json.dumps([CACHE_VERSION, ws.repo, sys.version_info[:3], sorted(nodeids), ws.diff_state()])
    return hashlib.sha256(blob.encode()).hexdigest()[:40]


def _execute(ws: Workspace, nodeids: list[str], limits: Limits) -> CheckRun:
    if ws.home.exists():
        shutil.rmtree(ws.home)
    ws.home.mkdir()
    env = clean_env(ws.home, [ws.root / "src", *runner_path(ws.repo, ws.pristine.parent)],
                    {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, bytecode_cache=bytecode_dir())
    result = run_sandboxed(pytest_argv(nodeids), ws.base, ws.root, env, limits)
    ws.restore()  # a test that wrote into the copy (e.g. opened a data file for writing) is undone
    output = sanitize(result.output, ws)
    if result.timed_out:
        output += f"\n[the test run was stopped after {limits.wall_seconds:.0f} s]"
    outcomes = parse_outcomes(output)
    passed = (result.returncode == 0 and bool(outcomes)
              and all(v in ("PASSED", "XFAIL") for v in outcomes.values()))
    return CheckRun(passed, outcomes, output, result.returncode)


def sanitize(output: str, ws: Workspace) -> str:
    """Remove what differs between runs or machines: paths, timings, addresses, temp names."""
    text = output
    for path, label in ((ws.root, ""), (ws.home, "<tmp>"), (ws.base, "<tmp>"), (bytecode_dir(), "<bytecode>"),
                        (ws.pristine.parent / "pytest" / "src", "<pytest>"),
                        (Path(sys.prefix), "<venv>"), (Path(sys.base_prefix), "<python>")):
        for form in {str(path), str(path.resolve())}:
            text = text.replace(form + "/", label + "/" if label else "").replace(form, label or ".")
    text = _TIMING.sub("", text)
    text = _TEMPNAME.sub("tmpXXXXXXXX", text)
    return _ADDRESS.sub("0x?", text)


def parse_outcomes(output: str) -> dict[str, str]:
    outcomes: dict[str, str] = {}
    for line in output.splitlines():
        match = _OUTCOME.match(line)
        if match and "::" in match.group(2):
            outcomes[match.group(2)] = match.group(1)
    return outcomes
