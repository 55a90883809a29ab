"""The fork server's in-jail half (see ``sandbox.forkserver``): stdlib only, never imported on the host.

The host starts it as ``python -c <this file's text> <preload>`` inside a bubblewrap jail whose
working directory is ``/`` and whose ``PYTHONPATH`` holds only trusted code (the pinned pytest
runner, never the episode's copy). It imports ``<preload>`` once (a JSON list of module names),
prints ``ready``, then serves one JSON request per line on stdin: a forked child
runs ``python -m <module> <args>`` under the request's limits and then exits as that interpreter
would (atexit, thread joins, the shutdown's garbage collection), and the reply (one JSON
line on stdout) carries its exit status and output. After every run it kills every other process
in the jail (it is their subreaper, so it reaps them all) and empties ``/tmp``, ``/dev/shm`` and
the POSIX message queues;
when anything is left over (a SysV IPC object, an undeletable file) the reply says ``clean: false``
and the host retires this server. The server is not dumpable (no ``ptrace``, no ``/proc/<pid>/mem``
or ``fd`` of it for the children) and ignores the catchable signals a test could send it.
"""

import sys

del sys.path[0]  # '' (the working directory): nothing is ever imported from it

import ctypes  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import runpy  # noqa: E402
import select  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402

PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 4, 36
MAX_OUTPUT_BYTES = 200_000  # as sandbox.process: the tail beyond this is cut
SCRATCH = ("/tmp", "/dev/shm", "/dev/mqueue")  # the host mounts the jail's message queues at /dev/mqueue
SYSV = ("/proc/sysvipc/shm", "/proc/sysvipc/sem", "/proc/sysvipc/msg")
IGNORED = [getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2",
                                        "SIGALRM", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGPIPE", "SIGXFSZ")]
STARTUP_HANDLERS = {s: signal.getsignal(s) for s in IGNORED}  # what a fresh interpreter has
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl
for _name in [m for m in sys.modules if m == "ctypes" or m.startswith("ctypes.")]:
    del sys.modules[_name]  # a test imports ctypes afresh, as in a plain run


def preload(spec):
    for name in json.loads(spec):
        try:
            importlib.import_module(name)
        except BaseException:  # a module of the list that cannot load here is simply not preloaded
            pass


def become_run(request, write_fd, control):
    """Turn this forked child into the run's process: a fresh session, the run's limits and state."""
    for stream in control:  # closed as objects, so the interpreter's exit has nothing left to close
        stream.close()
    os.setsid()
    for sig, handler in STARTUP_HANDLERS.items():
        signal.signal(sig, handler)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(write_fd, 1)
    os.dup2(write_fd, 2)
    os.closerange(3, 65536)
    _PRCTL(PR_SET_DUMPABLE, 1, 0, 0, 0)
    limits = request["limits"]
    for key, value in (("RLIMIT_CPU", "cpu_seconds"), ("RLIMIT_AS", "memory_bytes"),
                       ("RLIMIT_NOFILE", "open_files"), ("RLIMIT_FSIZE", "file_bytes")):
        resource.setrlimit(getattr(resource, key), (limits[value], limits[value]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    entries = request["pythonpath"]
    sys.path[:] = [request["cwd"], *entries, *[p for p in sys.path if p not in entries]]
    sys.argv = ["-m", *request["args"]]  # argv[0] becomes the module's file, as for ``python -m``
    sys.orig_argv = [sys.executable, "-m", request["module"], *request["args"]]
    if "random" in sys.modules:
        sys.modules["random"].seed()  # as a fresh interpreter seeds it


def run_as_main(module):
    """What ``python -m module`` runs, in a fresh ``__main__``; its SystemExit (or error) then ends
    this interpreter the normal way, so atexit, thread joins and the shutdown's collection (with its
    ResourceWarnings) happen as in a fresh run, and an error's traceback starts where its would."""
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        runpy._run_module_as_main(module, alter_argv=True)  # type: ignore[attr-defined]  # private: runs as `python -m` does
    except SystemExit:
        raise
    except BaseException as error:
        frame = error.__traceback__  # a caught exception has one
        error.__traceback__ = frame.tb_next if frame else None  # from runpy's frame on, as python -m prints it
        sys.excepthook(type(error), error, error.__traceback__)
        sys.exit(1)
    sys.exit(0)


def collect(read_fd, pid, wall_seconds):
    """The child's output (tail kept) and exit status, or ``None`` status when it ran out of time."""
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(read_fd, select.POLLIN)
    poller.register(pidfd, select.POLLIN)
    chunks, status, eof = bytearray(), None, False
    deadline = time.monotonic() + wall_seconds
    while not (eof and status is not None):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        for fd, _ in poller.poll(remaining * 1000):
            if fd == read_fd:
                data = os.read(read_fd, 65536)
                if not data:
                    eof = True
                    poller.unregister(read_fd)
                chunks += data
                if len(chunks) > 2 * MAX_OUTPUT_BYTES:
                    del chunks[:-MAX_OUTPUT_BYTES - 1]
            elif status is None:
                status = os.waitpid(pid, 0)[1]
                poller.unregister(pidfd)
                kill_others()  # as a jail's init would: what the run started ends with it
    os.close(pidfd)
    timed_out = status is None
    if timed_out:
        kill_others()
    while not eof:  # every writer is dead now
        data = os.read(read_fd, 65536)
        eof = not data
        chunks += data
    os.close(read_fd)
    return bytes(chunks), (None if timed_out else status)


def kill_others():
    """SIGKILL every process of the jail but its init and this server, and reap them all."""
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            return
        while True:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break


def returncode(status):
    """As bwrap reports it: the exit code, or 128 + the signal that ended the run."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def scrub():
    """Empty the jail's scratch folders; False when something stays (the host then retires us)."""
    clean = True
    for folder in SCRATCH:
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    _make_removable(path)
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
            except OSError:
                clean = False
        clean = clean and not os.listdir(folder)
    for table in SYSV:
        try:
            with open(table, encoding="utf-8") as handle:
                clean = clean and len(handle.read().splitlines()) <= 1  # only the header line
        except OSError:
            pass
    return clean


def _make_removable(top):
    for root, dirs, _ in os.walk(top):
        for name in dirs:
            try:
                os.chmod(os.path.join(root, name), 0o700)
            except OSError:
                pass
    os.chmod(top, 0o700)


def serve(control_in, control_out):
    for line in control_in:
        request = json.loads(line)
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(read_fd)
                become_run(request, write_fd, (control_in, control_out))
            except BaseException:
                os._exit(70)
            run_as_main(request["module"])
        os.close(write_fd)
        raw, status = collect(read_fd, pid, request["limits"]["wall_seconds"])
        truncated = len(raw) > MAX_OUTPUT_BYTES
        raw = raw[-MAX_OUTPUT_BYTES:] if truncated else raw
        reply = {"returncode": None if status is None else returncode(status), "timed_out": status is None,
                 "truncated": truncated, "output": raw.decode("utf-8", "replace"), "clean": scrub()}
        control_out.write(json.dumps(reply).encode() + b"\n")
        control_out.flush()


def main():
    _PRCTL(PR_SET_DUMPABLE, 0, 0, 0, 0)
    _PRCTL(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    for sig in IGNORED:
        signal.signal(sig, signal.SIG_IGN)
    control_in, control_out = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # only the dup'ed control descriptors reach the host, and no child has them
        os.dup2(null, fd)
    os.set_inheritable(control_in.fileno(), False)
    os.set_inheritable(control_out.fileno(), False)
    preload(sys.argv[1])
    control_out.write(b"ready\n")
    control_out.flush()
    serve(control_in, control_out)


main()
