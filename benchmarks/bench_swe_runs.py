"""Seconds per jailed SWE-lite test run: a fresh jail per run vs the workspace's fork server.

For each snapshot repository, one targeted test of the catalogue's first unit runs ``RUNS`` times
uncached in one workspace (the first run of the fork server includes its start). Target: the fork
server at most 0.6x the fresh jail's median (pytest's and the standard library's imports are about
half of a run).

    .venv/bin/python benchmarks/bench_swe_runs.py
"""

from __future__ import annotations

import json
import os
import statistics
import time

from pushbench.sandbox.forkserver import FORK_SERVER_ENV
from pushbench.tasks.swe.runs import Workspace, run_tests
from pushbench.tasks.swe.units import load_catalogue

RUNS = 12


def seconds_per_run(repo: str, nodeid: str, mode: str) -> list[float]:
    os.environ[FORK_SERVER_ENV] = mode
    ws = Workspace(repo)
    try:
        times = []
        for _ in range(RUNS):
            start = time.perf_counter()
            run_tests(ws, [nodeid], cache=None)
            times.append(time.perf_counter() - start)
        return times
    finally:
        ws.close()


def main() -> None:
    catalogue = load_catalogue()
    results = {}
    for repo in sorted({u.repo for u in catalogue}):
        nodeid = next(u for u in catalogue if u.repo == repo).tests[0]
        fresh, forked = seconds_per_run(repo, nodeid, "off"), seconds_per_run(repo, nodeid, "on")
        results[repo] = {"fresh_jail_median_s": round(statistics.median(fresh), 3),
                         "fork_server_median_s": round(statistics.median(forked), 3),
                         "fork_server_first_run_s": round(forked[0], 3),
                         "ratio": round(statistics.median(forked) / statistics.median(fresh), 3)}
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
