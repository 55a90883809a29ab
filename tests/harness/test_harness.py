"""The black-box harness: the stand-in agent end to end through MCP, scoring, time limits, the grid."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from pushbench import config
from pushbench.backends.native import run_native
from pushbench.cli import app
from pushbench.controllers import make_controller
from pushbench.harness.grid import checklist_deltas, grid_tasks
from pushbench.harness.launcher import AgentSpec, resolve_agent, substitute
from pushbench.harness.prompts import render_prompt
from pushbench.harness.scoring import close_log, closing_record, read_events
from pushbench.memory import make_memory
from pushbench.scoring import score_events
from pushbench.policies import make_policy
from pushbench.runner import EpisodeSpec
from pushbench.tasks import get_family, load_tasks
from pushbench.tasks.reposcan.reader import parse_objective

from blackbox_data import make_data, task_id

RUNNER_KEYS = {"episode_id", "family", "task_id", "controller", "memory", "model", "backend", "seed",
               "target", "budget", "llm_calls", "input_tokens", "output_tokens"}
runner = CliRunner()


@pytest.fixture
def data(tmp_path: Path):
    return make_data(tmp_path)


def _agent_run(data, out: Path, *extra: str) -> dict:
    data_root, snaps, _ = data
    result = runner.invoke(app, ["agent", "run", "--out", str(out), "--data-root", str(data_root),
                                 "--snapshot-root", str(snaps), *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.output.strip().splitlines()[-1])


def _folder(out: Path) -> Path:
    (folder,) = (out / "episodes").iterdir()
    return folder


def test_standin_episode_through_mcp_matches_the_in_process_episode(data, tmp_path: Path) -> None:
    data_root, snaps, tasks = data
    out = tmp_path / "run"
    row = _agent_run(data, out, "--task", task_id(5), "--timeout", "120")
    folder = _folder(out)
    events = read_events(folder / "server" / "events.jsonl")
    assert row["model"] == "sim/base" and row["agent"] == "standin-sim-base"
    assert (row["backend"], row["controller"], row["memory"]) == ("blackbox", "default", "agent")
    metrics = score_events(events, next(t for t in load_tasks("reposcan", data_root / "manifests")
                                        if t.task_id == task_id(5)))
    from pushbench.scoring.usage import USAGE

    assert set(row) == RUNNER_KEYS | set(metrics) | set(USAGE) | {"agent", "format"}  # the row's format version
    assert row["cost_usd"] is None and row["requests"] is None  # SimLM has no price; a product's HTTP is its own
    assert {k: row[k] for k in metrics} == metrics
    assert row["steps"] == sum(e["kind"] == "call" for e in events) > 0
    assert json.loads((out / "episodes.jsonl").read_text()) == row
    mcp = json.loads((folder / "mcp.json").read_text())["mcpServers"]["pushbench"]
    assert mcp["type"] == "stdio" and "serve-mcp" in mcp["args"]

    # The same policy, prompt and seed in process: identical verifier events, calls and tokens.
    task = tasks[task_id(5)]
    spec = EpisodeSpec("reposcan", task.task_id, "default", "agent", "sim/base", "blackbox", 0)
    env = get_family("reposcan").environment(task.model_copy(update={"objective": render_prompt(task, "default")}),
                                             snapshot_root=snaps, hidden_root=data_root / "hidden")
    run = run_native(env, make_policy("sim/base"), make_controller("standard"), make_memory("full"),
                     spec.policy_seed(int(config.params("seed"))))
    assert events == json.loads(json.dumps(env.verifier.events))
    assert (row["llm_calls"], row["input_tokens"], row["output_tokens"]) == \
        (run.llm_calls, run.input_tokens, run.output_tokens)


def test_http_transport_and_checklist_prompt(data, tmp_path: Path) -> None:
    out = tmp_path / "run"
    row = _agent_run(data, out, "--task", task_id(3), "--prompt", "checklist", "--transport", "http",
                     "--agent", "standin-sim-perfect", "--timeout", "120")
    folder = _folder(out)
    assert json.loads((folder / "mcp.json").read_text())["mcpServers"]["pushbench"]["url"].startswith(
        "http://127.0.0.1:")
    assert "Do not stop, and do not call final, before status() reports at least 3" in \
        (folder / "prompt.txt").read_text()
    assert row["success"] and row["termination"] == "final" and row["model"] == "sim/perfect"
    assert row["controller"] == "checklist"


def test_time_limit_kills_the_process_group_and_failures_are_scored(data, tmp_path: Path) -> None:
    marker = "61.4321"
    slow = f"{{python}} -c \"import subprocess,time; subprocess.Popen(['sleep','{marker}']); time.sleep(60)\""
    started = time.monotonic()
    row = _agent_run(data, tmp_path / "slow", "--task", task_id(3), "--agent-cmd", slow,
                     "--agent-name", "sleeper", "--timeout", "1")
    assert time.monotonic() - started < 20
    assert row["termination"] == "timeout" and row["steps"] == 0 and not row["success"]
    assert row["model"] == "sleeper" and row["llm_calls"] is None
    leftovers = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline(p).endswith(marker)]
    assert leftovers == []  # the agent's child was in its group and was killed too

    row = _agent_run(data, tmp_path / "crash", "--task", task_id(3), "--agent-cmd",
                     "{python} -c 'raise SystemExit(3)'", "--timeout", "30")
    assert row["termination"] == "agent_error" and row["model"] == "custom"


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def test_grid_resumes_and_gives_paired_deltas(data, tmp_path: Path) -> None:
    data_root, snaps, _ = data
    out = tmp_path / "grid"
    args = ["agent", "grid", "--targets", "3", "--tasks", "1", "--agents", "standin-sim-base",
            "--prompts", "default,checklist", "--workers", "2", "--timeout", "120", "--out", str(out),
            "--data-root", str(data_root), "--snapshot-root", str(snaps)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert sorted((r["task_id"], r["controller"], r["seed"]) for r in rows) == [
        (task_id(3), "checklist", 0), (task_id(3), "default", 0)]
    (delta,) = json.loads((out / "deltas.json").read_text())
    assert (delta["agent"], delta["model"], delta["target"], delta["pairs"]) == ("standin-sim-base", "sim/base", 3, 1)
    assert delta["delta"] == int(rows[0]["success"]) - int(rows[1]["success"])  # checklist - default
    before = (out / "episodes.jsonl").read_bytes()
    started = time.monotonic()
    assert runner.invoke(app, args).exit_code == 0  # resume: nothing left to run
    assert time.monotonic() - started < 5 and (out / "episodes.jsonl").read_bytes() == before


# ---------------------------------------------------------------------------------- units


def test_bad_requests_fail_before_launching(data, tmp_path: Path) -> None:
    data_root, snaps, _ = data
    base = ["agent", "run", "--out", str(tmp_path / "out"), "--data-root", str(data_root),
            "--snapshot-root", str(snaps), "--task"]
    for extra, message in [([task_id(3), "--prompt", "pushy"], "unknown prompt"),
                           ([task_id(3), "--transport", "carrier-pigeon"], "unknown transport"),
                           (["reposcan-nope-n001"], "no RepoScan task"),
                           ([task_id(3), "--agent", "nobody"], "unknown agent")]:
        result = runner.invoke(app, base + extra)
        assert result.exit_code == 1 and message in result.output, (extra, result.output)
    (data_root / "hidden" / "reposcan" / f"{task_id(3)}.json").unlink()
    result = runner.invoke(app, base + [task_id(3)])
    assert result.exit_code == 1 and "no hidden answers" in result.output
    assert not (tmp_path / "out" / "episodes").exists()


def test_checklist_deltas_are_paired_by_task() -> None:
    rows = []
    for i, (default, checklist) in enumerate([(1, 1), (0, 1), (1, 0), (0, 1)]):
        for prompt, success in (("default", default), ("checklist", checklist)):
            rows.append({"agent": "a", "model": "m", "backend": "blackbox", "target": 50, "seed": 0,
                         "task_id": f"t{i}", "controller": prompt, "success": bool(success)})
    table = checklist_deltas(pd.DataFrame(rows), n_resamples=2_000)
    (record,) = table.to_dict(orient="records")
    assert record["delta"] == 0.25 and record["pairs"] == 4
    assert record["success_default"] == 2 and record["success_checklist"] == 3
    assert -1.0 <= record["ci_low"] <= 0.25 <= record["ci_high"] <= 1.0


def test_agents_and_placeholders() -> None:
    assert resolve_agent("standin-sim-mini") == AgentSpec(
        "standin-sim-mini", "{python} -m pushbench.harness.standin --model sim/mini", "sim/mini")
    claude, codex = resolve_agent("claude-code"), resolve_agent("codex/sim-pro")
    assert (claude.name, claude.model, claude.product, claude.sim_model, claude.memory) == (
        "claude-code", "sim/base", "claude-code", "sim-base", "claude-code")
    assert (codex.model, codex.sim_model, codex.declaration.api) == ("sim/pro", "sim-pro", "responses")
    assert resolve_agent("gemini-cli/sim-mini").declaration.tool_prefix("s") == "mcp_s_"
    assert resolve_agent("mine=my-agent --go").model == "mine"
    for bad in ("nobody", "=cmd", "x=", "codex/gpt-5", "claude-code/sim-nope", "missing.yaml"):
        with pytest.raises(ValueError):
            resolve_agent(bad)
    values = {"prompt": "find 'ten' items\nnow", "mcp_config": "/r/mcp.json", "server_command_toml": '"py"',
              "server_args_toml": '["-m", "x"]'}
    argv = substitute("claude -p {prompt} --mcp-config={mcp_config} --json '{\"a\": 1}' {unknown}", values)
    assert argv == ["claude", "-p", "find 'ten' items\nnow", "--mcp-config=/r/mcp.json", '--json', '{"a": 1}',
                    "{unknown}"]
    codex = substitute("codex exec -c mcp_servers.pushbench.args={server_args_toml} {prompt}", values)
    assert 'mcp_servers.pushbench.args=["-m", "x"]' in codex and codex[-1] == values["prompt"]
    for bad in ("", "claude 'unclosed"):
        with pytest.raises(ValueError):
            substitute(bad, values)


def test_prompts_carry_the_goal_and_differ_only_by_the_checklist(data) -> None:
    task = data[2][task_id(5)]
    default, checklist = render_prompt(task, "default"), render_prompt(task, "checklist")
    assert parse_objective(default) == parse_objective(checklist) == parse_objective(task.objective)
    assert checklist.startswith(default) and "never submit an identifier twice" in checklist
    with pytest.raises(ValueError):
        render_prompt(task, "pushy")


def test_closing_a_log_without_an_end(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    log.write_text(json.dumps({"seq": 0, "kind": "call", "step": 1, "tool": "submit", "args": {}, "ok": True,
                               "error": None}) + "\n"
                   + json.dumps({"seq": 1, "kind": "verdict", "step": 1, "item": "a.py::f", "verdict": "accepted",
                                 "valid_count": 1}) + "\n" + '{"seq": 2, "kind": "ca')
    events = close_log(log, 3, "timeout")
    assert events[-1] == {"seq": 2, "kind": "end", "step": 1, "reason": "timeout", "reported": None,
                          "valid_count": 1, "target": 3}
    assert read_events(log) == events  # the torn line is gone, the end record appended
    assert closing_record(events, 3, "give_up") is None
    with pytest.raises(ValueError):
        closing_record([], 3, "bored")


def test_grid_uses_nine_tasks_per_target() -> None:
    if not (config.MANIFESTS / "reposcan.jsonl").is_file():
        pytest.skip("no RepoScan manifest; run `pushbench manifests build`")
    chosen = grid_tasks([50, 100], 18)
    assert [t.target for t in chosen] == [50] * 9 + [100] * 9
    assert {t.task_id for t in chosen} == {t.task_id for t in load_tasks("reposcan") if t.target in (50, 100)}
    with pytest.raises(ValueError):
        grid_tasks([50, 100], 17)


def test_the_blackbox_stage_resumes_in_a_work_folder_named_by_code_and_params(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A killed stage finds its finished rows again; other code or params get a fresh folder."""
    from pushbench import config
    from pushbench.harness import pipeline

    spec = dict(config.params("blackbox"), tasks=2, agents=["standin-sim-base"], prompts=["default"])
    real = config.params
    monkeypatch.setattr(config, "params", lambda key: spec if key == "blackbox" else real(key))
    monkeypatch.setattr(config, "DATA", tmp_path / "data")  # the work folder goes under DATA/tmp
    monkeypatch.setattr(pipeline, "preflight", lambda plan: None)  # hidden answers stay where they are
    first = pipeline.fingerprint(spec)
    assert pipeline.fingerprint(dict(spec)) == first and pipeline.fingerprint({**spec, "seeds": 2}) != first
    stale = tmp_path / "data" / "tmp" / "blackbox-0000000000000000"
    stale.mkdir(parents=True)
    seen: list[Path] = []

    def fake_run_plans(plans, work: Path, workers: int, fork_server: bool = False) -> Path:
        assert fork_server  # the stage forks its stand-ins and servers from zygotes
        seen.append(work)
        work.mkdir(parents=True, exist_ok=True)
        (work / "episodes.jsonl").write_text("".join(json.dumps({"episode_id": p.spec.episode_id}) + "\n"
                                                     for p in plans))
        return work / "episodes.jsonl"

    monkeypatch.setattr(pipeline, "run_plans", fake_run_plans)
    rows = pipeline.run_configured(tmp_path / "out")
    assert seen == [tmp_path / "data" / "tmp" / f"blackbox-{first}"]
    assert len(rows.read_text().splitlines()) == spec["tasks"]  # one agent, one prompt, one seed
    assert not stale.exists() and not seen[0].exists()  # stale folders go; the finished one too
