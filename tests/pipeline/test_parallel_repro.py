"""``python -m pushbench.pipeline``: the same dvc.lock as ``dvc repro``, independent stages side by side."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pushbench.pipeline import Plan, plan_of

ROOT = Path(__file__).resolve().parents[2]
DVC = ROOT / ".venv" / "bin" / "dvc"

# a -> b, a -> c, (b, c) -> d; b and c each sleep, and log when they start and end
STAGE = "python -c \"import sys,time,pathlib; p=pathlib.Path('log'); p.open('a').write('start {0}\\n'); " \
        "time.sleep({1}); p.open('a').write('end {0}\\n'); pathlib.Path('{0}.out').write_text(open('{2}').read() + '{0}')\""


def _project(path: Path) -> Path:
    path.mkdir()
    (path / "input.txt").write_text("x")
    (path / "params.yaml").write_text("run: {stages: 2}\nk: 1\n")
    stages = {
        "a": {"cmd": STAGE.format("a", 0, "input.txt"), "deps": ["input.txt"], "params": ["k"], "outs": ["a.out"]},
        "b": {"cmd": STAGE.format("b", 1.5, "a.out"), "deps": ["a.out"], "outs": ["b.out"]},
        "c": {"cmd": STAGE.format("c", 1.5, "a.out"), "deps": ["a.out"], "outs": [{"c.out": {"cache": False}}]},
        "d": {"cmd": "cat b.out c.out > d.out", "deps": ["b.out", "c.out"], "outs": ["d.out"]},
    }
    (path / "dvc.yaml").write_text(yaml.safe_dump({"stages": stages}, sort_keys=False))
    for cmd in (["git", "init", "-q"], [str(DVC), "init", "-q"], [str(DVC), "config", "core.analytics", "false"]):
        subprocess.run(cmd, cwd=path, check=True)
    return path


def _driver(path: Path, jobs: int = 2) -> subprocess.CompletedProcess[str]:
    code = ("import sys; from dvc.repo import Repo; from pathlib import Path; "
            "from pushbench.pipeline.repro import Driver; "
            f"r = Repo('.'); sys.exit(Driver(r, {jobs}, Path('.').resolve()).run())")
    return subprocess.run([sys.executable, "-c", code], cwd=path, capture_output=True, text=True,
                          env={"PATH": f"{DVC.parent}:/usr/bin:/bin", "HOME": str(path)})


@pytest.mark.skipif(not DVC.exists(), reason="needs the project's .venv (make install)")
def test_the_driver_writes_what_dvc_repro_writes_and_runs_independent_stages_together(tmp_path: Path) -> None:
    serial, parallel = _project(tmp_path / "serial"), _project(tmp_path / "parallel")
    subprocess.run([str(DVC), "repro", "-q"], cwd=serial, check=True, env={"PATH": f"{DVC.parent}:/usr/bin:/bin"})
    done = _driver(parallel)
    assert done.returncode == 0, done.stderr
    # the same entries (a new lock lists stages in the order they finished; an existing one keeps its order)
    assert yaml.safe_load((parallel / "dvc.lock").read_text()) == yaml.safe_load((serial / "dvc.lock").read_text())
    assert (parallel / "d.out").read_text() == "xabxac"
    log = (parallel / "log").read_text().split("\n")
    assert log.index("start c") < log.index("end b") and log.index("start b") < log.index("end c")  # side by side
    status = subprocess.run([str(DVC), "status", "--json"], cwd=parallel, capture_output=True, text=True, check=True)
    assert json.loads(status.stdout) == {}
    again = _driver(parallel)
    assert again.returncode == 0 and "every stage is up to date" in again.stdout
    before = (serial / "dvc.lock").read_bytes()  # the serial lock, re-made by the driver: the same bytes
    (serial / "log").unlink()
    (serial / "input.txt").write_text("y")
    assert _driver(serial).returncode == 0
    (serial / "input.txt").write_text("x")
    assert _driver(serial).returncode == 0
    assert (serial / "dvc.lock").read_bytes() == before


@pytest.mark.skipif(not DVC.exists(), reason="needs the project's .venv (make install)")
def test_an_edit_reruns_only_what_depends_on_it_and_a_failure_is_one_error(tmp_path: Path) -> None:
    path = _project(tmp_path / "p")
    assert _driver(path).returncode == 0
    (path / "log").unlink()
    dvc_yaml = yaml.safe_load((path / "dvc.yaml").read_text())
    dvc_yaml["stages"]["c"]["cmd"] += " && true"
    (path / "dvc.yaml").write_text(yaml.safe_dump(dvc_yaml, sort_keys=False))
    assert _driver(path).returncode == 0
    assert (path / "log").read_text().split() == ["start", "c", "end", "c"]  # a and b untouched; d re-ran (c.out same)
    dvc_yaml["stages"]["b"]["cmd"] = "exit 3"
    (path / "dvc.yaml").write_text(yaml.safe_dump(dvc_yaml, sort_keys=False))
    failed = _driver(path)
    assert failed.returncode == 1
    assert "error: stage b failed (exit 3)" in failed.stderr


def test_the_plan_prefers_stages_with_more_downstream_work() -> None:
    plan = Plan({"a": set(), "b": {"a"}, "c": set(), "d": {"b"}}, ["a", "c", "b", "d"])
    assert plan.ready(set()) == ["a", "c"]
    plan.done |= {"a"}
    assert plan.ready({"c"}) == ["b"]
    plan.ran.add("a")
    assert plan.needs_run("b", lambda: False) and not plan.needs_run("c", lambda: False)


class _Stage:
    def __init__(self, name: str) -> None:
        self.addressing = name


def test_plan_of_orders_by_downstream_count() -> None:
    import networkx as nx

    s = {n: _Stage(n) for n in "abcd"}
    graph = nx.DiGraph()
    graph.add_nodes_from(s.values())
    graph.add_edge(s["b"], s["a"])
    graph.add_edge(s["d"], s["b"])
    plan = plan_of(graph)
    assert plan.order[:2] == ["a", "b"] and plan.upstream["d"] == {"b"}
