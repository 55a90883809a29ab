"""``make repro``: the DVC pipeline with independent stages run side by side.

``dvc repro`` runs one stage at a time, and many stages use one process (manifests, score,
notebooks, ...), so on two cores half the machine idles. This driver walks the same stage graph in
the same dependency order and decides what to run exactly as ``dvc repro`` does (a stage runs when
an upstream stage ran or ``Stage.changed()`` says its command, dependencies or outputs differ from
``dvc.lock``), but runs up to ``jobs`` stage commands at once. Only the driver's process touches
DVC: it removes a stage's outputs before its command, and after the command saves, caches and
writes the stage's ``dvc.lock`` entry (``Stage.save``/``commit``, what ``dvc repro`` calls, then the
entry ``Stage.dump`` would write, in place: ``lockfile``), so ``dvc.lock`` is the one ``dvc repro``
would write and a later ``dvc repro`` finds nothing to do.
A failing stage stops new launches; the running ones finish and are recorded; the failure's log
tail is printed. Each stage's output goes to ``data/tmp/pipeline/<stage>.log``.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

LOG_DIR = Path("data/tmp/pipeline")


@dataclass
class StageRun:
    """One launched stage command: its process and the clock it started on."""

    name: str
    process: subprocess.Popen[bytes]
    started: float
    log: Path


@dataclass
class Finished:
    name: str
    returncode: int
    wall: float
    cpu: float  # user + system seconds of the command and every process it waited for


@dataclass
class Plan:
    """The stage graph by name: each stage's upstream stages, and an order to prefer when several
    are ready (most downstream work first, then dvc.yaml order)."""

    upstream: dict[str, set[str]]
    order: list[str]
    ran: set[str] = field(default_factory=set)
    done: set[str] = field(default_factory=set)

    def ready(self, running: set[str]) -> list[str]:
        return [s for s in self.order if s not in self.done and s not in running
                and self.upstream[s] <= self.done]

    def needs_run(self, name: str, changed: Callable[[], bool]) -> bool:
        return bool(self.upstream[name] & self.ran) or changed()


def plan_of(graph: Any) -> Plan:
    """A ``Plan`` from DVC's stage graph (edges point from a stage to the stages it depends on)."""
    names = {stage: stage.addressing for stage in graph.nodes}
    upstream = {names[s]: {names[u] for u in graph.successors(s)} for s in graph.nodes}
    downstream: dict[str, set[str]] = {n: set() for n in upstream}
    for name in _topological(upstream)[::-1]:
        for up in upstream[name]:
            downstream[up] |= {name} | downstream[name]
    position = {n: i for i, n in enumerate(names.values())}
    order = sorted(upstream, key=lambda n: (-len(downstream[n]), position[n]))
    return Plan(upstream, order)


def _topological(upstream: dict[str, set[str]]) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name not in seen:
            seen.add(name)
            for up in sorted(upstream[name]):
                visit(up)
            out.append(name)
    for name in sorted(upstream):
        visit(name)
    return out


def launch(name: str, cmd: str, root: Path) -> StageRun:
    log = root / LOG_DIR / f"{name.replace('@', '_')}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as sink:
        process = subprocess.Popen(cmd, shell=True, cwd=root, stdout=sink, stderr=subprocess.STDOUT,
                                   executable="/bin/bash")
    return StageRun(name, process, time.perf_counter(), log)


def wait_any(running: dict[int, StageRun]) -> Finished:
    """The next stage command to end, with its CPU time (``os.wait4`` reports its whole tree's)."""
    pid, status, usage = os.wait4(-1, 0)
    while pid not in running:  # a stray child (not a stage): keep waiting
        pid, status, usage = os.wait4(-1, 0)
    run = running.pop(pid)
    run.process.returncode = os.waitstatus_to_exitcode(status)
    return Finished(run.name, run.process.returncode, time.perf_counter() - run.started,
                    usage.ru_utime + usage.ru_stime)


def tail(path: Path, lines: int = 30) -> str:
    text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return "\n".join(text[-lines:])
