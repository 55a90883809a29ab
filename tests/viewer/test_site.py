"""The viewer's data: index rows, timelines joined with the verifier log, context views equal to
what the model was shown, reproducible bytes, and one-line errors on bad input."""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pushbench.cli import app
from pushbench.log.models import Trace
from pushbench.viewer import ViewerError, build_site
from pushbench.viewer.episode import decode_view, episode_payload
from pushbench.viewer.site import INDEX_COLUMNS, load_rows


def read_script(path: Path, call: str) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith(call + "(") and text.endswith(");\n")
    return json.loads("[" + text[len(call) + 1: -3] + "]")


def episode_data(site: Path, file: str) -> dict[str, Any]:
    _, packed = read_script(site / file, "PB.episode")
    return json.loads(gzip.decompress(base64.b64decode(packed)))


def test_index_holds_every_row_of_the_run(small_run: Path, small_site: Path) -> None:
    (data,) = read_script(small_site / "data" / "index.js", "PB.index")
    rows = [dict(zip(data["columns"], r)) for r in data["rows"]]
    scored = load_rows(small_run)
    assert data["columns"] == INDEX_COLUMNS and len(rows) == len(scored) == 8
    assert {(r["controller"], r["memory"]) for r in rows} == {(c, m) for c in ("standard", "gated")
                                                              for m in ("full", "memgpt")}
    for row, raw in zip(rows, scored):
        assert row["episode_id"] == raw["episode_id"] and row["valid_count"] == raw["valid_count"]
        assert row["outcome"] == ("success" if raw["success"] else
                                  "false completion" if raw["false_completion"] else "failure")
        assert (small_site / row["file"]).is_file()


def test_timeline_matches_the_verifier_log(small_run: Path, small_site: Path) -> None:
    (data,) = read_script(small_site / "data" / "index.js", "PB.index")
    for values in data["rows"]:
        row = dict(zip(data["columns"], values))
        page = episode_data(small_site, row["file"])
        trace = json.loads(gzip.decompress(next((small_run / "traces").glob(
            re.sub(r"[^A-Za-z0-9_.-]+", "_", row["episode_id"]) + ".json.gz")).read_bytes()))
        steps = [t for t in page["turns"] if t["step"] is not None]
        assert [t["step"] for t in steps] == list(range(1, row["steps"] + 1))
        verdicts = [[e["item"], e["verdict"]] for e in trace["events"] if e["kind"] == "verdict"]
        assert [v for t in steps for v in t["verdicts"]] == verdicts
        calls = [e for e in trace["events"] if e["kind"] == "call"]
        assert [t["intercepted_by"] for t in steps] == [(e.get("info") or {}).get("intercepted_by") for e in calls]
        assert [t["tool"] or "(stop)" for t in steps] == [e["tool"] for e in calls]
        assert page["curve"][-1][1] == row["valid_count"] and page["turns"][-1]["valid_count"] == row["valid_count"]
        assert len(page["views"]) == len(page["turns"])


def test_a_controller_intervention_is_marked_at_its_step(make_fixture_env) -> None:
    from agentkit import ScriptedPolicy, call_msg
    from pushbench.backends.native import run_native
    from pushbench.controllers import make_controller
    from pushbench.memory import make_memory

    env = make_fixture_env(budget=4)
    script = [call_msg("search", {"query": "fixture", "page": 1}, "c1"), call_msg("final", {"count": 3}, "c2")]
    policy = ScriptedPolicy(script, then=call_msg("status", {}, "c3"))
    run = run_native(env, policy, make_controller("gated"), make_memory("full"), 0)
    row = {"episode_id": "e", "memory": "full", "controller": "gated", "model": "stub/scripted"}
    page = episode_payload(row, Trace("e", env.verifier.events, objective="", messages=run.transcript), None, None)
    marks = [(t["step"], t["tool"], t["intercepted_by"]) for t in page["turns"]]
    assert marks[:2] == [(1, "search", None), (2, "final", "gated")]
    assert page["messages"][page["turns"][1]["reply"]]["role"] == "tool"  # the refusal the model was shown
    assert page["views"] == [] and "manifest" in page["views_note"]


class Recorder:
    """SimLM behind a wrapper that keeps every request's messages and tools."""

    def __init__(self, model: str):
        from pushbench.policies import make_policy

        self.inner = make_policy(model)
        self.context_window = self.inner.context_window
        self.seen: list[tuple[list[dict[str, Any]], list[str], Any]] = []

    def act(self, messages, tools, seed):
        turn = self.inner.act(messages, tools, seed)
        self.seen.append((json.loads(json.dumps(messages)), [t["function"]["name"] for t in tools], turn))
        return turn


@pytest.mark.parametrize("memory", ["full", "memgpt", "acg", "summary"])
def test_context_views_are_the_messages_the_model_saw(memory: str) -> None:
    from agentkit import data_missing, task
    from pushbench.backends.native import run_native
    from pushbench.controllers import make_controller
    from pushbench.memory import make_memory
    from pushbench.memory.base import memory_tools
    from pushbench.tasks import get_family

    if data_missing():
        pytest.skip(data_missing())
    spec = task("reposcan-flask-calls-n050")
    env = get_family("reposcan").environment(spec)
    policy = Recorder("sim/mini")
    policy.context_window = policy.inner.context_window = 6000  # small: memgpt evicts and summarises
    run = run_native(env, policy, make_controller("standard"), make_memory(memory), 7)
    own = {t["function"]["name"] for t in memory_tools(make_memory(memory))}
    external = [msgs for msgs, tools, turn in policy.seen
                if tools and not (turn.call is not None and turn.call.name in own)]
    row = {"episode_id": "e", "memory": memory, "controller": "standard", "model": "sim/mini"}
    trace = Trace("e", env.verifier.events, objective=spec.objective, messages=run.transcript)
    replayed = json.loads(json.dumps(episode_payload(row, trace, get_family("reposcan").environment(spec), 6000)))
    page = json.loads(json.dumps(episode_payload(row, replace(trace, views=run.views.as_trace()), None, None)))
    assert "recorded" in page["views_note"] and "rebuilt" in replayed["views_note"]
    for payload in (page, replayed):  # the views the run recorded and the ones a replay rebuilds
        views = [decode_view(v, payload["messages"], payload["pool"]) for v in payload["views"]]
        assert len(views) == len(external) > 10
        assert views == external
    if memory == "memgpt":
        assert page["pool"], "memgpt's own messages (system with blocks, summaries) are pooled"
        assert any(m.get("name", "").startswith("memory-") for m in run.transcript), "the test window made it summarise"


def test_bytes_are_reproducible(small_run: Path, small_site: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    build_site([small_run], again)
    first = {p.relative_to(small_site): p.read_bytes() for p in small_site.rglob("*") if p.is_file()}
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert first == second
    assert str(small_run.parent) not in "".join(b.decode() for b in first.values() if b)


def test_bad_input_is_one_line_and_leaves_the_old_site(small_site: Path, tmp_path: Path) -> None:
    copy = tmp_path / "site"
    shutil.copytree(small_site, copy)
    before = sorted(p.relative_to(copy) for p in copy.rglob("*"))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "episodes.jsonl").write_text('{"episode_id": "x"}\nnot json\n', encoding="utf-8")
    with pytest.raises(ViewerError, match="line 2 is not JSON"):
        build_site([bad], copy)
    assert sorted(p.relative_to(copy) for p in copy.rglob("*")) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".site.")]
    result = CliRunner().invoke(app, ["view", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "is not a folder" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


def site_files(site: Path) -> dict[Path, bytes]:
    return {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}


def test_a_parallel_build_writes_the_serial_bytes(small_run: Path, small_site: Path, tmp_path: Path) -> None:
    parallel = tmp_path / "parallel"
    stats = build_site([small_run], parallel, workers=2)  # two tasks: one group for each process
    assert stats.pages == 8
    assert site_files(parallel) == site_files(small_site)
    cli = tmp_path / "cli"
    result = CliRunner().invoke(app, ["view", str(small_run), "--out", str(cli), "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert site_files(cli) == site_files(small_site)


def test_a_bad_trace_in_a_worker_leaves_the_old_site(small_run: Path, small_site: Path, tmp_path: Path) -> None:
    run = tmp_path / "small"
    shutil.copytree(small_run, run)
    broken = sorted((run / "traces").iterdir())[-1]
    broken.write_bytes(b"not gzip")
    copy = tmp_path / "site"
    shutil.copytree(small_site, copy)
    with pytest.raises(ViewerError, match=f"{broken.name} is not a gzip JSON trace"):
        build_site([run], copy, workers=2)
    assert site_files(copy) == site_files(small_site)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".site.")]
