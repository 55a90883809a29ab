"""The LangGraph backend: a real StateGraph with a SQLite checkpointer.

Equivalence: the same task, policy and seed give the native loop's exact transcript, verifier log
and counters, over several tasks and controllers. Resume: an episode killed inside any of the three
nodes continues from its last checkpoint with fresh objects, makes only the model calls that were
still missing, and ends exactly as an uninterrupted run.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentkit import make_env, task
from pushbench import config
from pushbench.runner import episode as runner
from pushbench.scoring import score_run
from pushbench.registry import BACKENDS
from pushbench.backends.langgraph import CheckpointMismatch, build_graph, open_saver, run_langgraph
from pushbench.backends.native import run_native
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.memory.viewlog import decode_view
from pushbench.policies import make_policy
from pushbench.runner import EpisodeSpec, Grid, backend_options, run_grid
from pushbench.tasks.base import write_manifest

CASES = [("reposcan-requests-fixture-n025", "standard", "sim/mini"),
         ("reposcan-requests-fixture-n025", "gated", "sim/mini"),
         ("reposcan-requests-calls-n025", "stateqgp", "sim/mini"),
         ("reposcan-requests-documented-n050", "stateqgp-dedupe", "sim/base"),
         ("reposcan-requests-calls-n010", "gated", "sim/base")]


def play(backend: Any, task_id: str, controller: str, model: str, seed: int = 3, **kwargs: Any):
    env = make_env(task_id)
    run = backend(env, make_policy(model), make_controller(controller), make_memory("full"), seed, **kwargs)
    return env, run


def sent(run: Any) -> list[list[dict[str, Any]]]:
    """The context each external turn was sent, as the run recorded it (the viewer's pages)."""
    views = run.views.as_trace()
    return [decode_view(v, run.transcript, views["pool"]) for v in views["segments"]]


def same(a: tuple, b: tuple) -> None:
    (env_a, run_a), (env_b, run_b) = a, b
    assert run_a.transcript == run_b.transcript
    assert sent(run_a) == sent(run_b) != []  # the views recorded, after a resume too
    assert env_a.verifier.events == env_b.verifier.events
    counts = lambda r: (r.llm_calls, r.input_tokens, r.output_tokens)  # noqa: E731
    assert counts(run_a) == counts(run_b)
    assert env_a.termination == env_b.termination


@pytest.mark.parametrize("task_id, controller, model", CASES)
def test_same_actions_and_outcome_as_native(task_id: str, controller: str, model: str, tmp_path: Path) -> None:
    native = play(run_native, task_id, controller, model)
    graph = play(run_langgraph, task_id, controller, model, checkpoint=tmp_path / "c.sqlite")
    same(graph, native)
    assert native[0].steps > 3


def test_registered_and_a_real_graph(tmp_path: Path) -> None:
    assert BACKENDS.entry("langgraph").meta["resumable"]
    with open_saver(tmp_path / "g.sqlite") as saver:
        graph = build_graph(saver)
        assert {"policy", "controller", "tools"} <= set(graph.get_graph().nodes)
    env, run = play(run_langgraph, "reposcan-requests-fixture-n010", "gated", "sim/base",
                    checkpoint=tmp_path / "g.sqlite", thread_id="kept", keep_thread=True)
    with open_saver(tmp_path / "g.sqlite") as saver:
        config = {"configurable": {"thread_id": "kept"}}
        graph = build_graph(saver)
        history = list(graph.get_state_history(config))
        final = graph.get_state(config)
    assert len(history) >= 3 * run.llm_calls  # a checkpoint per node run
    assert final.next == () and final.values["status"]["done"]
    assert [e["message"] for e in final.values["transcript"]] == run.transcript
    assert final.values["status"]["counters"] == {"llm_calls": run.llm_calls, "input_tokens": run.input_tokens,
                                                  "output_tokens": run.output_tokens}


class Crash(RuntimeError):
    pass


class CrashingPolicy:
    """The real policy, killed on its k-th call (the process dies while waiting for the model)."""

    def __init__(self, model: str, crash_at: int | None):
        self.inner = make_policy(model)
        self.name, self.context_window = self.inner.name, self.inner.context_window
        self.crash_at, self.calls = crash_at, 0

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int):
        self.calls += 1
        if self.calls == self.crash_at:
            raise Crash("killed")
        return self.inner.act(messages, tools, seed)


def crash_in(node: str, k: int, env: Any, controller: Any) -> None:
    """Make the controller (``controller`` node) or the environment (``tools`` node) die at step k."""
    if node == "controller":
        before = controller.before

        def dying_before(call, e):
            if e.steps + 1 == k:
                raise Crash("killed")
            return before(call, e)
        controller.before = dying_before
    elif node == "tools":
        execute = env.execute

        def dying_execute(call):
            if env.steps + 1 == k:
                raise Crash("killed")
            return execute(call)
        env.execute = dying_execute


@pytest.mark.parametrize("node", ["policy", "controller", "tools"])
@pytest.mark.parametrize("controller", ["stateqgp", "gated"])
def test_an_interrupted_episode_resumes_from_its_checkpoint(node: str, controller: str, tmp_path: Path) -> None:
    task_id, model, k = "reposcan-requests-calls-n025", "sim/mini", 6
    db = tmp_path / "ckpt.sqlite"
    reference = play(run_native, task_id, controller, model)

    env, ctrl = make_env(task_id), make_controller(controller)
    crash_in(node, k, env, ctrl)
    first = CrashingPolicy(model, k if node == "policy" else None)
    with pytest.raises(Crash):
        run_langgraph(env, first, ctrl, make_memory("full"), 3, checkpoint=db, thread_id="ep")
    assert env.steps == k - 1 and not env.done

    fresh_env, second = make_env(task_id), CrashingPolicy(model, None)
    run = run_langgraph(fresh_env, second, make_controller(controller), make_memory("full"), 3,
                        checkpoint=db, thread_id="ep")
    same((fresh_env, run), reference)
    calls_before_crash = k - 1 if node == "policy" else k  # a turn the model gave is not asked again
    assert first.calls == k and second.calls == reference[1].llm_calls - calls_before_crash
    with sqlite3.connect(db) as conn:  # the finished thread is gone
        assert conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 0


def test_a_checkpoint_of_another_episode_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    env, ctrl = make_env("reposcan-requests-calls-n025"), make_controller("standard")
    with pytest.raises(Crash):
        run_langgraph(env, CrashingPolicy("sim/mini", 4), ctrl, make_memory("full"), 3, checkpoint=db, thread_id="x")
    with pytest.raises(CheckpointMismatch):
        run_langgraph(make_env("reposcan-requests-fixture-n010"), make_policy("sim/mini"), make_controller("standard"),
                      make_memory("full"), 3, checkpoint=db, thread_id="x")


def test_runner_gives_each_episode_its_own_checkpoint_file(tmp_path: Path) -> None:
    spec = EpisodeSpec("reposcan", "t", "gated", "full", "sim/base", "langgraph", 2)
    options = backend_options(spec, tmp_path / "traces")
    assert options["thread_id"] == spec.episode_id and options["remove_when_done"]
    assert options["checkpoint"].parent == tmp_path / "checkpoints" and options["checkpoint"].suffix == ".sqlite"
    assert backend_options(EpisodeSpec("reposcan", "t", "gated", "full", "sim/base", "native", 2), tmp_path) == {}
    env, run = play(run_langgraph, "reposcan-requests-fixture-n010", "gated", "sim/base", **options)
    assert env.done and not options["checkpoint"].exists()


def test_the_runner_resumes_a_killed_langgraph_episode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_manifest(tmp_path / "m" / "reposcan.jsonl", [task("reposcan-requests-calls-n025")])
    kw = dict(family="reposcan", controllers=["stateqgp"], models=["sim/mini"], memories=["full"], seeds=1,
              master_seed=int(config.params("seed")))
    native = score_run(run_grid(Grid(backends=["native"], **kw), tmp_path / "n", progress=False,
                                manifest_root=tmp_path / "m").parent, tmp_path / "m")
    out = tmp_path / "g"
    monkeypatch.setattr(runner, "make_policy", lambda model, **o: CrashingPolicy(model, 7))
    with pytest.raises(Crash):
        run_grid(Grid(backends=["langgraph"], **kw), out, progress=False, manifest_root=tmp_path / "m")
    assert len(list((out / "checkpoints").glob("*.sqlite"))) == 1  # the episode in progress
    calls: list[CrashingPolicy] = []
    def fresh(model: str, **options: Any) -> CrashingPolicy:
        calls.append(CrashingPolicy(model, None))
        return calls[-1]
    monkeypatch.setattr(runner, "make_policy", fresh)
    path = score_run(run_grid(Grid(backends=["langgraph"], **kw), out, progress=False,
                              manifest_root=tmp_path / "m").parent, tmp_path / "m")
    (row,), (reference,) = ([json.loads(x) for x in p.read_text().splitlines()] for p in (path, native))
    strip = lambda r: {k: v for k, v in r.items() if k not in ("backend", "episode_id")}  # noqa: E731
    assert strip(row) == strip(reference)
    assert calls[0].calls == reference["llm_calls"] - 6  # resumed after the six answered calls
    assert not list((out / "checkpoints").glob("*"))


KILLED_CHILD = """
import os, sys, time
from pushbench.backends.langgraph import run_langgraph
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.policies import make_policy
from pushbench.tasks import get_family, load_tasks

spec = next(t for t in load_tasks("reposcan") if t.task_id == sys.argv[1])
inner, k = make_policy("sim/mini"), int(sys.argv[3])

class Dying:
    name, context_window, calls = inner.name, inner.context_window, 0

    def act(self, messages, tools, seed):
        self.calls += 1
        if self.calls == k:
            time.sleep(0.5)  # a slow model call: what came before is committed meanwhile
            os._exit(9)  # killed: no cleanup, no final commit
        return inner.act(messages, tools, seed)

run_langgraph(get_family("reposcan").environment(spec), Dying(), make_controller("stateqgp"), make_memory("full"),
              3, checkpoint=sys.argv[2], thread_id="killed")
"""


def test_a_killed_process_resumes_from_its_last_committed_checkpoint(tmp_path: Path) -> None:
    import subprocess
    import sys

    task_id, k, db = "reposcan-requests-calls-n025", 8, tmp_path / "ckpt.sqlite"
    child = subprocess.run([sys.executable, "-c", KILLED_CHILD, task_id, str(db), str(k)], cwd=config.ROOT,
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 9, child.stderr
    reference = play(run_native, task_id, "stateqgp", "sim/mini")
    env, policy = make_env(task_id), CrashingPolicy("sim/mini", None)
    run = run_langgraph(env, policy, make_controller("stateqgp"), make_memory("full"), 3, checkpoint=db,
                        thread_id="killed")
    same((env, run), reference)
    assert policy.calls <= reference[1].llm_calls - (k - 2)  # resumed, not restarted


@pytest.mark.parametrize("family", ["dataops", "swe"])
def test_work_unit_families_give_the_same_episodes_on_both_backends(family: str, tmp_path: Path) -> None:
    """The full controller grid of a work-unit family, one task: LangGraph rows equal native rows."""
    base = dict(family=family, controllers=["standard", "gated", "unitqgp"], models=["sim/mini"],
                memories=["full"], seeds=1, targets=None, limit=1, master_seed=11)
    native = score_run(run_grid(Grid(backends=["native"], **base), tmp_path / "n", progress=False).parent)
    graph = score_run(run_grid(Grid(backends=["langgraph"], **base), tmp_path / "g", progress=False).parent)
    strip = lambda row: {k: v for k, v in row.items() if k not in ("backend", "episode_id", "wall_seconds")}  # noqa: E731
    rows = lambda path: [strip(json.loads(line)) for line in path.read_text().splitlines()]  # noqa: E731
    assert len(rows(native)) == 3 and rows(graph) == rows(native)
    assert sum(r["steps"] for r in rows(native)) > 10


# --- ACG on LangGraph (issue 13 item 6): the same verified outcome, and resume after a kill -----------

def play_with(memory: str, backend: Any, task_id: str, controller: str, model: str, seed: int = 3, **kwargs: Any):
    env = make_env(task_id)
    run = backend(env, make_policy(model), make_controller(controller), make_memory(memory), seed, **kwargs)
    return env, run


@pytest.mark.parametrize("controller", ["standard", "stateqgp"])
def test_acg_gives_the_native_outcome_on_langgraph(controller: str, tmp_path: Path) -> None:
    task_id, model = "reposcan-requests-calls-n025", "sim/base"
    native = play_with("acg", run_native, task_id, controller, model)
    graph = play_with("acg", run_langgraph, task_id, controller, model, checkpoint=tmp_path / "c.sqlite")
    same(graph, native)
    assert native[0].verifier.events and native[0].steps > 3


def test_acg_resumes_a_killed_langgraph_episode(tmp_path: Path) -> None:
    task_id, model, k = "reposcan-requests-calls-n025", "sim/mini", 7
    db = tmp_path / "ckpt.sqlite"
    reference = play_with("acg", run_native, task_id, "stateqgp", model)
    env, ctrl = make_env(task_id), make_controller("stateqgp")
    crash_in("tools", k, env, ctrl)
    with pytest.raises(Crash):
        run_langgraph(env, CrashingPolicy(model, None), ctrl, make_memory("acg"), 3, checkpoint=db, thread_id="ep")
    fresh_env = make_env(task_id)
    run = run_langgraph(fresh_env, CrashingPolicy(model, None), make_controller("stateqgp"), make_memory("acg"), 3,
                        checkpoint=db, thread_id="ep")
    same((fresh_env, run), reference)


@pytest.mark.parametrize("family", ["dataops", "swe"])
def test_acg_work_unit_rows_match_across_backends(family: str, tmp_path: Path) -> None:
    base = dict(family=family, controllers=["unitqgp"], models=["sim/base"], memories=["acg"], seeds=1,
                targets=None, limit=1, master_seed=11)
    native = score_run(run_grid(Grid(backends=["native"], **base), tmp_path / "n", progress=False).parent)
    graph = score_run(run_grid(Grid(backends=["langgraph"], **base), tmp_path / "g", progress=False).parent)
    strip = lambda row: {k: v for k, v in row.items() if k not in ("backend", "episode_id", "wall_seconds")}  # noqa: E731
    rows = lambda path: [strip(json.loads(line)) for line in path.read_text().splitlines()]  # noqa: E731
    assert rows(graph) == rows(native) and rows(native)[0]["steps"] > 5
