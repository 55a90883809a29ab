"""The driver loop of ``python -m pushbench.pipeline``: DVC decides, up to ``jobs`` commands run."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path
from typing import Any

from pushbench.pipeline import Finished, Plan, StageRun, launch, plan_of, tail, wait_any
from pushbench.pipeline.lockfile import dump_stage


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)}:{seconds % 60:04.1f}"


class Driver:
    """Runs a ``Plan`` over a DVC repository; ``stages`` maps names to DVC ``Stage`` objects."""

    def __init__(self, repo: Any, jobs: int, root: Path) -> None:
        self.repo, self.jobs, self.root = repo, jobs, root
        graph = repo.index.graph
        self.stages = {stage.addressing: stage for stage in graph.nodes}
        self.plan: Plan = plan_of(graph)
        self.running: dict[int, StageRun] = {}
        self.times: list[Finished] = []
        self.failed: list[Finished] = []

    def start_ready(self) -> None:
        """Launch ready stages up to ``jobs``; an up-to-date stage is done at once, which may make
        its downstream stages ready in turn."""
        progressed = True
        while progressed and not self.failed and len(self.running) < self.jobs:
            progressed = False
            for name in self.plan.ready({r.name for r in self.running.values()}):
                if len(self.running) >= self.jobs:
                    return
                progressed = True
                if not self.launch_if_changed(name):
                    self.plan.done.add(name)

    def launch_if_changed(self, name: str) -> bool:
        stage = self.stages[name]
        with self.repo.lock:
            run_it = bool(stage.cmd) and self.plan.needs_run(name, stage.changed)
            if run_it:
                stage.remove_outs(ignore_remove=False, force=False)
        if run_it:
            print(f"running {name}: {stage.cmd}", flush=True)
            run = launch(name, stage.cmd, self.root)
            self.running[run.process.pid] = run
        return run_it

    def finish(self, result: Finished) -> None:
        stage = self.stages[result.name]
        if result.returncode != 0:
            self.failed.append(result)
            log = self.root / "data/tmp/pipeline" / f"{result.name.replace('@', '_')}.log"
            print(f"error: stage {result.name} failed (exit {result.returncode}); the end of {log.relative_to(self.root)}:"
                  f"\n{tail(log)}", file=sys.stderr, flush=True)
            return
        with self.repo.lock:
            stage.save(allow_missing=False, run_cache=False)
            stage.commit(allow_missing=False)
            dump_stage(stage)  # the entry stage.dump(update_pipeline=False) writes, without re-writing the whole file
        self.plan.ran.add(result.name)
        self.plan.done.add(result.name)
        self.times.append(result)
        print(f"done {result.name}: {_minutes(result.wall)} wall, {_minutes(result.cpu)} CPU", flush=True)

    def stop(self, signum: int, _frame: object) -> None:
        """A kill or Ctrl-C: end the running stage commands too (their dvc.lock entries stay old,
        so the next run redoes them), then exit as the signal would."""
        for run in self.running.values():
            if run.process.poll() is None:
                run.process.terminate()
        for run in self.running.values():
            run.process.wait()
        print(f"stopped: {', '.join(r.name for r in self.running.values()) or 'no stage'} interrupted", file=sys.stderr)
        sys.exit(128 + signum)

    def run(self) -> int:
        started = time.perf_counter()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self.stop)
        self.start_ready()
        while self.running:
            self.finish(wait_any(self.running))
            self.start_ready()
        wall = time.perf_counter() - started
        cpu = sum(t.cpu for t in self.times)
        if self.failed:
            return 1
        if not self.times:
            print("every stage is up to date", flush=True)
        else:
            print(f"{len(self.times)} stages ran: {_minutes(wall)} wall, {_minutes(cpu)} CPU "
                  f"({cpu / max(wall, 1e-9):.2f} cores on average)", flush=True)
        return 0


def main(jobs: int) -> int:
    from dvc.repo import Repo

    from pushbench import config

    repo = Repo(str(config.ROOT))
    try:
        return Driver(repo, jobs, config.ROOT).run()
    finally:
        repo.close()
