"""The jailed fork server (``sandbox.forkserver``): same outcomes as a fresh jail, nothing carried over.

Each probe is library code written into the copy (replacing the previous probe), run as in
``test_jail.py``; the test process
is then a child forked from the workspace's server.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pushbench.sandbox import jail_problem
from pushbench.sandbox.forkserver import FORK_SERVER_ENV
from pushbench.tasks.swe.env import SweEnv
from pushbench.tasks.swe.runs import Workspace, run_tests
from pushbench.tasks.swe.units import inject
from pushbench.tools import ToolCall

from swe_toy import CLAMP_FAULT, clamp_env, probe, write_toy

pytestmark = pytest.mark.skipif(jail_problem() is not None, reason=f"no bubblewrap jail here: {jail_problem()}")
HEAD = 'def clamp(value, low, high):\n    """Limit value to [low, high]."""\n'
NODE = ["tests/test_mathx.py::test_clamp"]


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_toy(tmp_path_factory.mktemp("snaps"))


@pytest.fixture
def env(snapshots: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PUSHBENCH_SWE_TEST_CACHE", "off")
    made = clamp_env(snapshots)
    yield made
    made.workspace.close()


def plant(env: SweEnv, body: str) -> str:
    """Put ``body`` at the start of ``clamp``, run the unit's tests, return what the agent reads."""
    code = "".join(f"    {line}\n" if line else "\n" for line in body.strip("\n").split("\n"))
    current = env.workspace.read("src/toy/mathx.py")
    start = current.index(HEAD) + len(HEAD)
    end = current.index("    if value", start)
    env.workspace.write("src/toy/mathx.py", current[:start] + code + current[end:])
    return env.execute(ToolCall("run_tests", json.dumps({"unit": "U01"}))).text


def server_pid(env: SweEnv) -> int:
    server = env.workspace.fork_server()
    assert server is not None
    return server._proc.pid


def test_server_and_fresh_jail_give_the_same_run(snapshots: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = {}
    for mode in ("off", "on"):
        monkeypatch.setenv(FORK_SERVER_ENV, mode)
        ws = Workspace("toy", snapshots)
        try:
            inject(ws, [CLAMP_FAULT])
            broken = run_tests(ws, NODE, cache=None)
            ws.write(CLAMP_FAULT.path, ws.read(CLAMP_FAULT.path).replace(CLAMP_FAULT.broken, CLAMP_FAULT.original))
            fixed = run_tests(ws, NODE, cache=None)
            assert (ws.fork_server() is not None) == (mode == "on")
        finally:
            ws.close()
        runs[mode] = [(r.passed, r.returncode, r.outcomes, r.output) for r in (broken, fixed)]
    assert runs["on"] == runs["off"]
    assert [r[0] for r in runs["on"]] == [False, True]


def test_a_process_and_scratch_files_do_not_reach_the_next_run(env: SweEnv) -> None:
    first = plant(env, """
import os, subprocess, sys
open("/tmp/left-by-run-1", "w").write("x")
os.makedirs("/tmp/locked/inner")
os.chmod("/tmp/locked", 0)
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
raise RuntimeError("PROBE started")
""")
    assert probe(first) == "started"
    pid = server_pid(env)
    second = plant(env, """
import os
others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid(), os.getppid())]
raise RuntimeError("PROBE tmp=%s others=%d" % (sorted(os.listdir("/tmp")), len(others)))
""")
    assert probe(second) == "tmp=[] others=0"
    assert server_pid(env) == pid  # the same server served both runs


def test_the_server_is_neither_readable_nor_traceable_nor_stoppable_by_signals(env: SweEnv) -> None:
    pid = server_pid(env)
    out = plant(env, """
import ctypes, os, signal
server = os.getppid()
seen = []
for part in ("mem", "environ", "fd/0"):
    try:
        with open("/proc/%d/%s" % (server, part), "rb") as handle:
            handle.read(1)
        seen.append(part + ":read")
    except OSError as err:
        seen.append(part + ":" + type(err).__name__)
traced = ctypes.CDLL(None, use_errno=True).ptrace(16, server, 0, 0)  # PTRACE_ATTACH
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1):
    os.kill(server, sig)
raise RuntimeError("PROBE %s ptrace=%d" % (",".join(seen), traced))
""")
    assert probe(out) == "mem:PermissionError,environ:PermissionError,fd/0:PermissionError ptrace=-1"
    assert server_pid(env) == pid  # it ignored the signals and answered


def test_a_run_that_kills_the_server_gets_a_fresh_jail_instead(env: SweEnv) -> None:
    pid = server_pid(env)
    out = plant(env, """
import os, signal
where = "the jail's init" if os.getppid() == 1 else "a server"
if os.getppid() != 1:
    os.kill(os.getppid(), signal.SIGKILL)
raise RuntimeError("PROBE ran under %s" % where)
""")
    assert probe(out) == "ran under the jail's init"  # the plain jailed run's answer
    assert server_pid(env) != pid  # the next run has a new server


def test_a_sysv_object_left_behind_retires_the_server(env: SweEnv) -> None:
    pid = server_pid(env)
    out = plant(env, """
import ctypes
made = ctypes.CDLL(None, use_errno=True).shmget(0, 4096, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
raise RuntimeError("PROBE %s" % ("made" if made >= 0 else "refused"))
""")
    assert probe(out) == "made"
    assert server_pid(env) != pid
    again = plant(env, """
raise RuntimeError("PROBE %s" % open("/proc/sysvipc/shm").read().count(chr(10)))
""")
    assert probe(again) == "1"  # only the header: the new server's jail has a new IPC namespace


def test_warming_probes_each_snapshot_once_before_the_workers_fork() -> None:
    from pushbench import config
    from pushbench.tasks.swe import jailed
    from pushbench.tasks.swe.runs import warm_workspaces

    if not (config.SNAPSHOT_SRC / "requests").is_dir():
        pytest.skip("the requests snapshot is not extracted")
    warm_workspaces(["requests"])
    probed = jailed._trusted_imports.cache_info().misses
    ws = Workspace("requests")
    try:
        names = json.loads(jailed.preload(ws))
    finally:
        ws.close()
    assert jailed._trusted_imports.cache_info().misses == probed  # answered from the warm cache
    assert "urllib3" in names and "pytest" in names and "requests" not in names  # the copy's own: never


def test_a_message_queue_left_by_a_run_is_gone_for_the_next(env: SweEnv) -> None:
    first = plant(env, """
import ctypes
made = ctypes.CDLL("librt.so.1", use_errno=True).mq_open(b"/left-by-run-1", 0o102, 0o600, None)  # O_CREAT|O_RDWR
raise RuntimeError("PROBE %s" % ("made" if made >= 0 else "refused"))
""")
    assert probe(first) == "made"
    pid = server_pid(env)
    second = plant(env, """
import ctypes, os
opened = ctypes.CDLL("librt.so.1", use_errno=True).mq_open(b"/left-by-run-1", 0o2, 0, None)  # O_RDWR, no create
raise RuntimeError("PROBE queues=%s opened=%s" % (sorted(os.listdir("/dev/mqueue")), opened >= 0))
""")
    assert probe(second) == "queues=[] opened=False"
    assert server_pid(env) == pid
