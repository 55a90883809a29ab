"""The bubblewrap jail for agent-requested code (SWE-lite test runs).

``run_jailed`` starts a command under ``bwrap`` on top of the limits of ``run_limited``:

* private PID, network, IPC and UTS namespaces, its own ``/proc``, a minimal ``/dev``, a new
  session, no capabilities; bwrap's init is PID 1 inside, so when the command ends every process
  it started (double forks and ``setsid`` included) is killed with it, and ``--die-with-parent``
  plus the wall timeout end the jail when the runner stops or the run hangs;
* a filesystem built from nothing: the system folders (``/usr`` and the ``/bin``/``/lib`` links),
  a few files of ``/etc``, the interpreter and the venv, all read-only, and only the ``Bind``s the
  caller names (the episode's copy writable). The venv is bound by itself at ``/pushbench-jail/venv``,
  never the project folder that may hold it, so no parent of ``sys.path`` leads to ``data/``; a
  project kept inside a bound system folder is covered by an empty tmpfs (``masked_paths``);
* an environment built from nothing (``--clearenv`` plus the caller's variables; bwrap itself gets
  the same), so neither the test's nor any ``/proc/<pid>/environ`` in the jail shows the runner's.

Where bwrap cannot run (not installed, or no namespaces allowed), ``jail_problem()`` says why (probed
once per process). Callers then refuse unless the user opted into the weaker sandbox with
``PUSHBENCH_WEAK_SANDBOX=1`` (limits, clean environment, process-group kill; no filesystem view).
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Sequence

from pushbench import config
from pushbench.sandbox.process import Limits, SandboxResult, run_limited

SANDBOX_VERSION = 1  # bump when the jail changes what a run can see or do (cached outcomes depend on it)
WEAK_SANDBOX_ENV = "PUSHBENCH_WEAK_SANDBOX"
JAIL = "/pushbench-jail"  # every path the caller binds lives under here (distinct, so outputs can be cleaned)
VENV = f"{JAIL}/venv"
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("/etc/passwd", "/etc/group", "/etc/hosts", "/etc/localtime", "/etc/nsswitch.conf",
             "/etc/ld.so.cache", "/etc/alternatives")
NAMESPACES = ("--unshare-user-try", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
              "--unshare-cgroup-try", "--cap-drop", "ALL", "--die-with-parent", "--new-session")


class JailUnavailable(RuntimeError):
    """bubblewrap cannot run here and the weak sandbox was not chosen."""


@dataclass(frozen=True)
class Bind:
    host: Path
    inside: str  # an absolute path under JAIL
    writable: bool = False


def weak_sandbox_chosen() -> bool:
    return os.environ.get(WEAK_SANDBOX_ENV, "") == "1"


def bwrap_path() -> str | None:
    return shutil.which("bwrap") or shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin")


@lru_cache(maxsize=1)
def jail_problem() -> str | None:
    """None when a trial jail runs here; else a one-line reason (probed once per process)."""
    exe = bwrap_path()
    if exe is None:
        return "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    try:
        python, binds = interpreter()
    except JailUnavailable as err:
        return str(err)
    result = run_limited(_command(exe, [python, "-c", "pass"], binds, "/", {}), Path("/"), {},
                         Limits(cpu_seconds=20, wall_seconds=20.0))
    if result.returncode != 0:
        reason = (result.output.strip().splitlines() or ["no output"])[-1][:200]
        return f"bubblewrap cannot create its namespaces here ({reason})"
    return None


def require_jail() -> bool:
    """True when runs go to the jail, False when the user chose the weak sandbox; else raises."""
    problem = jail_problem()
    if problem is None:
        return True
    if weak_sandbox_chosen():
        return False
    raise JailUnavailable(f"test runs need the bubblewrap jail, but {problem}; set {WEAK_SANDBOX_ENV}=1 "
                          "to accept the weaker sandbox (no private filesystem, network or /proc)")


def interpreter() -> tuple[str, list[Bind]]:
    """The in-jail path of this interpreter, and the read-only binds it needs (base install, venv)."""
    prefix, base = Path(sys.prefix), Path(sys.base_prefix)
    binds = [] if _under_system(base) else [Bind(base, str(base))]
    if prefix == base:
        return sys.executable, binds
    try:
        inside = f"{VENV}/{Path(sys.executable).relative_to(prefix).as_posix()}"
    except ValueError:
        raise JailUnavailable(f"the interpreter {sys.executable} is not inside its venv") from None
    return inside, [*binds, Bind(prefix, VENV)]


def _under_system(path: Path) -> bool:
    resolved = path.resolve()
    return resolved == Path("/usr") or resolved.is_relative_to("/usr")


def run_jailed(argv: Sequence[str], binds: Sequence[Bind], cwd: str, env: Mapping[str, str],
               limits: Limits = Limits()) -> SandboxResult:
    """Run ``argv`` (in-jail paths) in the jail with the caller's ``binds`` and the interpreter's."""
    exe = bwrap_path()
    if exe is None:
        raise JailUnavailable("bubblewrap (bwrap) is not installed")
    _, python_binds = interpreter()
    for bind in binds:
        if not bind.inside.startswith(JAIL + "/"):
            raise ValueError(f"a jail bind must live under {JAIL}: {bind.inside}")
    command = _command(exe, list(argv), [*python_binds, *binds], cwd, env)
    return run_limited(command, Path("/"), env, limits)


def masked_paths(system: Sequence[Path]) -> list[Path]:
    """The project's folders that lie inside a bound system folder: they are covered by an empty tmpfs."""
    project = {config.ROOT.resolve(), config.DATA.resolve(), config.SNAPSHOT_SRC.resolve()}
    return sorted(p for p in project if any(p.is_relative_to(s.resolve()) for s in system))


def _command(exe: str, argv: list[str], binds: Sequence[Bind], cwd: str, env: Mapping[str, str],
             mqueue: bool = False) -> list[str]:
    """bwrap's command line; ``mqueue`` mounts the jail's POSIX message queues at /dev/mqueue (so a
    long-lived jail can list and remove what a run left there)."""
    args = [exe, *NAMESPACES, "--proc", "/proc", "--dev", "/dev", *(["--mqueue", "/dev/mqueue"] if mqueue else []),
            "--tmpfs", "/tmp", "--ro-bind", "/usr", "/usr"]
    for link in SYSTEM_LINKS:
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            args += ["--ro-bind", link, link]
    for path in ETC_FILES:
        args += ["--ro-bind-try", path, path]
    for bind in binds:
        args += ["--bind" if bind.writable else "--ro-bind", str(bind.host), bind.inside]
    system = [Path("/usr"), Path("/etc"), *(Path(b.inside) for b in binds if b.inside == str(b.host))]
    for masked in masked_paths(system):  # e.g. a project kept under /usr/local or inside the interpreter's folder
        args += ["--tmpfs", str(masked)]
    args += ["--remount-ro", "/", "--chdir", cwd, "--clearenv"]
    for key, value in sorted(env.items()):
        args += ["--setenv", key, value]
    return [*args, "--", *argv]
