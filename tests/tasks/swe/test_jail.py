"""The SWE-lite jail against the reproducers of an adversarial agent (issue 20).

Each attack is library code the agent plants with the ``edit`` tool (test files are reset before
every check, so the library is where such code has to live); ``run_tests`` then runs it in the
bubblewrap jail and the observation shows what the code could see. The code raises its findings
as an exception, so they appear in the test output the agent would read.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import pytest

from pushbench import config
from pushbench.sandbox import jail_problem
from pushbench.tasks.swe.env import SweEnv
from pushbench.tools import ToolCall

from swe_toy import probe

pytestmark = pytest.mark.skipif(jail_problem() is not None, reason=f"no bubblewrap jail here: {jail_problem()}")
HEAD = 'def clamp(value, low, high):\n    """Limit value to [low, high]."""\n'




def call(env: SweEnv, name: str, **args):
    return env.execute(ToolCall(name, json.dumps(args)))


def plant(env: SweEnv, body: str) -> str:
    """Put ``body`` at the start of ``clamp`` (the test calls it), run the unit's tests, return the output."""
    code = "".join(f"    {line}\n" if line else "\n" for line in body.strip("\n").split("\n"))
    edited = call(env, "edit", path="src/toy/mathx.py", old=HEAD, new=HEAD + code)
    assert edited.ok, edited.text
    return call(env, "run_tests", unit="U01").text


def test_no_path_from_sys_path_leads_to_hidden_answers(env: SweEnv) -> None:
    hidden = config.HIDDEN.resolve()
    assert hidden.is_dir()  # the answers exist on this host; the code below must not reach them
    out = plant(env, f"""
import os, sys, pytest
seen = set()
for entry in [*sys.path, os.path.dirname(pytest.__file__), os.path.dirname(os.__file__), os.getcwd()]:
    p = os.path.abspath(entry or ".")
    while p not in seen:
        seen.add(p)
        p = os.path.dirname(p)
hits = sorted(p for p in seen if os.path.exists(os.path.join(p, "data", "hidden"))
              or os.path.exists(os.path.join(p, "params.yaml")))
raise RuntimeError("PROBE hits=%d host=%s root=%s" % (len(hits), os.path.exists({str(hidden)!r}),
                   os.path.exists({str(config.ROOT.resolve())!r})))
""")
    assert probe(out) == "hits=0 host=False root=False"


def test_proc_environ_shows_no_runner_variable(env: SweEnv, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-runner-secret-0815")
    out = plant(env, """
import os
found = []
for pid in [os.getppid(), 1, *[p for p in os.listdir("/proc") if p.isdigit()]]:
    try:
        with open("/proc/%s/environ" % pid, "rb") as handle:
            found.append(handle.read().replace(b"\\0", b" ").decode())
    except OSError as err:
        found.append("unreadable %s" % pid)
raise RuntimeError("PROBE " + " | ".join(found))
""")
    assert "PATH=" in probe(out)  # the jail's own variables are there...
    assert "OPENAI_API_KEY" not in out and "sk-fake" not in out  # ...the runner's are not
    stored = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "cache").glob("*.json"))
    assert stored and "sk-fake" not in stored and "OPENAI_API_KEY" not in stored


def test_writes_outside_the_copy_fail_or_stay_in_the_jail(env: SweEnv) -> None:
    targets = [config.DATA.resolve() / "jail-probe.txt", env.workspace.pristine / "jail-probe.txt",
               Path("/tmp/pushbench-jail-probe.txt"), Path("/jail-probe.txt")]
    for target in targets:
        target.unlink(missing_ok=True)
    out = plant(env, f"""
import os
result = []
for target in {[str(t) for t in targets] + ["../escape.txt"]!r}:
    try:
        os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
        with open(target, "w") as handle:
            handle.write("escaped")
        result.append("wrote")
    except OSError as err:
        result.append(type(err).__name__)
raise RuntimeError("PROBE " + ",".join(result))
""")
    verdicts = probe(out).split(",")
    for target in targets:
        assert not target.exists(), target  # nothing of it reached the host
    assert not (env.workspace.base / "escape.txt").exists()
    # data/ is not there and / is read-only; the snapshot's and /tmp's paths land on the jail's own
    # /tmp (so does data/ of a checkout under /tmp: the write stays in the jail, checked above)
    assert verdicts[3] == verdicts[4] == "OSError", verdicts
    assert verdicts[0] == "OSError" or str(targets[0]).startswith("/tmp/"), verdicts


def test_a_detached_grandchild_does_not_outlive_the_run(env: SweEnv) -> None:
    token = f"jail-grandchild-{os.getpid()}-{time.monotonic_ns()}"
    out = plant(env, f"""
import os, sys
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)", {token!r}])
    os._exit(0)
raise RuntimeError("PROBE started")
""")
    assert probe(out) == "started"
    # The jail's init takes every process of its PID namespace with it (SIGKILL); the kernel's
    # teardown may finish a few milliseconds after run_tests returns, so allow it a moment.
    deadline = time.monotonic() + 3.0
    while (alive := survivors(token)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive, f"processes outlived run_tests: {alive}"


def survivors(token: str) -> list[str]:
    alive = []
    for proc in Path("/proc").iterdir():
        try:
            if token.encode() in (proc / "cmdline").read_bytes():
                alive.append(proc.name)
        except OSError:
            continue
    return alive


def test_no_connection_to_a_port_open_on_the_host(env: SweEnv) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.settimeout(0.5)
        port = server.getsockname()[1]
        out = plant(env, f"""
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
    verdict = "connected"
except OSError as err:
    verdict = type(err).__name__
raise RuntimeError("PROBE " + verdict)
""")
        with pytest.raises(TimeoutError):
            server.accept()  # nobody connected
    assert probe(out) in ("ConnectionRefusedError", "OSError", "TimeoutError"), out


def test_the_shared_bytecode_is_read_only_in_the_jail(env: SweEnv) -> None:
    before = sorted(p.relative_to(env.workspace.bytecode) for p in env.workspace.bytecode.rglob("*"))
    out = plant(env, """
import os, sys
try:
    open(os.path.join(sys.pycache_prefix, "planted.pyc"), "wb").write(b"x")
    verdict = "wrote"
except OSError as err:
    verdict = type(err).__name__
raise RuntimeError("PROBE " + verdict)
""")
    assert probe(out) in ("OSError", "PermissionError"), out
    after = sorted(p.relative_to(env.workspace.bytecode) for p in env.workspace.bytecode.rglob("*"))
    assert after == before


def test_links_fifos_and_files_a_test_makes_in_the_copy_are_removed(env: SweEnv) -> None:
    out = plant(env, """
import os
os.mkfifo("src/toy/trap.py")  # a FIFO would hang any reader on the host
os.symlink("/etc/passwd", "src/toy/passwd.py")
open("src/toy/extra.py", "w").write("x = 1")
raise RuntimeError("PROBE planted")
""")
    assert probe(out) == "planted"
    names = sorted(p.name for p in (env.workspace.root / "src" / "toy").iterdir())
    assert names == ["__init__.py", "mathx.py"]
    assert call(env, "search_files", query="def clamp(").ok  # returns (no FIFO is opened)
