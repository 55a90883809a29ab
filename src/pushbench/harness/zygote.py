"""Fork servers for the grid's stand-in agents and MCP servers: one start-up, many processes.

Each black-box episode runs two Python processes: the stand-in MCP client and the MCP server it
starts over stdio. Importing the MCP SDK (pydantic models of two protocol versions), SimLM and the
o200k tokenizer, and building a snapshot's search index, cost each of them more CPU than a whole
episode's own work. A zygote per entry point (``python -m pushbench.harness.zygote serve DIR
MODULE INDEXES``) does that once and forks a fresh process per request: the agent's zygote holds
the stand-in, SimLM and the tokenizer; the server's holds the server and the search indexes (code
of the public snapshots, as each server builds them). Neither reads a manifest or a hidden answer;
the agent's holds nothing of the server. A request comes from the thin launcher ``python -m
pushbench.harness.zygote run DIR MODULE ARGS...``: it sends its argv, environment and working
folder and passes its stdin, stdout and stderr (SCM_RIGHTS), so the fork reads and writes the
launcher's own pipes. The process boundary is that of separate starts: the agent reaches the tools
only through the server's stdio, and each fork has its own address space.

The launcher stands in for the fork: it relays SIGTERM/SIGINT/SIGHUP to it and exits with its exit
code (or dies of its signal). If the launcher dies (SIGKILL of its process group at a time limit),
the zygote sees the connection close and kills the fork. Where a zygote cannot give the same
process (none running, another project root or module path), the launcher becomes ``python -m
MODULE ARGS`` itself. Each zygote runs its one module, by its ``main(argv)``.
"""

from __future__ import annotations

import gc
import json
import os
import selectors
import signal
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

# The launcher runs in every process start: it imports nothing beyond this standard-library set.
SOCKET_NAME = "zygote.sock"
AGENT, SERVER = "pushbench.harness.standin", "pushbench.harness.mcp_main"
ENTRY_POINTS = (AGENT, SERVER)  # one zygote each, in FOLDER/<module>/
MAX_REQUEST = 128 * 1024  # bytes of one request (argv, environment, folder); a seqpacket message
RELAYED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
ANYIO = ("anyio._backends._asyncio", "anyio.streams.stapled", "anyio._core._subprocesses")  # imported on first run


class Index(NamedTuple):
    """A RepoScan search index the server zygote builds before forking (snapshot code only)."""

    snapshot_root: str
    repo: str
    max_results: int
    page_size: int


def preload(module: str, indexes: list[Index]) -> None:
    """Import what ``module``'s processes need. The agent's zygote holds the stand-in, SimLM and
    the tokenizer; the server's holds the server and the search indexes of the snapshots (as
    each server would build them). Neither reads a manifest or a hidden answer."""
    import importlib

    importlib.import_module(module)
    if module == AGENT:
        for name in ("pushbench.policies.sim", "pushbench.tasks.reposcan.mind", "numpy.random", *ANYIO):
            importlib.import_module(name)
        from pushbench.tokens import encoding

        encoding()  # the vocabulary, read and verified once instead of once per stand-in
        return
    # what a server imports lazily: itself, the RepoScan environment, the SDK's rich log handler
    for name in ("pushbench.harness.mcp_server", "pushbench.snapshots", "pushbench.verifier", "pushbench.tasks.reposcan.env",
                 "pushbench.tasks.reposcan.family", "rich.console", "rich.logging", *ANYIO):
        importlib.import_module(name)
    from pushbench.snapshots import snapshot_dir
    from pushbench.tasks.reposcan.search import search_for

    for index in indexes:  # the same call, with the same key, as RepoScanFamily.environment
        search_for(snapshot_dir(index.repo, Path(index.snapshot_root)), index.max_results, index.page_size)


# ------------------------------------------------------------------ the forked process


def _child(zygote: "_Zygote", conn: socket.socket, request: dict, fds: list[int]) -> None:
    """In the fork: drop the zygote's sockets, take the launcher's stdio, environment and folder;
    if they would configure the modules otherwise than the zygote's were, tell the launcher to
    start the module itself, else run the entry point; exit with its code."""
    code = 1
    try:
        zygote.close_all()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        for sig in RELAYED + (signal.SIGCHLD,):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        if sys.path and sys.path[0] == zygote.path0:  # `python -m` puts the cwd first
            sys.path[0] = os.getcwd()
        if context() != zygote.context:
            _send(conn, {"fallback": True})
            code = 0
            return
        conn.close()
        sys.argv = [request["module"], *request["argv"]]
        code = _exit_code(sys.modules[request["module"]].main, request["argv"])
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def _exit_code(main, argv: list[str]) -> int:
    try:
        result = main(argv)
    except SystemExit as done:  # argparse's errors, sys.exit() inside main
        result = done.code
    except BaseException:  # noqa: BLE001 — report like an interpreter would, then exit 1
        import traceback

        traceback.print_exc()
        return 1
    if result is None:
        return 0
    if isinstance(result, int):
        return result
    print(result, file=sys.stderr)
    return 1


# ------------------------------------------------------------------ the zygote


class _Child:
    def __init__(self, conn: socket.socket, pidfd: int):
        self.conn = conn  # the launcher's connection
        self.pidfd = pidfd  # readable once the forked process exits
        self.launcher_alive = True


class _Zygote:
    def __init__(self, folder: Path, module: str):
        self.module = module
        self.path0 = sys.path[0] if sys.path else None
        self.context = context()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind(str(folder / SOCKET_NAME))
        self.listener.listen(16)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, ("accept", None))
        self.children: dict[int, _Child] = {}

    def serve(self) -> None:
        while True:
            for key, _ in self.selector.select():
                kind, pid = key.data
                if kind == "accept":
                    self._accept()
                elif kind == "gone":  # the launcher closed or died: its process goes too
                    self._kill(pid)
                else:
                    self._reap(pid)

    def _accept(self) -> None:
        conn, _ = self.listener.accept()
        fds: list[int] = []
        try:
            payload, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, 3)
            request = json.loads(payload)
            if request.get("module") != self.module or len(fds) != 3:
                raise ValueError(f"refused: this zygote runs {self.module} only")
        except (OSError, ValueError, AttributeError) as err:
            for fd in fds:
                os.close(fd)
            _send(conn, {"error": str(err)})
            conn.close()
            return
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(self, conn, request, fds)
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        self.children[pid] = _Child(conn, pidfd)
        self.selector.register(conn, selectors.EVENT_READ, ("gone", pid))
        self.selector.register(pidfd, selectors.EVENT_READ, ("exit", pid))
        _send(conn, {"pid": pid})

    def _kill(self, pid: int) -> None:
        child = self.children[pid]
        self.selector.unregister(child.conn)
        child.launcher_alive = False
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def _reap(self, pid: int) -> None:
        child = self.children.pop(pid)
        self.selector.unregister(child.pidfd)
        os.close(child.pidfd)
        _, status = os.waitpid(pid, 0)
        if child.launcher_alive:  # tell the launcher how its process ended
            self.selector.unregister(child.conn)
            _send(child.conn, {"status": os.waitstatus_to_exitcode(status)})
        child.conn.close()

    def close_all(self) -> None:
        """In a fork: close the zygote's listener, selector, connections and pidfds."""
        self.selector.close()
        self.listener.close()
        for child in self.children.values():
            child.conn.close()
            os.close(child.pidfd)

    def stop(self, *_: object) -> None:
        for pid in list(self.children):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os._exit(0)


def _send(conn: socket.socket, message: dict) -> None:
    """Best effort: a launcher that went away is noticed (and its fork killed) by the selector."""
    try:
        conn.sendall(json.dumps(message).encode())
    except OSError:
        pass


def context() -> dict[str, str | None]:
    """What import-time configuration depends on: the project root (config.py resolves it from
    the cwd or PUSHBENCH_ROOT when imported) and the module search path."""
    from pushbench import config

    found = config.find_root()
    return {"root": str(found) if found else None, "pythonpath": os.environ.get("PYTHONPATH")}


def serve(folder: Path, module: str, indexes: list[Index]) -> None:
    from pushbench import config

    if module not in ENTRY_POINTS or config.FOUND is None:
        raise SystemExit(f"zygote: {module[:100]!r} is no entry point, or this is no PushBench checkout")
    os.close(os.pidfd_open(os.getpid()))  # fails early on a kernel without pidfds (Linux < 5.3)
    preload(module, indexes)
    home = folder / module
    home.mkdir(mode=0o700)
    zygote = _Zygote(home, module)
    gc.freeze()  # the preloaded objects: a fork's collections then leave their pages shared
    signal.signal(signal.SIGTERM, zygote.stop)
    print("ready", flush=True)
    zygote.serve()


@contextmanager
def running(cwd: Path, indexes: list[Index], timeout: float = 300.0) -> Iterator[Path | None]:
    """Start one zygote per entry point in ``cwd`` (where the forked processes will run, so that
    they resolve the project root as they would), their sockets in a private folder (0700, short
    enough for a socket path); yield the folder once both serve (None if they cannot start, e.g.
    without pidfds: then every process starts from scratch); stop them and their forks after."""
    import shutil
    import subprocess
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="pushbench-zygote-"))
    spec = json.dumps([i._asdict() for i in indexes])
    procs = [subprocess.Popen([sys.executable, "-m", "pushbench.harness.zygote", "serve", str(folder), module, spec],
                              cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE) for module in ENTRY_POINTS]
    try:
        if not all(_ready(proc, timeout) for proc in procs):
            print("fork servers unavailable; every process starts from scratch", file=sys.stderr)
            yield None
            return
        yield folder
        for proc in procs:
            if proc.poll() is not None:
                raise RuntimeError(f"a fork server exited with code {proc.returncode} during the run")
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
            proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


def alive(folder: Path) -> bool:
    """Both zygotes still accept requests (a probe they answer with a refusal)."""
    for module in ENTRY_POINTS:
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as probe:
            try:
                probe.connect(str(folder / module / SOCKET_NAME))
            except OSError:
                return False
    return True


def _ready(proc, timeout: float) -> bool:
    assert proc.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    if not selector.select(timeout):
        return False
    return proc.stdout.readline() == b"ready\n"


# ------------------------------------------------------------------ the launcher


def launch(folder: Path, module: str, argv: list[str]) -> int:
    """Have the zygote run ``module`` on this process's stdio and return its exit code; where it
    cannot (no zygote, another project root or module path), become ``python -m module``."""
    if module not in ENTRY_POINTS:
        _become(module, argv)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        conn.connect(os.path.join(folder, module, SOCKET_NAME))
        request = {"module": module, "argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}
        socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    except (OSError, ValueError):  # nothing was forked yet
        _become(module, argv)
    pid, fallback = None, False
    while True:  # {"pid"} from the zygote, maybe {"fallback"} from the fork, then {"status"}
        try:
            message = json.loads(conn.recv(MAX_REQUEST) or b"{}")
        except (OSError, ValueError):
            message = {}
        if "error" in message and pid is None:  # refused: nothing was forked
            _become(module, argv)
        if "pid" in message:
            pid = int(message["pid"])
            for sig in RELAYED:
                signal.signal(sig, lambda number, _frame: _relay(pid, number))
        fallback = fallback or bool(message.get("fallback"))
        if "status" in message or not message:
            break
    if fallback:  # the fork exited untouched: this process starts the module itself
        _become(module, argv)
    if pid is None or "status" not in message:  # the zygote went away; a fork may hold the pipes
        print(f"zygote: lost the fork server running {module}", file=sys.stderr)
        return 2 if pid is None else 128 + signal.SIGKILL
    status = int(message["status"])
    if status < 0:  # died of a signal: die of the same one
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    return status


def _become(module: str, argv: list[str]) -> None:
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-m", module, *argv])


def _relay(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 4 and args[0] == "serve":
        serve(Path(args[1]), args[2], [Index(**i) for i in json.loads(args[3])])
        return 0
    if len(args) >= 3 and args[0] == "run":
        return launch(Path(args[1]), args[2], args[3:])
    print("usage: python -m pushbench.harness.zygote serve DIR MODULE INDEXES | run DIR MODULE [ARGS...]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
