"""SimLM on the corpus family: it reads only messages, sim/perfect solves questions, and the CLI
runs a small grid over profiles and memories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from pushbench.cli import app
from pushbench.policies.sim import SimLM, mind_name
from pushbench.tasks.corpus import mind as corpus_mind


def test_the_family_gets_its_own_mind(corpus_family: Any, corpus_tasks: list) -> None:
    env = corpus_family.environment(corpus_tasks[0])
    assert mind_name(env.schemas()) == corpus_family.name == "corpus"


def test_the_mind_imports_nothing_that_opens_answers() -> None:
    import ast

    allowed = ("__future__", "functools", "json", "re", "typing", "numpy", "pushbench.guidance", "pushbench.policies.",
               "pushbench.tasks.corpus.reader", "pushbench.tasks.corpus.notes", "pushbench.tasks.corpus.mind",
               "pushbench.tasks.corpus.parts", "pushbench.tasks.corpus.plan")
    here = Path(corpus_mind.__file__)
    for path in (here, *(here.with_name(f"{m}.py") for m in ("notes", "parts", "plan"))):  # and its notes, parts, plans
        tree = ast.parse(path.read_text())
        modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert modules and all(m.startswith(allowed) for m in modules), (path.name, modules)


def test_first_moves_come_from_the_clue_text(corpus_family: Any, corpus_tasks: list) -> None:
    task = next(t for t in corpus_tasks if "module" in t.settings["clue_kinds"])
    env = corpus_family.environment(task)
    sim = SimLM("sim/perfect")
    messages = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": task.objective}]
    turn = sim.act(messages, env.schemas(), seed=7)
    args = json.loads(turn.call.arguments)
    quote = next(c for c in task.settings["clues"] if c.startswith("it is defined in the module"))
    assert turn.call.name == "search" and args["query"] in quote
    assert args["requirement"] == f"clue:{task.settings['clue_kinds'].index('module') + 1}"
    again = SimLM("sim/perfect").act(messages, env.schemas(), seed=7)
    assert again.message == turn.message  # deterministic in (profile, seed, messages)


def test_a_refused_repeat_counts_as_done(corpus_family: Any, corpus_tasks: list) -> None:
    from pushbench.guidance import REPEATED
    from pushbench.policies.base import tool_call_message

    task = next(t for t in corpus_tasks if "module" in t.settings["clue_kinds"])
    tools = corpus_family.environment(task).schemas()
    messages = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": task.objective}]
    first = SimLM("sim/perfect").act(messages, tools, seed=3)
    messages += [tool_call_message("search", first.call.arguments, "call_0"),
                 {"role": "tool", "tool_call_id": "call_0", "content": REPEATED}]
    second = SimLM("sim/perfect").act(messages, tools, seed=3)
    assert second.call.name == "search" and second.call.arguments != first.call.arguments


def test_cli_grid_perfect_solves_and_profiles_differ(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", "--family", "corpus", "--model", "sim/perfect,sim/mini",
                                      "--memory", "full,memgpt,acg", "--controller", "standard,stateqgp",
                                      "--limit", "3", "--seeds", "1",
                                      "--no-progress", "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "scored.jsonl").read_text().splitlines()]
    assert len(rows) == 36 and {r["memory"] for r in rows} == {"full", "memgpt", "acg"}
    assert all(r["tool_failures"] == 0 for r in rows)  # stateqgp's page memory stays off (no paged search)
    perfect = [r for r in rows if r["model"] == "sim/perfect"]
    assert all(r["success"] and r["steps"] <= 100 and r["evidence_recall"] > 0 for r in perfect)
    assert all(r["answered"] is not None and "calibration_error" in r for r in rows)
    shown = CliRunner().invoke(app, ["show-task", rows[0]["task_id"]])
    assert shown.exit_code == 0 and "clue:1" in shown.output
