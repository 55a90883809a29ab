"""The grid runner: episode rows, traces, determinism, and resuming a run killed mid-write."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentkit import all_tasks
from pushbench import config
from pushbench.cli import app
from pushbench.log.models import FORMAT
from pushbench.scoring import score_events, score_run
from pushbench.runner import EpisodeSpec, Grid, read_done, run_grid, sort_jsonl, trace_name
from pushbench.tasks.base import write_manifest

REQUIRED = {"episode_id", "family", "task_id", "target", "budget", "controller", "memory", "model", "backend",
            "seed", "success", "valid_count", "submissions", "duplicate_submissions", "duplicate_submit_rate",
            "invalid_actions", "false_completion", "premature_stop", "reported_count", "reported_count_error",
            "steps", "valid_per_step", "repeated_searches", "llm_calls", "input_tokens", "output_tokens",
            "termination"}
RAW = {"episode_id", "family", "task_id", "target", "budget", "controller", "memory", "model", "backend",
       "seed", "llm_calls", "input_tokens", "output_tokens"}  # what a run writes; scoring adds the rest
ROOT = Path(__file__).resolve().parents[2]
PUSHBENCH = ROOT / ".venv" / "bin" / "pushbench"
GRID_ARGS = ["run", "--target", "10,25", "--limit", "8", "--controller", "standard,stateqgp",
             "--model", "sim/mini", "--seeds", "2", "--workers", "2", "--no-progress"]
GRID_SIZE = 8 * 2 * 2


@pytest.fixture(scope="module")
def requests_manifests(tmp_path_factory) -> Path:
    """A manifest root holding only the committed `requests` tasks (one search index to build)."""
    tasks = [t for t in all_tasks() if t.repo == "requests"]
    root = tmp_path_factory.mktemp("manifests")
    write_manifest(root / "reposcan.jsonl", tasks)
    return root


def small_grid(**kwargs) -> Grid:
    base = dict(family="reposcan", controllers=["standard", "stateqgp"], models=["sim/mini"], memories=["full"],
                backends=["native"], seeds=1, targets=[10, 25], master_seed=int(config.params("seed")))
    return Grid(**{**base, **kwargs})


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


# --------------------------------------------------------------------------- specs


def test_episode_ids_and_paired_seeds() -> None:
    a = EpisodeSpec("reposcan", "t1", "standard", "full", "sim/base", "native", 0)
    b = EpisodeSpec("reposcan", "t1", "stateqgp", "full", "sim/base", "native", 0)
    assert a.episode_id == "t1|standard|full|sim/base|native|s0"
    assert a.policy_seed(7) == b.policy_seed(7)  # paired across controllers
    assert a.policy_seed(7) != a.policy_seed(8)
    assert a.policy_seed(7) != EpisodeSpec("reposcan", "t1", "standard", "full", "sim/base", "native", 1).policy_seed(7)
    assert trace_name(a.episode_id) == "t1_standard_full_sim_base_native_s0.json.gz"


def test_grid_enumerates_tasks_then_conditions(requests_manifests: Path) -> None:
    grid = small_grid(seeds=2, limit=2)
    tasks = grid.tasks(requests_manifests)
    assert [t.target for t in tasks] == [10, 25] and len({t.task_id for t in tasks}) == 2
    episodes = grid.episodes(requests_manifests)
    assert len(episodes) == 2 * 2 * 2
    assert len({e.episode_id for e in episodes}) == len(episodes)


# --------------------------------------------------------------------------- output


@pytest.fixture(scope="module")
def small_run(requests_manifests: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("run-a")
    run_grid(small_grid(), out, workers=1, progress=False, manifest_root=requests_manifests)
    score_run(out, requests_manifests)
    return out


def test_runs_write_raw_facts_and_scoring_adds_the_metrics(small_run: Path) -> None:
    raw = [json.loads(t) for t in lines(small_run / "episodes.jsonl")]
    scored = [json.loads(t) for t in lines(small_run / "scored.jsonl")]
    assert all(set(row) == RAW | {"format"} and row["format"] == FORMAT for row in raw)  # the version is not a fact
    by_id = {r["episode_id"]: {k: v for k, v in r.items() if k != "format"} for r in raw}
    assert all("format" not in r for r in scored)
    assert len(by_id) == len(scored) and all({k: r[k] for k in RAW} == by_id[r["episode_id"]] for r in scored)


def test_episode_rows(small_run: Path, requests_manifests: Path) -> None:
    rows_text = lines(small_run / "scored.jsonl")
    assert len(rows_text) == 6 * 2
    assert rows_text == sorted(rows_text)
    ids = []
    for text in rows_text:
        row = json.loads(text)
        assert text == json.dumps(row, sort_keys=True)  # sorted keys, one compact line
        assert REQUIRED <= set(row)
        ids.append(row["episode_id"])
        assert row["episode_id"] == "|".join([row["task_id"], row["controller"], row["memory"], row["model"],
                                              row["backend"], f"s{row['seed']}"])
        assert row["family"] == "reposcan" and row["model"] == "sim/mini" and row["backend"] == "native"
        assert row["target"] in (10, 25) and row["budget"] == {10: 30, 25: 60}[row["target"]]
        assert row["success"] == (row["valid_count"] >= row["target"])
        assert 0 < row["steps"] <= row["budget"] and row["llm_calls"] >= row["steps"]
        assert row["input_tokens"] > 0 and row["output_tokens"] > 0
        assert row["termination"] in ("final", "give_up", "budget")
        assert "wall_seconds" not in row
    assert len(set(ids)) == len(ids)


def test_traces_are_gzip_json_with_messages_and_events(small_run: Path, requests_manifests: Path) -> None:
    rows = [json.loads(t) for t in lines(small_run / "scored.jsonl")]
    tasks = {t.task_id: t for t in small_grid().tasks(requests_manifests)}
    traces = sorted((small_run / "traces").iterdir())
    assert [p.name for p in traces] == sorted(trace_name(r["episode_id"]) for r in rows)
    for row in rows:
        raw = (small_run / "traces" / trace_name(row["episode_id"])).read_bytes()
        assert raw[:2] == b"\x1f\x8b"
        trace = json.loads(gzip.decompress(raw))
        assert trace["episode_id"] == row["episode_id"] and trace["format"] == FORMAT  # written by pushbench.log
        assert trace["messages"][0]["role"] == "assistant"
        assert sum(m["role"] == "assistant" for m in trace["messages"]) == row["llm_calls"]
        assert trace["events"][-1]["kind"] in ("end", "call")
        assert "wall_seconds" in trace and "Find" in trace["objective"]
        # the row's metrics are exactly those of the logged events
        metrics = score_events(trace["events"], tasks[row["task_id"]])
        assert {k: row[k] for k in metrics} == metrics


def test_wall_time_can_be_kept_out_of_traces(requests_manifests: Path, tmp_path: Path) -> None:
    run_grid(small_grid(limit=1), tmp_path, workers=1, progress=False, manifest_root=requests_manifests,
             wall_time=False)
    for path in (tmp_path / "traces").iterdir():
        assert "wall_seconds" not in json.loads(gzip.decompress(path.read_bytes()))


def test_two_runs_are_byte_identical(small_run: Path, requests_manifests: Path, tmp_path: Path) -> None:
    # (two worker processes against one: covered by the CLI test below, which forks outside pytest)
    run_grid(small_grid(), tmp_path, workers=1, progress=False, manifest_root=requests_manifests)
    assert (tmp_path / "episodes.jsonl").read_bytes() == (small_run / "episodes.jsonl").read_bytes()


def test_rerun_of_a_complete_run_changes_nothing(small_run: Path, requests_manifests: Path) -> None:
    before = (small_run / "episodes.jsonl").read_bytes()
    run_grid(small_grid(), small_run, workers=1, progress=False, manifest_root=requests_manifests)
    assert (small_run / "episodes.jsonl").read_bytes() == before


def test_read_done_drops_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "episodes.jsonl"
    assert read_done(path) == set()
    path.write_text('{"episode_id": "a"}\n{"episode_id": "b"}\n{"episode_id": "c', encoding="utf-8")
    assert read_done(path) == {"a", "b"}
    assert path.read_text(encoding="utf-8") == '{"episode_id": "a"}\n{"episode_id": "b"}\n'
    path.write_text('{"episode_id": "x', encoding="utf-8")
    assert read_done(path) == set() and path.read_bytes() == b""


def test_sort_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text('{"episode_id": "b"}\n\n{"episode_id": "a"}\n', encoding="utf-8")
    assert sort_jsonl(path) == 0
    assert path.read_text(encoding="utf-8") == '{"episode_id": "a"}\n{"episode_id": "b"}\n'


def test_resume_adds_only_missing_episodes(small_run: Path, requests_manifests: Path, tmp_path: Path) -> None:
    full = lines(small_run / "episodes.jsonl")
    partial = tmp_path / "episodes.jsonl"
    partial.write_text("".join(line + "\n" for line in full[::2]) + full[1][:40], encoding="utf-8")
    run_grid(small_grid(), tmp_path, workers=1, progress=False, manifest_root=requests_manifests)
    assert lines(partial) == full


# --------------------------------------------------------------------------- the CLI, killed and resumed


@pytest.fixture(scope="module")
def project_copy(tmp_path_factory) -> Path:
    """A project root (``PUSHBENCH_ROOT``) sharing params, snapshots and hidden answers with this one,
    whose manifest holds the committed flask and requests tasks only (no pytest index to build)."""
    tasks = [t for t in all_tasks() if t.repo in ("flask", "requests")]
    root = tmp_path_factory.mktemp("project")
    (root / "params.yaml").symlink_to(config.PARAMS_FILE)
    (root / "snapshots").symlink_to(config.SNAPSHOT_SRC.parent)
    (root / "data").mkdir()
    (root / "data" / "hidden").symlink_to(config.HIDDEN)
    (root / "data" / "calibration").symlink_to(config.ROOT / "data" / "calibration")  # the fitted SimLM profiles
    write_manifest(root / "data" / "manifests" / "reposcan.jsonl", tasks)
    return root


def _cli(out: Path) -> list[str]:
    return [str(PUSHBENCH), *GRID_ARGS, "--out", str(out)]


def _count(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


@pytest.mark.slow
def test_resume_after_kill_is_byte_identical(project_copy: Path, tmp_path: Path) -> None:
    if not PUSHBENCH.exists():
        pytest.skip(f"no {PUSHBENCH}")
    env = {**os.environ, "PUSHBENCH_ROOT": str(project_copy)}
    killed, reference = tmp_path / "killed", tmp_path / "reference"
    # grid: 6 flask tasks, then 2 requests tasks (N in 10, 25) x 2 controllers x 2 seeds
    victim = subprocess.Popen(_cli(killed), cwd=project_copy, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    path = killed / "episodes.jsonl"
    deadline = time.monotonic() + 120
    try:
        while _count(path) < 3 and victim.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
    finally:
        os.killpg(victim.pid, signal.SIGKILL)  # the run and its worker processes (its own session)
        victim.wait()
    at_kill = _count(path)
    assert 3 <= at_kill < GRID_SIZE, f"the run was not caught mid-way ({at_kill} lines)"
    assert victim.returncode == -signal.SIGKILL
    assert path.read_text(encoding="utf-8").splitlines()[:at_kill] != []

    with open(path, "ab") as sink:  # a record half-written when the process died
        sink.write(b'{"backend": "native", "budget": 60, "controller": "stateq')
    resumed = subprocess.Popen(_cli(killed), cwd=project_copy, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, start_new_session=True)
    try:
        # meanwhile: the same grid, uninterrupted, in this process with one worker
        grid = Grid("reposcan", ["standard", "stateqgp"], ["sim/mini"], ["full"], ["native"], 2, [10, 25], 8,
                    int(config.params("seed")))
        run_grid(grid, reference, workers=1, progress=False, manifest_root=project_copy / "data" / "manifests")
        _, err = resumed.communicate(timeout=180)
    finally:
        if resumed.poll() is None:
            os.killpg(resumed.pid, signal.SIGKILL)
            resumed.wait()
    assert resumed.returncode == 0, err.decode()[-2000:]

    result = path.read_bytes()
    expected = (reference / "episodes.jsonl").read_bytes()
    if result != expected:  # show the first differing record, not two long byte strings
        pairs = zip(result.decode().splitlines(), expected.decode().splitlines())
        first = next(((a, b) for a, b in pairs if a != b), None)
        pytest.fail(f"resumed run differs from the uninterrupted one ({at_kill} lines at the kill): {first}")
    rows = [json.loads(line) for line in lines(killed / "scored.jsonl")]
    ids = [r["episode_id"] for r in rows]
    assert len(ids) == GRID_SIZE == len(set(ids))
    assert result.decode().splitlines() == sorted(result.decode().splitlines())
    assert {r["controller"] for r in rows} == {"standard", "stateqgp"} and {r["seed"] for r in rows} == {0, 1}
    assert {r["task_id"].split("-")[1] for r in rows} == {"flask", "requests"}
    traces = {p.name for p in (killed / "traces").glob("*.json.gz")}
    assert traces == {trace_name(i) for i in ids} == {p.name for p in (reference / "traces").glob("*.json.gz")}

    # `pushbench summarize D --json`: one record per condition
    cli = CliRunner().invoke(app, ["summarize", str(killed), "--json"])
    assert cli.exit_code == 0, cli.output
    records = json.loads(cli.output)
    assert [r["controller"] for r in records] == ["standard", "stateqgp"]
    for record in records:
        assert record["episodes"] == GRID_SIZE // 2
        assert {"family", "model", "backend", "memory", "controller", "success_rate", "mean_valid",
                "duplicate_rate", "valid_per_step", "false_completion", "premature_stop", "repeated_searches",
                "mean_steps"} <= set(record)
        assert record["model"] == "sim/mini" and 0.0 <= record["success_rate"] <= 1.0
        mine = [r for r in rows if r["controller"] == record["controller"]]
        assert record["success_rate"] == pytest.approx(sum(r["success"] for r in mine) / len(mine), abs=1e-4)
    by = json.loads(CliRunner().invoke(app, ["summarize", str(killed / "scored.jsonl"), "--json",
                                             "--by", "controller,seed"]).output)
    assert len(by) == 4 and all(r["episodes"] == GRID_SIZE // 4 for r in by)
