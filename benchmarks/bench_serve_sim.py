"""Model calls per second through serve-sim with 32 concurrent episodes (target >= 300 calls/s).

Starts ``pushbench serve-sim`` on a free local port, then runs a grid of ``openai/sim-base``
episodes (RepoScan ``requests`` tasks, three controllers, several seeds) through the async runner
with ``--concurrency 32`` and the response cache off: every call is a real HTTP request through the
openai SDK, answered by SimLM in the server process. Client and server share this machine.

    .venv/bin/python benchmarks/bench_serve_sim.py
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from pushbench import config
from pushbench.runner import Grid, run_grid
from pushbench.tasks import load_tasks
from pushbench.tasks.base import write_manifest

CONCURRENCY = 32


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "pushbench.cli", "serve-sim", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("serve-sim did not start")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc), to size the server's share of a call."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def grid(seeds: int) -> Grid:
    return Grid("reposcan", ["standard", "gated", "stateqgp"], ["openai/sim-base"], ["full"], ["native"], seeds,
                [10, 25, 50], None, int(config.params("seed")))


def main() -> None:
    tasks = [t for t in load_tasks("reposcan") if t.repo == "requests"]
    port = free_port()
    server = start_server(port)
    options = {"base_url": f"http://127.0.0.1:{port}/v1", "cache": False, "request_timeout": 60}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            write_manifest(root / "m" / "reposcan.jsonl", tasks)
            warm = Grid("reposcan", ["standard"], ["openai/sim-base"], ["full"], ["native"], 1, [10], 1, 0)
            run_grid(warm, root / "warm", progress=False, manifest_root=root / "m", policy_options=options)
            start, cpu, server_cpu = time.perf_counter(), time.process_time(), cpu_seconds(server.pid)
            path = run_grid(grid(4), root / "run", progress=False, manifest_root=root / "m",
                            policy_options=options, concurrency=CONCURRENCY)
            wall, client_cpu = time.perf_counter() - start, time.process_time() - cpu
            server_cpu = cpu_seconds(server.pid) - server_cpu
            rows = [json.loads(line) for line in path.read_text().splitlines()]
    finally:
        os.kill(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    calls = sum(r["llm_calls"] for r in rows)
    print(json.dumps({"episodes": len(rows), "concurrency": CONCURRENCY, "llm_calls": calls,
                      "wall_seconds": round(wall, 2), "calls_per_s": round(calls / wall, 1),
                      "client_cpu_ms_per_call": round(1000 * client_cpu / calls, 3),
                      "server_cpu_ms_per_call": round(1000 * server_cpu / calls, 3),
                      "load_average_1min": round(os.getloadavg()[0], 2),
                      "mean_input_tokens_per_call": round(sum(r["input_tokens"] for r in rows) / calls),
                      "target_calls_per_s": 300}, indent=1))


if __name__ == "__main__":
    main()
