"""Evidence recall: replaying recorded traces through memories with no model, and the share of
each decision's needed evidence its view holds."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentkit import ScriptedPolicy, call_msg, data_missing, make_env as real_env
from handmade import make_spec
from pushbench.backends.native import run_native
from pushbench.cli import app
from pushbench.controllers import make_controller
from pushbench.memory import make_memory
from pushbench.log.models import EpisodeRow, Trace
from pushbench.log.rows import row_line
from pushbench.log.traces import read_trace, write_trace
from pushbench.replay.recall import (BUCKETS, RecallError, bucket_of, recall_by_length, run_recall, summary)
from pushbench.replay.recall.evidence import Seen, evidence_rule, view_text
from pushbench.replay.recall.replay import Recording, ReplayStats, replay

GOOD = "tests/test_api.py::test_get"
FILLER = call_msg("search", {"query": "Client fetch", "page": 1})


def record(tmp_path: Path, make_fixture_env, script: list[dict[str, Any]], memory: str = "full",
           name: str = "run") -> tuple[Path, ScriptedPolicy]:
    """Run ``script`` on the fixture repo (huge window: nothing trimmed) and write a run folder."""
    env, policy = make_fixture_env(), ScriptedPolicy(script, then=call_msg("final", {"count": 1}))
    run = run_native(env, policy, make_controller("standard"), make_memory(memory), 0)
    episode_id = f"{env.task.task_id}|standard|{memory}|stub/scripted|native|s0"
    out = tmp_path / name
    write_trace(out / "traces", Trace(episode_id, env.verifier.events, objective=env.task.objective,
                                      messages=run.transcript))
    row = EpisodeRow(episode_id, "reposcan", env.task.task_id, "standard", memory, "stub/scripted", "native", 0,
                     env.task.target, env.task.budget, run.llm_calls, run.input_tokens, run.output_tokens)
    (out / "episodes.jsonl").write_text(row_line(row), encoding="utf-8")
    return out, policy


def recall(run_dir: Path, make_fixture_env, memories: list[str], budget: int):
    spec = make_spec()
    return run_recall(run_dir, memories, budget, tasks={spec.task_id: spec}, make_env=lambda _t: make_fixture_env())


EARLY_HIT = [call_msg("search", {"query": "test_get db", "page": 1}), *[FILLER] * 6,
             call_msg("submit", {"ids": [GOOD]}), call_msg("submit", {"ids": [GOOD]})]


def test_full_loses_an_early_hit_at_a_small_budget(tmp_path: Path, make_fixture_env) -> None:
    run_dir, policy = record(tmp_path, make_fixture_env, EARLY_HIT)
    first_obs = policy.seen[1][-1]["content"]
    assert re.search(rf"^\[\d+\] {re.escape(GOOD)}$", first_obs, re.M)  # the search showed the hit ...
    assert all(GOOD not in view[-1]["content"] for view in policy.seen[2:8])  # ... and no filler did
    wide = summary(recall(run_dir, make_fixture_env, ["full"], 100_000)).iloc[0]
    # decision 1 (action 8) needs the hit; decision 2 (action 9) the hit and the verdict just before it
    assert (wide["decisions"], wide["needed"], wide["recalled"], wide["share"]) == (2, 3, 3, 1.0)
    result = recall(run_dir, make_fixture_env, ["full"], 700)
    small = summary(result).iloc[0]
    assert (small["decisions"], small["needed"], small["recalled"]) == (2, 3, 1)
    assert small["share"] == pytest.approx(1 / 3)
    first, second = result.decisions
    assert (first.action, first.needed, first.recalled) == (8, (f"hit:{GOOD}",), ())
    assert (second.action, second.needed, second.recalled) == (9, (f"hit:{GOOD}", f"verdict:{GOOD}"),
                                                               (f"verdict:{GOOD}",))


def test_every_memory_is_judged_on_the_same_decisions(tmp_path: Path, make_fixture_env) -> None:
    run_dir, _ = record(tmp_path, make_fixture_env, EARLY_HIT)
    result = recall(run_dir, make_fixture_env, ["full", "memgpt", "langgraph-store"], 700)
    table = summary(result)
    assert list(table["memory"]) == ["full", "memgpt", "langgraph-store"]
    assert set(table["decisions"]) == {2} and set(table["needed"]) == {3}
    assert all(0 <= r <= 3 for r in table["recalled"])
    by = recall_by_length(result)
    assert list(by.columns) == ["memory", "bucket", "decisions", "needed", "recalled", "share"]
    assert list(by["bucket"]) == ["1-20"] * 3 and list(by["recalled"]) == list(table["recalled"])


def test_replay_at_the_recorded_window_reproduces_the_views(tmp_path: Path, make_fixture_env) -> None:
    """The replay feeds the builder exactly as the loop did: the same views the policy saw."""
    for memory in ("full", "memgpt", "langgraph-store"):
        script = EARLY_HIT[:3] + [call_msg("core_memory_append", {"label": "progress", "content": "note"}, "m")] \
            + EARLY_HIT[3:]
        run_dir, policy = record(tmp_path, make_fixture_env, script, memory, name=memory)
        trace = read_trace(next((run_dir / "traces").iterdir())).as_json()
        tools = frozenset(t["function"]["name"] for t in (make_memory(memory).tools() if memory == "memgpt" else []))
        recording = Recording(trace["messages"], trace["objective"], make_controller("standard"), memory, tools, None)
        stats = ReplayStats()
        views = [t.view for t in replay(recording, make_memory(memory), 1_000_000, make_fixture_env(), stats)]
        # the view before the memory call (the 4th turn) precedes an internal turn, not a decision
        external = policy.seen[:3] + policy.seen[4:] if memory == "memgpt" else policy.seen
        assert [list(map(dict, v)) for v in views] == external
        assert (stats.memory_calls, stats.mismatched_replies) == ((1, 0) if memory == "memgpt" else (0, 0))


def test_memgpt_keeps_what_the_policy_wrote_into_core_memory(tmp_path: Path, make_fixture_env) -> None:
    """A recorded memgpt run's memory calls are replayed into memgpt only: its core block keeps the
    hit line after the transcript is evicted; full never saw the call."""
    note = call_msg("core_memory_append", {"label": "progress", "content": f"[1] {GOOD}"}, "m1")
    script = [EARLY_HIT[0], note, *[FILLER] * 6, call_msg("submit", {"ids": [GOOD]})]
    run_dir, _ = record(tmp_path, make_fixture_env, script, "memgpt")
    result = recall(run_dir, make_fixture_env, ["memgpt", "full"], 1_500)
    memgpt, full = result.decisions
    assert memgpt.memory == "memgpt" and memgpt.recalled == (f"hit:{GOOD}",)
    assert full.memory == "full" and full.needed == (f"hit:{GOOD}",) and full.recalled == ()
    assert result.mismatched_memory_replies == 0


def test_an_id_nothing_showed_needs_no_evidence() -> None:
    rule = evidence_rule("reposcan")
    history = [Seen(1, "search", f"search \"x\": page 1 of 1 (1 results)\n[1] {GOOD}\n    L3: def test_get(db):")]
    assert [n.unit for n in rule.needed("submit", {"ids": ["a.py::b", GOOD, GOOD]}, history)] == [f"hit:{GOOD}"]
    assert rule.needed("search", {"query": "x"}, history) is None  # not a decision
    assert rule.needed("submit", "not json", history) == []


def test_the_latest_verdict_is_the_needed_one() -> None:
    rule = evidence_rule("reposcan")
    history = [Seen(1, "submit", f"submit: 0 accepted, 1 rejected, 0 duplicate\n  rejected  {GOOD}"),
               Seen(2, "submit", f"submit: 0 accepted, 0 rejected, 1 duplicate\n  duplicate {GOOD}")]
    (needed,) = rule.needed("submit", {"ids": [GOOD]}, history)
    assert needed.unit == f"verdict:{GOOD}"
    assert needed.present(f"  duplicate {GOOD}") and not needed.present(f"  rejected  {GOOD}")
    assert not needed.present(f"  duplicate {GOOD}x")  # another id that starts with this one


def test_a_unit_submit_needs_its_last_checker_result() -> None:
    rule = evidence_rule("dataops")
    history = [Seen(1, "run_checker", "checker U01: FAIL\nanswer '4' does not match"),
               Seen(2, "run_checker", "checker U02: PASS\nanswer ok"),
               Seen(3, "run_checker", "checker U01: PASS\nanswer '5.1' matches\nmore")]
    (needed,) = rule.needed("submit", {"unit": "U01"}, history)
    assert needed.unit == "checker:U01"
    assert needed.present("x\nchecker U01: PASS\nanswer '5.1' matches")
    assert not needed.present("checker U01: FAIL\nanswer '4' does not match")
    assert view_text([{"role": "tool", "content": "| checker U01: PASS\n| answer '5.1' matches"}]).startswith(
        "checker U01: PASS\nanswer")  # memory search quotes are read as the lines they quote
    assert rule.needed("submit", {"unit": "U03"}, history) == []  # never checked: nothing to recall
    assert rule.needed("run_checker", {"unit": "U01"}, history) is None


def test_buckets() -> None:
    assert [bucket_of(a) for a in (1, 20, 21, 60, 61, 100, 101, 500)] == \
        ["1-20", "1-20", "21-40", "41-60", "61-100", "61-100", "101+", "101+"]
    assert BUCKETS[-1][1] is None


def test_bad_input_is_one_clear_error(tmp_path: Path, make_fixture_env) -> None:
    run_dir, _ = record(tmp_path, make_fixture_env, EARLY_HIT[:1])
    with pytest.raises(RecallError, match="unknown memory 'nope'"):
        recall(run_dir, make_fixture_env, ["full", "nope"], 1000)
    with pytest.raises(RecallError, match="at least 256"):
        recall(run_dir, make_fixture_env, ["full"], 10)
    with pytest.raises(RecallError, match="no episodes.jsonl"):
        recall(tmp_path / "missing", make_fixture_env, ["full"], 1000)
    result = CliRunner().invoke(app, ["memory", "recall", str(tmp_path / "missing"), "--budget", "1000"])
    assert result.exit_code == 1 and result.output.startswith("error: ") and "no episodes.jsonl" in result.output
    assert len(result.output.splitlines()) == 1


@pytest.mark.skipif(data_missing() is not None, reason="needs snapshots and manifests")
def test_cli_on_a_real_episode(tmp_path: Path) -> None:
    from pushbench.policies import make_policy

    env = real_env("reposcan-requests-fixture-n025")
    run = run_native(env, make_policy("sim/mini"), make_controller("standard"), make_memory("full"), 1)
    episode_id = f"{env.task.task_id}|standard|full|sim/mini|native|s1"
    write_trace(tmp_path / "traces", Trace(episode_id, env.verifier.events, objective=env.task.objective,
                                           messages=run.transcript))
    row = EpisodeRow(episode_id, "reposcan", env.task.task_id, "standard", "full", "sim/mini", "native", 1,
                     env.task.target, env.task.budget, run.llm_calls, run.input_tokens, run.output_tokens)
    (tmp_path / "episodes.jsonl").write_text(row_line(row), encoding="utf-8")
    out = CliRunner().invoke(app, ["memory", "recall", str(tmp_path), "--memory", "full,memgpt,langgraph-store",
                                   "--budget", "3000", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert [r["memory"] for r in data["summary"]] == ["full", "memgpt", "langgraph-store"]
    assert data["episodes"] == 1 and len({r["needed"] for r in data["summary"]}) == 1
    assert data["summary"][0]["needed"] > 0
    table = CliRunner().invoke(app, ["memory", "recall", str(tmp_path), "--memory", "full", "--budget", "3000"])
    assert table.exit_code == 0 and "share recalled" in table.output


REAL_RUN = Path(__file__).parent / "data" / "recall-run"  # one stored SimLM memgpt episode with 3 summaries


@pytest.mark.skipif(data_missing() is not None, reason="needs snapshots and manifests")
def test_a_stored_memgpt_trace_replays_with_its_own_summaries_at_the_recorded_window() -> None:
    from pushbench.log.names import trace_name
    from pushbench.replay.recall import load_recording, recorded_window

    row = json.loads((REAL_RUN / "episodes.jsonl").read_text(encoding="utf-8"))
    window = recorded_window(row["model"])
    recording = load_recording(row, REAL_RUN / "traces" / trace_name(row["episode_id"]), window)
    summaries = [m for m in recording.messages if m.get("name") == "memory-summary"]
    assert len(summaries) == 3 and "core_memory_append" in recording.memory_tools
    env = real_env(row["task_id"])
    own = ReplayStats()
    views = [t.view for t in replay(recording, make_memory("memgpt"), window, env, own)]
    # the evictions fall where they fell: each summary request gets its recorded reply, none is left
    assert (own.side_requests, own.side_unanswered, own.mismatched_replies) == (3, 0, 0)
    assert own.memory_calls == sum(1 for m in recording.messages if m.get("role") == "assistant"
                                   and m.get("tool_calls") and m["tool_calls"][0]["function"]["name"]
                                   in recording.memory_tools)
    assert any(summaries[-1]["content"] in view_text(v) for v in views)  # the last summary was shown
    other = ReplayStats()
    list(replay(recording, make_memory("memgpt"), window // 2, env, other))
    assert other.side_requests == 0  # another budget: no recorded summary is handed out
    result = run_recall(REAL_RUN, ["memgpt", "full"], window)
    table = summary(result)
    assert result.episodes == 1 and result.mismatched_memory_replies == 0
    assert table["decisions"].iloc[0] == table["decisions"].iloc[1] > 10
    assert 0 < table["share"].iloc[0] <= 1 and 0 < table["share"].iloc[1] <= 1


def test_rows_hits_are_row_lines() -> None:
    rule = evidence_rule("rows")
    history = [Seen(1, "rows", "rows iris: page 1 of 8 (150 rows)\nid,a,b\nr0001,5.1,3.5\nr0002,4.9,3.0")]
    (needed,) = rule.needed("submit", {"ids": ["r0002", "r0099"]}, history)
    assert needed.unit == "hit:r0002" and needed.present("x\nr0002,4.9,3.0") and not needed.present("r00021,1")


def test_a_unit_decision_through_the_replay(tmp_path: Path) -> None:
    """DataOps-style: the checker result is early, the submit late; full keeps it only with room."""
    from pushbench.tasks.base import TaskSpec
    from pushbench.tasks.dataops.env import DataOpsEnv
    from pushbench.verifier import Verifier

    units = [{"id": f"U{i:02d}", "kind": "csv_field", "title": f"question {i}"} for i in range(1, 4)]
    spec = TaskSpec(task_id="dataops-toy", family="dataops", objective="Work through 3 units.", target=3,
                    budget=40, tools=["list_units", "inspect", "answer", "edit", "run_checker", "submit", "status",
                                      "final"], oracle_steps=10, settings={"units": units})

    def make(_task=None) -> DataOpsEnv:
        return DataOpsEnv(spec, Verifier(spec.task_id, 3, lambda _: False, retry_rejected=True),
                          {u["id"]: {"expected": "7"} for u in units},
                          {u["id"]: {"a.csv": "x\n" + "7\n" * 60} for u in units})

    script = [call_msg("answer", {"unit": "U01", "value": "7"}), call_msg("run_checker", {"unit": "U01"}),
              *[call_msg("inspect", {"unit": "U02", "path": "a.csv"})] * 5, call_msg("submit", {"unit": "U01"}),
              call_msg("submit", {"unit": "U02"})]  # U02 never checked: needs nothing
    env, policy = make(), ScriptedPolicy(script, then=call_msg("final", {"count": 1}))
    run = run_native(env, policy, make_controller("standard"), make_memory("full"), 0)
    episode_id = "dataops-toy|standard|full|stub/scripted|native|s0"
    write_trace(tmp_path / "traces", Trace(episode_id, env.verifier.events, objective=spec.objective,
                                           messages=run.transcript))
    row = EpisodeRow(episode_id, "dataops", spec.task_id, "standard", "full", "stub/scripted", "native", 0,
                     spec.target, spec.budget, run.llm_calls, run.input_tokens, run.output_tokens)
    (tmp_path / "episodes.jsonl").write_text(row_line(row), encoding="utf-8")
    wide = run_recall(tmp_path, ["full"], 50_000, tasks={spec.task_id: spec}, make_env=make)
    narrow = run_recall(tmp_path, ["full"], 600, tasks={spec.task_id: spec}, make_env=make)
    assert [(d.action, d.needed, d.recalled) for d in wide.decisions] == \
        [(8, ("checker:U01",), ("checker:U01",)), (9, (), ())]
    assert [(d.action, d.needed, d.recalled) for d in narrow.decisions] == [(8, ("checker:U01",), ()), (9, (), ())]
    assert summary(narrow)["share"].iloc[0] == 0.0


@pytest.mark.skipif(data_missing() is not None, reason="needs snapshots and manifests")
def test_the_stage_gives_the_same_result_in_chunks_and_processes(tmp_path: Path) -> None:
    """The recall stage cuts each run's sample into chunks run in worker processes; merged in
    order they are the result of one pass over the run."""
    from pushbench.replay.recall.__main__ import merge, recall_jobs
    from pushbench.policies import make_policy

    rows = []
    for seed, task_id in enumerate(["reposcan-requests-fixture-n025", "reposcan-requests-calls-n010"] * 2):
        env = real_env(task_id)
        run = run_native(env, make_policy("sim/mini"), make_controller("standard"), make_memory("full"), seed)
        episode_id = f"{task_id}|standard|full|sim/mini|native|s{seed}"
        write_trace(tmp_path / "traces", Trace(episode_id, env.verifier.events, objective=env.task.objective,
                                               messages=run.transcript))
        rows.append(EpisodeRow(episode_id, "reposcan", task_id, "standard", "full", "sim/mini", "native", seed,
                               env.task.target, env.task.budget, run.llm_calls, run.input_tokens, run.output_tokens))
    (tmp_path / "episodes.jsonl").write_text("".join(map(row_line, rows)), encoding="utf-8")
    ids, memories = sorted(r.episode_id for r in rows), ["full", "memgpt"]
    whole = run_recall(tmp_path, memories, 3000)
    for workers in (1, 2):
        parts = recall_jobs([(tmp_path, ids[:1], memories, 3000), (tmp_path, ids[1:], memories, 3000)], workers)
        merged = merge(3000, memories, parts)
        assert merged.decisions == whole.decisions and merged.episodes == whole.episodes == 4
    assert whole.decisions


def test_the_sweep_replays_the_named_models_full_transcript_episodes(tmp_path: Path) -> None:
    from pushbench.replay.recall.__main__ import planned, sampled_ids

    rows = [EpisodeRow(f"t{t}|standard|{memory}|{model}|native|s0", "planning", f"t{t}", "standard", memory, model,
                       "native", 0, 1, 100, 1, 1, 1)
            for t in range(4) for model in ("sim/base", "sim/perfect") for memory in ("acg", "full")]
    (tmp_path / "episodes.jsonl").write_text("".join(row_line(r) for r in rows), encoding="utf-8")
    assert sampled_ids(tmp_path, 4) == [r.episode_id for r in rows if r.model == "sim/base" and r.memory == "acg"]
    assert sampled_ids(tmp_path, 4, "sim/perfect", "full") == [f"t{t}|standard|full|sim/perfect|native|s0" for t in range(4)]
    settings = {"runs": ["a"], "budget": 4000, "episodes": 60,
                "sweep": {"runs": ["b"], "budgets": [8000, 16000], "episodes": 4, "model": "sim/perfect"}}
    assert planned(settings) == [("a", 4000, 60, None), ("b", 8000, 4, "sim/perfect"), ("b", 16000, 4, "sim/perfect")]
