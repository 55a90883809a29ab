"""The Ray executor on a local Ray instance with 2 CPUs (started once for this module): the same
bytes as the local executor, a killed worker retried, a killed driver resumed, an episode's
exception recorded as an error row, and API models through async actors."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from typer.testing import CliRunner

from pushbench import config
from pushbench.cli import app
from pushbench.runner import Grid, run_grid, trace_name
from pushbench.runner import ray_exec
from pushbench.runner.grid import EpisodeSpec
from pushbench.scoring import score_run
from pushbench.tasks import load_tasks
from pushbench.tasks.base import write_manifest
from serving import answers_models

ray = pytest.importorskip("ray")
SEED = int(config.params("seed"))
GRIDS = {  # two families, --limit 2; DataOps on both backends (LangGraph checkpoints in the scratch folder)
    "reposcan": Grid("reposcan", ["standard", "stateqgp"], ["sim/mini"], ["full"], ["native"], 1, None, 2, SEED),
    "dataops": Grid("dataops", ["standard", "unitqgp"], ["sim/mini"], ["full"], ["native", "langgraph"], 1, None, 2,
                    SEED),
}
KILL_GRID = Grid("reposcan", ["standard", "stateqgp"], ["sim/mini"], ["full"], ["native"], 2, None, 4, SEED)
KILL_ARGS = ["run", "--family", "reposcan", "--limit", "4", "--controller", "standard,stateqgp", "--model", "sim/mini",
             "--seeds", "2", "--workers", "2", "--no-progress", "--executor", "ray"]


@pytest.fixture(scope="module")
def kill_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kill")


@pytest.fixture(scope="module")
def cluster(kill_dir: Path) -> Iterator[str]:
    """A local Ray instance (2 CPUs) for the module; its workers inherit the kill hook's folder."""
    if "RAY_ADDRESS" in os.environ:
        pytest.skip("RAY_ADDRESS is set: these tests start their own local instance")
    os.environ[ray_exec.KILL_HOOK] = str(kill_dir)
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    try:
        ray_exec._start_local(ray, 2)
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        os.environ.pop(ray_exec.KILL_HOOK, None)


@pytest.fixture(scope="module")
def references(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each grid run by the local executor (one process), scored."""
    out = {}
    for name, grid in GRIDS.items():
        out[name] = tmp_path_factory.mktemp(f"local-{name}")
        run_grid(grid, out[name], workers=1, progress=False, wall_time=False)
        score_run(out[name])
    return out


def run_ray(grid: Grid, out: Path, **kwargs: Any) -> Path:
    return run_grid(grid, out, workers=2, progress=False, wall_time=False, executor="ray", **kwargs)


def folder_bytes(run: Path) -> dict[str, bytes]:
    files = [run / "episodes.jsonl", *sorted((run / "traces").iterdir())]
    files += [run / name for name in ("scored.jsonl", "summary.json") if (run / name).exists()]
    return {str(p.relative_to(run)): p.read_bytes() for p in files}


def scratch_left(out: Path) -> list[Path]:
    base = Path(tempfile.gettempdir()) / f"pushbench-ray-{os.getuid()}"
    key = ray_exec._run_key(str(out / "traces"))
    return [p for p in (base / key).rglob("*") if p.is_file()] if (base / key).exists() else []


# --------------------------------------------------------------------------- no Ray needed


def test_executor_names_and_default() -> None:
    assert ray_exec.check_executor("ray") == "ray" and ray_exec.default_executor() == "local"
    with pytest.raises(ValueError, match="unknown executor 'dask'; choose one of local, ray"):
        ray_exec.check_executor("dask")
    result = CliRunner().invoke(app, ["run", "--executor", "dask", "--out", "unused"])
    assert result.exit_code == 1 and "unknown executor 'dask'" in result.output
    assert not Path("unused").exists()


def test_a_node_without_snapshots_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = load_tasks("reposcan")[0]
    spec = EpisodeSpec("reposcan", task.task_id, "standard", "full", "sim/mini", "native", 0)
    monkeypatch.setattr(config, "SNAPSHOT_SRC", tmp_path / "none")
    scratch = ray_exec.Scratch("k", spec, task, None)
    with pytest.raises(ray_exec.NodeSetupError, match=r"has no snapshot flask, pytest, requests under its project"):
        ray_exec._error_episode(spec, task, scratch, [], FileNotFoundError("x"), ["flask", "pytest", "requests"])


# --------------------------------------------------------------------------- on Ray


@pytest.mark.slow
def test_same_bytes_as_the_local_executor(cluster: str, references: dict[str, Path], tmp_path: Path) -> None:
    for name, grid in GRIDS.items():
        out = tmp_path / name
        run_ray(grid, out)
        score_run(out)
        assert folder_bytes(out) == folder_bytes(references[name]), name  # rows, traces, scores, summary
        assert len(folder_bytes(out)) > 4 and not scratch_left(out)
        assert not (out / "checkpoints").exists()  # LangGraph checkpoints stay on the worker's node


@pytest.mark.slow
def test_a_worker_killed_mid_episode_is_retried(cluster: str, references: dict[str, Path], kill_dir: Path,
                                                tmp_path: Path) -> None:
    grid = GRIDS["reposcan"]
    victims = [trace_name(s.episode_id) for s in grid.episodes()[1:3]]
    for name in victims:  # the worker dies after the episode ran, before its result reached the driver
        (kill_dir / name).write_text("", encoding="utf-8")
    run_ray(grid, tmp_path)
    assert not list(kill_dir.iterdir())  # both workers did die (the hook removes its file, then kills)
    assert (tmp_path / "episodes.jsonl").read_bytes() == (references["reposcan"] / "episodes.jsonl").read_bytes()
    assert {p.name for p in (tmp_path / "traces").iterdir()} == {trace_name(s.episode_id) for s in grid.episodes()}


@pytest.mark.slow
def test_resume_runs_only_the_missing_episodes(cluster: str, references: dict[str, Path], tmp_path: Path) -> None:
    full = (references["dataops"] / "episodes.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "episodes.jsonl"
    path.write_text("".join(full[::2]) + full[1][:30], encoding="utf-8")  # half the episodes, a torn line
    run_ray(GRIDS["dataops"], tmp_path)
    assert path.read_text(encoding="utf-8") == "".join(full)
    assert len(list((tmp_path / "traces").iterdir())) == len(full) - len(full[::2])  # only those it ran


@pytest.mark.slow
def test_an_episode_exception_is_an_error_row(cluster: str, references: dict[str, Path], tmp_path: Path) -> None:
    good, bad = load_tasks("reposcan")[:2]
    write_manifest(tmp_path / "m" / "reposcan.jsonl", [good, bad.model_copy(update={"repo": "no-such-repo"})])
    run_ray(GRIDS["reposcan"], tmp_path / "run", manifest_root=tmp_path / "m")
    score_run(tmp_path / "run", tmp_path / "m")
    rows = [json.loads(line) for line in (tmp_path / "run" / "scored.jsonl").read_text().splitlines()]
    failed = [r for r in rows if r["task_id"] == bad.task_id]
    assert len(rows) == 4 and len(failed) == 2
    assert all(r["termination"] == "error" and r["llm_calls"] == 0 and not r["success"] for r in failed)
    for row in failed:
        trace = json.loads(gzip.decompress((tmp_path / "run" / "traces" / trace_name(row["episode_id"])).read_bytes()))
        assert "SnapshotError: snapshot 'no-such-repo' is not extracted" in trace["error"]
        assert "pushbench/tasks/reposcan/family.py" in trace["error"] and str(config.ROOT) not in trace["error"]
    reference = [line for line in (references["reposcan"] / "episodes.jsonl").read_text().splitlines()
                 if json.loads(line)["task_id"] == good.task_id]
    assert [line for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()
            if json.loads(line)["task_id"] == good.task_id] == reference  # the others went on


@pytest.mark.slow
def test_a_killed_driver_resumes_to_the_same_bytes(cluster: str, tmp_path: Path) -> None:
    out, reference = tmp_path / "killed", tmp_path / "reference"
    env = {**os.environ, "RAY_ADDRESS": cluster, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop(ray_exec.KILL_HOOK, None)
    driver = subprocess.Popen([sys.executable, "-m", "pushbench.cli", *KILL_ARGS, "--out", str(out)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    path, deadline = out / "episodes.jsonl", time.monotonic() + 180
    try:
        while _lines(path) < 3 and driver.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
    finally:
        os.killpg(driver.pid, signal.SIGKILL)
        _, err = driver.communicate()
    at_kill = _lines(path)
    assert 3 <= at_kill < 16, f"the driver was not caught mid-way ({at_kill} rows): {err.decode()[-1500:]}"
    run_grid(KILL_GRID, reference, workers=1, progress=False)
    run_grid(KILL_GRID, out, workers=2, progress=False, executor="ray")  # the rerun, on the same cluster
    assert path.read_bytes() == (reference / "episodes.jsonl").read_bytes()
    assert {p.name for p in (out / "traces").glob("*.json.gz")} == {p.name for p in (reference / "traces").iterdir()}


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


@pytest.fixture(scope="module")
def sim_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``pushbench serve-sim`` on a free loopback port (SimLM behind the OpenAI chat API)."""
    import socket

    
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = tmp_path_factory.mktemp("serve-sim") / "log"
    with open(log, "wb") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "pushbench.cli", "serve-sim", "--host", "127.0.0.1",
                                 "--port", str(port)], stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        if not answers_models(url, proc, 90):
            pytest.fail(f"serve-sim did not start: {log.read_text()[-1000:]}")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.slow
def test_api_models_run_in_threaded_actors(cluster: str, sim_server: str, tmp_path: Path) -> None:
    tasks = [t for t in load_tasks("reposcan") if t.repo == "requests"][:2]
    write_manifest(tmp_path / "m" / "reposcan.jsonl", tasks)
    grid = Grid("reposcan", ["standard", "stateqgp"], ["openai/sim-base"], ["full"], ["native"], 1, None, None, SEED)
    options = {"base_url": sim_server, "request_timeout": 30, "cache": False}
    kw = dict(progress=False, wall_time=False, manifest_root=tmp_path / "m", policy_options=options, concurrency=2)
    run_grid(grid, tmp_path / "local", workers=2, **kw)
    run_grid(grid, tmp_path / "ray", workers=2, executor="ray", **kw)  # 2 actors x 2 episodes in flight
    assert folder_bytes(tmp_path / "ray") == folder_bytes(tmp_path / "local")
    rows = [json.loads(line) for line in (tmp_path / "ray" / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(r["llm_calls"] > 0 and r["input_tokens"] > 0 for r in rows)


@pytest.mark.slow
def test_api_model_episodes_on_ray_equal_in_process_simlm(cluster: str, sim_server: str, tmp_path: Path) -> None:
    """The one loop on Ray's API actors: every memory, as in-process SimLM, on two families (the
    jailed SWE runs inside an actor; corpus, whose mind writes memory notes). Every family is
    checked on the local executor and on LangGraph in test_parity.py (tests/helpers/parity.py)."""
    import parity
    from agentkit import data_missing

    if (reason := data_missing()) is not None:
        pytest.skip(reason)
    families = ["swe", "corpus"]
    grids = parity.grids("native", families)
    for grid in grids:
        run_grid(grid, tmp_path / "ray", workers=2, progress=False, wall_time=False, executor="ray", concurrency=3,
                 policy_options=parity.http_options(sim_server))
    parity.reference(grids, tmp_path / "local")
    ray_run, local = parity.contents(tmp_path / "ray"), parity.contents(tmp_path / "local")
    assert sorted(ray_run) == sorted(local) and len(local) == 1 + len(families) * len(parity.MEMORY_NAMES)
    for name in local:
        assert ray_run[name] == local[name], name
    used = parity.exercised(tmp_path / "ray")
    assert used["summaries"] > 0 and used["memory_calls"] > 0, used


@pytest.mark.slow
def test_a_spend_cap_holds_across_the_ray_actors(cluster: str, sim_server: str, tmp_path: Path) -> None:
    """One meter actor for the run: the first response reaches a one-token cap, every other episode
    stops at its next request, unwritten, and the driver's meter learns what was spent."""
    from pushbench.policies.spend import Meter
    from pushbench.runner import RunIncomplete

    tasks = [t for t in load_tasks("reposcan") if t.repo == "requests"][:2]
    write_manifest(tmp_path / "m" / "reposcan.jsonl", tasks)
    grid = Grid("reposcan", ["standard", "stateqgp"], ["openai/sim-base"], ["full"], ["native"], 1, None, None, SEED)
    meter = Meter(max_total_tokens=1)
    with pytest.raises(RunIncomplete) as stop:
        run_grid(grid, tmp_path / "ray", workers=2, progress=False, manifest_root=tmp_path / "m", executor="ray",
                 policy_options={"base_url": sim_server, "request_timeout": 30, "cache": False}, concurrency=2,
                 meter=meter)
    assert stop.value.reason == "max_total_tokens" and len(stop.value.left) == 4
    assert (tmp_path / "ray" / "episodes.jsonl").read_text() == ""
    assert meter.spend.responses >= 1 and meter.halted is not None
