"""One run per folder: a second run on a locked --out stops at once; finishing deduplicates rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import pushbench
from pushbench import config
from pushbench.cli import app
from pushbench.runner import Grid, RunLocked, read_done, run_grid, sort_jsonl
from pushbench.runner.lock import LOCK_NAME, run_lock

SRC = Path(pushbench.__file__).resolve().parents[1]
HOLD = "import sys; from pathlib import Path; from pushbench.runner.lock import run_lock\n" \
       "with run_lock(Path(sys.argv[1])):\n    print('held', flush=True); sys.stdin.read()\n"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PUSHBENCH_ROOT"}
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    return env


@pytest.fixture
def holder(tmp_path: Path):
    """Another process holding the run folder ``tmp/out`` until the test ends."""
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env=_env(), text=True)
    assert proc.stdout.readline().strip() == "held"
    yield out, proc
    proc.communicate(timeout=30)


def small_grid(**kwargs) -> Grid:
    base = dict(family="reposcan", controllers=["standard"], models=["sim/mini"], memories=["full"],
                backends=["native"], seeds=1, targets=[10], limit=2, master_seed=int(config.params("seed")))
    return Grid(**{**base, **kwargs})


def test_the_cli_refuses_a_locked_folder_in_one_line(holder, built_data: Path, monkeypatch) -> None:
    out, proc = holder
    monkeypatch.setattr(config, "MANIFESTS", built_data / "manifests")
    result = CliRunner().invoke(app, ["run", "--target", "10", "--limit", "1", "--no-progress", "--out", str(out)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    (line,) = result.output.splitlines()
    assert line.startswith(f"error: another run (pid {proc.pid} on ") and "is writing to" in line
    assert "choose another --out (one run per folder)" in line
    assert sorted(p.name for p in out.iterdir()) == [LOCK_NAME]  # nothing of this run was written


def test_both_executors_honour_the_lock(holder, built_data: Path) -> None:
    out, _ = holder
    manifests = built_data / "manifests"
    with pytest.raises(RunLocked):  # SimLM: worker processes
        run_grid(small_grid(), out, workers=2, progress=False, manifest_root=manifests)
    with pytest.raises(RunLocked):  # an API model: the async executor (no request is ever sent)
        run_grid(small_grid(models=["openai/nobody"]), out, progress=False, manifest_root=manifests,
                 policy_options={"base_url": "http://127.0.0.1:9/v1", "cache": False})
    assert not (out / "episodes.jsonl").exists()


def test_the_lock_goes_with_the_run(tmp_path: Path, built_data: Path) -> None:
    out = tmp_path / "out"
    with run_lock(out):
        assert (out / LOCK_NAME).is_file()
        with pytest.raises(RunLocked):  # the same process cannot take it twice either
            with run_lock(out):
                pass
    assert not (out / LOCK_NAME).exists()  # a finished run folder holds only its outputs
    run_grid(small_grid(), out, progress=False, manifest_root=built_data / "manifests")
    assert sorted(p.name for p in out.iterdir()) == ["episodes.jsonl", "traces"]


@pytest.mark.slow
def test_two_concurrent_cli_runs_on_one_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    # large enough that the first run still holds the lock once the second has started (48 episodes
    # were done within the second's start-up once the runs got faster)
    grid = ["run", "--target", "10,25", "--limit", "6", "--seeds", "12", "--controller", "standard,stateqgp",
            "--model", "sim/mini", "--no-progress", "--format", "csv", "--out", str(out)]
    first = subprocess.Popen([sys.executable, "-m", "pushbench.cli", *grid], cwd=config.ROOT, env=_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (out / LOCK_NAME).exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        started = time.monotonic()
        second = subprocess.run([sys.executable, "-m", "pushbench.cli", *grid], cwd=config.ROOT, env=_env(),
                                capture_output=True, text=True, timeout=60)
        assert first.poll() is None, "the first run ended before the second started: make its grid larger"
        _, err = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            first.kill()
    assert second.returncode == 1 and second.stdout == "" and time.monotonic() - started < 30
    (line,) = second.stderr.splitlines()
    assert line.startswith(f"error: another run (pid {first.pid} on ") and str(out) in line
    assert first.returncode == 0, err[-2000:]
    ids = [json.loads(line)["episode_id"] for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 6 * 12 * 2
    assert not (out / LOCK_NAME).exists()


# --------------------------------------------------------------------------- duplicates


def test_sort_jsonl_keeps_the_first_complete_row_of_each_episode(tmp_path: Path) -> None:
    path = tmp_path / "episodes.jsonl"
    path.write_text('{"episode_id": "b", "v": 1}\n{"episode_id": "a", "v": 1}\n{"episode_id": "b", "v": 2}\n'
                    '{"episode_id": "a", "v"\n[1, 2]\n{"no_id": 1}\n{"episode_id": "a", "v": 1}\n', encoding="utf-8")
    assert sort_jsonl(path) == 5
    assert path.read_text(encoding="utf-8") == '{"episode_id": "a", "v": 1}\n{"episode_id": "b", "v": 1}\n'
    assert not (tmp_path / "episodes.tmp").exists()


def test_read_done_skips_a_garbled_middle_line(tmp_path: Path) -> None:
    path = tmp_path / "episodes.jsonl"
    path.write_text('{"episode_id": "a"}\n{"episode_id": "b", "cont{"episode_id": "c"}\n{"episode_id": "d"}\n')
    assert read_done(path) == {"a", "d"}  # b and c run again; the end of the run drops the garbled line


def test_a_rerun_removes_injected_duplicates(tmp_path: Path, built_data: Path) -> None:
    manifests, out = built_data / "manifests", tmp_path / "run"
    grid = small_grid(controllers=["standard", "stateqgp"])
    run_grid(grid, out, progress=False, manifest_root=manifests)
    clean = (out / "episodes.jsonl").read_bytes()
    rows = clean.decode().splitlines()
    assert len(rows) == 4
    # what two interleaved runs leave: repeated rows, a row torn by the other writer, out of order
    dirty = [rows[2], rows[0], rows[0], rows[1][:30] + rows[3], rows[1], rows[2], rows[3], rows[3]]
    (out / "episodes.jsonl").write_text("".join(r + "\n" for r in dirty), encoding="utf-8")
    run_grid(grid, out, progress=False, manifest_root=manifests)  # nothing left to run: only the clean-up
    assert (out / "episodes.jsonl").read_bytes() == clean
