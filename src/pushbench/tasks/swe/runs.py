"""SWE-lite workspaces and test runs: a per-episode copy of a snapshot, and its targeted tests.

A ``Workspace`` is a temporary folder ``<tmp>/repo`` (the copy the agent works in) plus
``<tmp>/home`` (HOME and TMPDIR of test processes). Only the tools change the copy: it records
every file they wrote, and after each test run it undoes whatever the test process wrote, created
or removed there (a faulty library can make a test open a data file for writing). So the *state*
of the copy is exactly the set of tool-written files that differ from the pristine snapshot.
``reset_tests`` puts tool-edited tests, conftest files and test configuration back to the
snapshot (the environment calls it before every check).

``run_tests`` runs ``python -m pytest -p no:cacheprovider -q --tb=short -rA <node ids>`` in the
bubblewrap jail (``pushbench.sandbox.jail``): the copy bound writable at ``/pushbench-jail/repo``
(the cwd), the workspace's home folder writable beside it, ``PYTHONPATH=<copy>/src``
(plus, for flask and requests, the pinned pytest 8.3.3 snapshot's ``src`` bound read-only as the
runner: the venv's newer pytest cannot run flask 3.0.3's conftest), plugin autoloading off; nothing
else of the project is visible (binds and environment: ``tasks.swe.jailed``). Each workspace keeps
one jailed fork server (``sandbox.forkserver``) that imported pytest once: a run is a child forked
from it, with the same files, environment and limits as a fresh jail, and every process the run
started is killed and the jail's scratch folders emptied before the next (a run that disturbs the
server is re-done in a fresh jail; ``PUSHBENCH_SWE_FORK_SERVER=off`` always uses fresh jails). The
home folder is emptied before every run. Without bwrap, ``Workspace()`` refuses unless
``PUSHBENCH_WEAK_SANDBOX=1`` chose the weaker sandbox. Output is made stable and path-free
(timings, temp paths, object addresses removed) before anyone sees it.

Runs are cached on disk by the bytes of every file in the copy (a digest of the tree), the node
ids, the repo, the Python version and the sandbox's version and mode: the same tree and command
give the same outcome, so a rerun of the same state is looked up instead of executed. The digest
is taken again after the run (once the copy is restored): a result is stored only when the tree
it ran on is still the tree on disk. ``PUSHBENCH_SWE_TEST_CACHE=off`` disables the cache.

Compiled bytecode (``PYTHONPYCACHEPREFIX``) comes from a folder per snapshot, bound read-only:
``warm_bytecode`` fills it once from trusted code only (the pristine snapshot and runner compiled,
and their tests collected, in a jail that sees no agent edit), so no test process can plant
bytecode another run would load. Python trusts a ``.pyc`` while the source's mtime (whole seconds)
and size match, so every tool write gives the file a new, unique mtime: an edited file is compiled
afresh in every run and can never be shadowed by bytecode of the snapshot or of an earlier edit.
(The weak sandbox writes bytecode to a folder of the workspace instead.) Tool writes encode first
and replace files atomically (``sandbox.files``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import sys
import tempfile
import time
import weakref
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from pushbench import config
from pushbench.sandbox import (JAIL, SANDBOX_VERSION, Limits, clean_env, encode_text, require_jail, resolve_inside,
                               run_sandboxed, write_bytes_atomic)
from pushbench.sandbox.forkserver import ForkServer, fork_server_enabled, start_server
from pushbench.sandbox.leftovers import remove_stale_once, workspace_prefix
from pushbench.sandbox.jail import VENV
from pushbench.tasks.swe.jailed import (IN_BYTECODE, IN_HOME, IN_PYTEST, IN_REPO, PLUGIN_DIR, REPORT_ENV, TEST_ROOTS,
                                        preload, pytest_argv, run_binds, run_jailed_tests, server_env, warm_bytecode)

CACHE_VERSION = 9  # 9: the report file closed (8 printed its random name at exit), 8: the verdict from the plugin's report, tests read-only (7: runs forked from a per-workspace server in the jail (6: a 160 MiB address-space limit (5: keyed by the tree's bytes, sandbox version and mode)
SHOWN_CHARS = 3_000  # an agent sees at most this much of a test run's output
COPIED = ("src", "tests", "testing", "pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "PKG-INFO")
TEST_CONFIG = frozenset({"pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", ".pytest.ini"})
# A faulty loop dies at 160 MiB of address space (every catalogue unit's tests pass at 80 MiB): a runaway
# (an endless generator) took a minute of a loaded core to reach the former 1 GiB, and runaways were most of
# the SWE stages' time.
TEST_LIMITS = Limits(cpu_seconds=120, wall_seconds=120.0, memory_bytes=160 * 1024**2)
_OUTCOME = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS) (\S.*?)(?: - .*)?$")
_TIMING = re.compile(r" in \d+(?:\.\d+)?s(?: \(\d+:\d+:\d+\))?")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{4,}\b")
_TEMPNAME = re.compile(r"\btmp[a-z0-9_]{8}\b")  # tempfile.mkdtemp/mkstemp's random names
RACY_NS = 200_000_000  # digest(): a file changed this recently (ns) is hashed again next time (the ctime clock is coarse)
EDIT_EPOCH = 100_000_000  # mtimes of tool-written files count up from here (1973: no sdist file has it)
MAX_SERVER_FAILURES = 2  # a workspace whose server would not start this often runs plain jails


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
    """A private copy of one snapshot; removed by ``close()`` (or when collected, or at exit).

    Refuses (``JailUnavailable``) where bubblewrap cannot run, unless the weak sandbox was chosen."""

    def __init__(self, repo: str, snapshot_root: Path | None = None):
        self.jailed = require_jail()
        self.repo = repo
        self.pristine = (snapshot_root or config.SNAPSHOT_SRC) / repo
        if not self.pristine.is_dir():
            raise FileNotFoundError(f"snapshot {repo!r} is not extracted at {self.pristine}")
        self.runner = runner_path(repo, self.pristine.parent)
        shared = warm_bytecode(self) if self.jailed else None  # before anything needs removing
        remove_stale_once()  # folders of killed processes (sandbox.leftovers)
        self.base = Path(tempfile.mkdtemp(prefix=workspace_prefix(repo)))
        self.root = self.base / "repo"
        self.home = self.base / "home"
        self.reports = self.base / "verdict"  # the verdict plugin's report files (one per run, removed after it)
        self.bytecode = shared or self.base / "bytecode"  # outside the copy
        self.root.mkdir()
        self.home.mkdir()
        self.reports.mkdir()
        self.bytecode.mkdir(exist_ok=True)
        for name in COPIED:
            source = self.pristine / name
            if source.is_dir():
                shutil.copytree(source, self.root / name, symlinks=True)
            elif source.is_file():
                shutil.copy2(source, self.root / name)
        self.written: dict[str, str] = {}  # every file the tools wrote, with its current text
        self._writes = 0
        self._servers: list[ForkServer] = []  # the jailed fork server, once a run started it
        self._server_failures = 0
        # removed on close(), on garbage collection or at interpreter exit, whichever comes first
        self._finalizer = weakref.finalize(self, _remove, self.base, self._servers)
        self._hashes: dict[str, tuple[tuple[int, int, int, int], bytes]] = {}  # digest()'s per-file memo
        self._stamps = self._scan()
        self._specials = self._special_entries()  # the snapshot's own symlinks (if any)
        self._folders = {rel for rel, st in _entries(self.root) if stat.S_ISDIR(st.st_mode)}
        self._pristine = (self._layout(), self.digest())  # what reset() must give back

    def reset(self) -> bool:
        """Put the copy back to the snapshot as it was created (tool writes undone, home emptied), for
        another episode (``pool``). False, and nothing reused, if the copy does not match the snapshot."""
        self.restore()
        for rel in sorted(self.written):
            self._put_pristine(rel)
        self.written.clear()
        self._writes = 0  # the next episode's edits get the same mtimes as in a new copy
        if self.bytecode.parent == self.base:  # the weak sandbox's own bytecode: its edits' may be stale now
            _empty(self.bytecode)
        _empty(self.home)
        self._stamps = self._scan()
        return (self._layout(), self.digest()) == self._pristine

    def _layout(self) -> dict[str, tuple[int, int, int]]:
        """Every entry's mode, and a file's size and mtime: a chmod or a new folder shows here, not in
        the digest (bytes only)."""
        return {rel: (st.st_mode, st.st_size, st.st_mtime_ns) if stat.S_ISREG(st.st_mode) else (st.st_mode, 0, 0)
                for rel, st in _entries(self.root)}

    def _scan(self) -> dict[str, tuple[int, int, int, int]]:
        """(inode, size, mtime, ctime) of every file in the copy: what a test run may not change. No
        process can set a ctime (a write, rename or utime moves it to the clock's now), so an equal
        stamp proves the bytes unchanged and any rewrite shows, even one that kept size and mtime."""
        return {rel: _stamp(st) for rel, st in _entries(self.root) if stat.S_ISREG(st.st_mode)}

    def _stray_folders(self) -> list[str]:
        """Folders a run made, or put where a file was: removed by ``restore`` (deepest first)."""
        folders = [rel for rel, st in _entries(self.root) if stat.S_ISDIR(st.st_mode) and not stat.S_ISLNK(st.st_mode)]
        return sorted((rel for rel in folders if rel not in self._folders), key=lambda r: -r.count("/"))

    def _special_entries(self) -> set[str]:
        """Everything in the copy that is neither a regular file nor a folder (symlinks, FIFOs, sockets)."""
        return {rel for rel, st in _entries(self.root) if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode))}

    def restore(self) -> list[str]:
        """Undo whatever a test process changed in the copy (files written, created or removed, and
        any symlink, FIFO or socket it made); only the tools change the workspace. Returns the paths
        it had to restore."""
        strays = sorted(self._special_entries() - self._specials)
        for rel in strays:
            (self.root / rel).unlink(missing_ok=True)
        for rel in self._stray_folders():
            shutil.rmtree(self.root / rel, ignore_errors=True)
            strays.append(rel)
        now = self._scan()
        changed = sorted(p for p in set(now) | set(self._stamps) if now.get(p) != self._stamps.get(p))
        for rel in changed:
            target = self.root / rel
            if rel not in self._stamps:
                target.unlink(missing_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if rel in self.written:
                self._put(target, encode_text(self.written[rel]))
            else:
                self._put_pristine(rel)
        if changed:
            self._stamps = self._scan()
        return sorted({*changed, *strays})

    def reset_tests(self, nodeids: Iterable[str] = ()) -> list[str]:
        """Put every tool-edited test file, conftest.py and test configuration file (and the files of
        ``nodeids``) back to the snapshot's bytes, as SWE-bench resets tests before evaluation.
        Returns the paths that were reset."""
        targeted = {n.split("::", 1)[0] for n in nodeids}
        reset = []
        for rel in sorted(self.written):
            if rel in targeted or _is_test_file(rel):
                self._put_pristine(rel)
                del self.written[rel]
                reset.append(rel)
        if reset:
            self._stamps = self._scan()
        return reset

    def path(self, relative: str) -> Path:
        return resolve_inside(self.root, relative)

    def read(self, relative: str) -> str:
        return self.path(relative).read_text(encoding="utf-8")

    def write(self, relative: str, text: str) -> None:
        """Replace an existing file of the copy (encoded first: ``UnencodableText`` changes nothing)."""
        data = encode_text(text)
        target = self.path(relative)
        if not target.is_file():
            raise FileNotFoundError(f"{relative} is not a file of the workspace")
        self._put(target, data)
        rel = target.relative_to(self.root.resolve()).as_posix()
        self.written[rel] = text
        self._stamps[rel] = _stamp(target.stat())

    def _put(self, target: Path, data: bytes) -> None:
        """Write atomically with a new whole-second mtime, unique in this workspace (see the module note)."""
        self._writes += 1
        write_bytes_atomic(target, data, (EDIT_EPOCH + self._writes) * 10**9)

    def _put_pristine(self, rel: str) -> None:
        source = self.pristine / rel
        write_bytes_atomic(self.root / rel, source.read_bytes(), source.stat().st_mtime_ns)

    def digest(self) -> str:
        """sha256 over the path and bytes of every file in the copy: the state a run sees.

        A file's own hash is reused while its inode, size, mtime and ctime are those it was hashed
        at. No process can set a ctime (every write, rename or utime moves it to the clock's now),
        so a file whose bytes changed is read again; a file changed less than ``RACY_NS`` before it
        was hashed is not remembered (the kernel's coarse clock may not have ticked since), as git
        re-reads a "racily clean" file."""
        outer = hashlib.sha256()
        now = time.time_ns()
        files = sorted(((rel, st) for rel, st in _entries(self.root) if stat.S_ISREG(st.st_mode)),
                       key=lambda entry: entry[0].split("/"))
        for rel, st in files:
            outer.update(rel.encode("utf-8", "surrogateescape") + b"\0")
            outer.update(self._file_hash(rel, st, now))
        return outer.hexdigest()

    def _file_hash(self, rel: str, st: os.stat_result, now: int) -> bytes:
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        known = self._hashes.get(rel)
        if known is not None and known[0] == stamp:
            return known[1]
        with open(self.root / rel, "rb") as handle:
            value = hashlib.file_digest(handle, "sha256").digest()
        if now - st.st_ctime_ns > RACY_NS:
            self._hashes[rel] = (stamp, value)
        else:
            self._hashes.pop(rel, None)
        return value

    def fork_server(self) -> ForkServer | None:
        """This copy's jailed fork server (started on first use, replaced when it retired itself)."""
        if self._servers and self._servers[0].alive:
            return self._servers[0]
        self._servers.clear()
        if self._server_failures >= MAX_SERVER_FAILURES or not fork_server_enabled():
            return None
        server = start_server(run_binds(self), server_env(self), preload(self))
        if server is None:
            self._server_failures += 1
            return None
        self._servers.append(server)
        return server

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def close(self) -> None:
        self._finalizer()


def _stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _is_test_file(rel: str) -> bool:
    return rel.startswith(TEST_ROOTS) or rel.rsplit("/", 1)[-1] == "conftest.py" or rel in TEST_CONFIG


def warm_workspaces(repos: Iterable[str]) -> None:
    """Compile each snapshot's bytecode and probe its fork server's imports once, here (the runner's
    parent, before it forks its workers), instead of once per worker."""
    for repo in sorted(set(repos)):
        ws = Workspace(repo)
        try:
            if ws.jailed:
                preload(ws)
        finally:
            ws.close()


def _entries(root: Path) -> list[tuple[str, os.stat_result]]:
    """(relative posix path, lstat) of everything under ``root``; symlinked folders are not entered,
    and a folder that cannot be listed is skipped (as ``os.walk`` does). In no particular order."""
    found: list[tuple[str, os.stat_result]] = []
    folders = [("", os.fspath(root))]
    while folders:
        prefix, folder = folders.pop()
        try:
            with os.scandir(folder) as listing:
                for entry in listing:
                    rel = f"{prefix}{entry.name}"
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        continue
                    found.append((rel, st))
                    if stat.S_ISDIR(st.st_mode):
                        folders.append((rel + "/", entry.path))
        except OSError:
            continue
    return found


def python_files(root: Path) -> list[str]:
    """The regular ``.py`` files under ``root`` in path order: links are not followed (a symlinked
    file or folder is skipped) and a FIFO or socket is never listed."""
    found = [rel for rel, st in _entries(root) if rel.endswith(".py") and stat.S_ISREG(st.st_mode)]
    return sorted(found, key=lambda rel: rel.split("/"))


def _remove(base: Path, servers: list[ForkServer]) -> None:
    for server in servers:
        server.close()
    shutil.rmtree(base, ignore_errors=True)


def runner_path(repo: str, snapshot_root: Path | None = None) -> Path | None:
    """The import root of the test runner: the pinned pytest, except for pytest itself."""
    if repo == "pytest":
        return None
    return (snapshot_root or config.SNAPSHOT_SRC) / "pytest" / "src"


def run_tests(ws: Workspace, nodeids: list[str], cache: Path | None | str = "default",
              limits: Limits = TEST_LIMITS) -> CheckRun:
    """Run the node ids in the workspace (jailed); cached by the bytes of the tree it runs on."""
    folder = cache_dir() if cache == "default" else (Path(cache) if cache else None)
    key = _cache_key(ws, nodeids) if folder is not None else ""
    if folder is not None:
        hit = folder / f"{key}.json"
        if hit.is_file():
            try:
                return CheckRun(**{**json.loads(hit.read_text(encoding="utf-8")), "cached": True})
            except (json.JSONDecodeError, TypeError):
                pass  # a damaged entry is recomputed
    result = _execute(ws, nodeids, limits)
    if folder is not None and _cache_key(ws, nodeids) == key:  # the tree on disk is the one that ran
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
    mode = "jail" if ws.jailed else "weak"
    blob = json.dumps([CACHE_VERSION, SANDBOX_VERSION, mode, ws.repo, sys.version_info[:3], sorted(nodeids),
                       ws.digest()])
    return hashlib.sha256(blob.encode()).hexdigest()[:40]


def _execute(ws: Workspace, nodeids: list[str], limits: Limits) -> CheckRun:
    _empty(ws.home)  # emptied, not replaced: a fork server's jail has this very folder bound
    name = f"{secrets.token_hex(16)}.json"  # unpredictable; the plugin unlinks it before any test code runs
    report = ws.reports / name
    report.touch(mode=0o600)
    handle = os.open(report, os.O_RDONLY)  # the report is read through this, whatever happens to the name
    try:
        result = run_jailed_tests(ws, nodeids, limits, name) if ws.jailed else _run_weak(ws, nodeids, limits, report)
        written = _read_all(handle)
    finally:
        os.close(handle)
        _empty(ws.reports)
    ws.restore()  # a test that wrote into the copy (e.g. opened a data file for writing) is undone
    output = sanitize(result.output, ws)
    if result.timed_out:
        output += f"\n[the test run was stopped after {limits.wall_seconds:.0f} s]"
    passed, refused = verdict(written, nodeids, result.returncode)
    if refused and result.returncode == 0:  # the output alone would read as a pass: say why it is not
        output += f"\n[verdict] not accepted: {refused}"
    return CheckRun(passed, parse_outcomes(output), output, result.returncode)


def _read_all(handle: int) -> bytes:
    os.lseek(handle, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(handle, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def verdict(report: bytes, nodeids: Iterable[str], returncode: int | None) -> tuple[bool, str]:
    """Passed only if the run exited 0, the plugin's report says the session finished uninterrupted
    with status 0, and every targeted node id (a parametrised id counts as its instances) was
    reported ``passed``. Else False and one line naming what failed (the first few ids)."""
    try:
        data = json.loads(report.decode("utf-8")) if report.strip() else {}
    except (UnicodeDecodeError, ValueError):
        data = {}
    if not isinstance(data, dict) or data.get("finished") is not True or not isinstance(data.get("outcomes"), dict):
        return False, "the test session did not finish (no complete report from the verdict plugin)"
    if data.get("interrupted") or data.get("exitstatus") != 0 or returncode != 0:
        return False, f"the test session was interrupted or exited {data.get('exitstatus')!r}"
    outcomes: dict = data["outcomes"]
    missing = []
    for nodeid in nodeids:
        found = [v for k, v in outcomes.items() if k == nodeid or k.startswith(nodeid + "[")]
        if not found or any(v != "passed" for v in found):
            missing.append(f"{nodeid} ({', '.join(sorted(set(found))) or 'not reported'})")
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        return False, f"targeted tests not passed: {shown}"
    return True, ""


def _empty(folder: Path) -> None:
    folder.mkdir(exist_ok=True)
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def _run_weak(ws: Workspace, nodeids: list[str], limits: Limits, report: Path):
    """The weaker sandbox (``PUSHBENCH_WEAK_SANDBOX=1``): limits and a clean environment only."""
    env = clean_env(ws.home, [ws.root / "src", *([ws.runner] if ws.runner else []), PLUGIN_DIR],
                    {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", REPORT_ENV: str(report)}, bytecode_cache=ws.bytecode)
    return run_sandboxed(pytest_argv(nodeids), ws.base, ws.root, env, limits)


def sanitize(output: str, ws: Workspace) -> str:
    """Remove what differs between runs or machines: paths, timings, addresses, temp names."""
    text = output
    pytest_src = ws.pristine.parent / "pytest" / "src"
    for path, label in ((ws.root, ""), (IN_REPO, ""), (ws.home, "<tmp>"), (IN_HOME, "<tmp>"),
                        (ws.bytecode, "<bytecode>"), (IN_BYTECODE, "<bytecode>"), (ws.base, "<tmp>"),
                        (pytest_src, "<pytest>"), (IN_PYTEST, "<pytest>"), (Path(sys.prefix), "<venv>"),
                        (VENV, "<venv>"), (JAIL, "<tmp>"), (Path(sys.base_prefix), "<python>")):
        for form in {str(path), str(Path(path).resolve())}:
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
