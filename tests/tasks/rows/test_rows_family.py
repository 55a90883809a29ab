"""The worked example family ``rows``: its build (deterministic, answers hidden), its tools (bad
calls are invalid actions, never crashes), and whole episodes (standard, gated and stateqgp
controllers; native and LangGraph backends) driven by an honest reader that sees only the
messages. SimLM has no reader for this family: a clear error.
"""

from __future__ import annotations

import json
import operator
import re
from pathlib import Path
from typing import Any

import pytest

from pushbench import config
from pushbench.backends.native import run_native
from pushbench.controllers import make_controller
from pushbench.tasks.manifests import build_family
from pushbench.memory import make_memory
from pushbench.scoring import score_events
from pushbench.scoring.metrics import common_metrics
from pushbench.policies import make_policy
from pushbench.policies.base import Turn, tool_call_message, turn_from_message
from pushbench.tasks import FAMILIES, get_family, load_tasks
from pushbench.tasks.base import TaskSpec
from pushbench.tools.base import ToolCall

TASK_IDS = [f"rows-{name}-n{n:03d}" for name in ("iris-sepal_length_cm", "wine_data-alcohol", "wine_data-ash")
            for n in (5, 10)]
ASH = "rows-wine_data-ash-n010"  # 38 valid rows; ash of row r0000 is 2.43 (not < 2.2)


def files_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def data_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rows-data")
    build_family("rows", data_root=root)
    return root


@pytest.fixture(scope="module")
def tasks(data_root: Path) -> dict[str, TaskSpec]:
    return {t.task_id: t for t in load_tasks("rows", data_root / "manifests")}


def hidden_valid(data_root: Path, task_id: str) -> list[str]:
    return json.loads((data_root / "hidden" / "rows" / f"{task_id}.json").read_text(encoding="utf-8"))["valid"]


def make_env(data_root: Path, spec: TaskSpec, **changes: Any):
    return get_family("rows").environment(spec.model_copy(update=changes), hidden_root=data_root / "hidden")


# --------------------------------------------------------------------------- an honest reader

GOAL = re.compile(r"Collect (\d+) distinct rows of the `(\w+)` data set where column `(\w+)` (<=|>=|<|>) "
                  r"(-?\d+(?:\.\d+)?)\.")
LIMIT = re.compile(r"at most (\d+) ids per call")
OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


def read_goal(messages: list[dict[str, Any]]) -> tuple[int, str, str, float, int]:
    """(N, column, op, value, ids per submit) from the objective text."""
    text = next(m["content"] for m in messages if m["role"] == "user" and GOAL.search(m["content"] or ""))
    n, _dataset, column, op, value = GOAL.search(text).groups()
    return int(n), column, op, float(value), int(LIMIT.search(text).group(1))


class HonestReader:
    """A policy that works from tool observations only: it pages through rows, keeps the rows whose
    column satisfies the condition it read in the objective, submits them, and ends with final.
    ``opening`` assistant messages are sent first, verbatim (bad calls, an early final)."""

    name = "test/honest-reader"
    context_window = 1_000_000

    def __init__(self, opening: list[dict[str, Any]] | None = None):
        self.opening = list(opening or [])
        self.turns = 0

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> Turn:
        self.turns += 1
        if self.opening:
            return turn_from_message(self.opening.pop(0))
        n, column, op, value, limit = read_goal(messages)
        last_page = pages = 0
        candidates: list[str] = []
        submitted: set[str] = set()
        accepted: set[str] = set()
        for message in messages:
            text = (message.get("content") or "") if message["role"] == "tool" else ""
            head = re.match(r"rows \w+: page (\d+) of (\d+)", text)
            if head:
                last_page, pages = max(last_page, int(head[1])), int(head[2])
                header, *lines = text.splitlines()[1:]
                col = header.split(",").index(column)
                rows = [line.split(",") for line in lines if re.match(r"r\d{4},", line)]  # not a note
                candidates += [r[0] for r in rows if OPS[op](float(r[col]), value)]
            elif text.startswith("submit:"):
                for verdict, item in re.findall(r"^\s+(accepted|rejected|duplicate)\s+(\S+)$", text, re.M):
                    submitted.add(item)
                    if verdict == "accepted":
                        accepted.add(item)
        fresh = [c for c in dict.fromkeys(candidates) if c not in submitted]
        if len(accepted) >= n:
            call = ("final", {"count": len(accepted)})
        elif fresh and (len(accepted) + len(fresh) >= n or last_page == pages):
            call = ("submit", {"ids": fresh[: min(limit, n - len(accepted))]})
        elif last_page < pages or not pages:
            call = ("rows", {"page": last_page + 1})
        else:
            call = ("final", {"count": len(accepted)})
        return turn_from_message(tool_call_message(*call, f"call_{self.turns}"))


def episode(data_root: Path, spec: TaskSpec, policy: Any, controller: str = "standard"):
    env = make_env(data_root, spec)
    run = run_native(env, policy, make_controller(controller), make_memory("full"), seed=0)
    return env, run, score_events(env.verifier.events, spec)


# --------------------------------------------------------------------------- build


def test_the_family_is_registered() -> None:
    assert "rows" in FAMILIES and get_family("rows").name == "rows"


def test_two_builds_are_byte_identical_and_match_the_params(data_root: Path, tmp_path: Path) -> None:
    specs = build_family("rows", data_root=tmp_path)
    assert files_of(tmp_path) == files_of(data_root)
    assert sorted(files_of(tmp_path)) == sorted([f"hidden/rows/{t}.json" for t in TASK_IDS] + ["manifests/rows.jsonl"])
    params = config.params("rows")
    assert sorted(s.task_id for s in specs) == sorted(TASK_IDS)
    for spec in specs:
        assert spec.family == "rows" and spec.tools == ["rows", "submit", "status", "final"]
        assert spec.budget == params["budgets"][spec.target]
        assert 3 <= spec.oracle_steps <= params["max_oracle_fraction"] * spec.budget


def test_hidden_answers_are_true_large_and_absent_from_the_manifest(data_root: Path, tasks) -> None:
    from sklearn.datasets import load_iris, load_wine  # scikit-learn's own loader: an independent truth

    frames = {"iris": load_iris(), "wine_data": load_wine()}
    manifest = (data_root / "manifests" / "rows.jsonl").read_text(encoding="utf-8")
    for spec in tasks.values():
        hidden = json.loads((data_root / "hidden" / "rows" / f"{spec.task_id}.json").read_text(encoding="utf-8"))
        assert set(hidden) == {"task_id", "valid"} and hidden["task_id"] == spec.task_id
        s = spec.settings
        data = frames[s["dataset"]].data
        index, name = {"alcohol": (0, "alcohol"), "ash": (2, "ash"),
                       "sepal_length_cm": (0, "sepal length (cm)")}[s["column"]]
        assert frames[s["dataset"]].feature_names[index] == name
        truth = [f"r{i:04d}" for i in range(len(data)) if OPS[s["op"]](data[i, index], s["value"])]
        assert hidden["valid"] == truth
        assert len(truth) >= 2 * 10  # at least twice the largest target
    every_valid = {item for t in tasks for item in hidden_valid(data_root, t)}
    assert not [item for item in every_valid if item in manifest]
    assert "valid" not in manifest and "hidden" not in manifest.lower()


def test_the_objective_states_the_condition_and_n(tasks) -> None:
    for spec in tasks.values():
        n, column, op, value, limit = read_goal([{"role": "user", "content": spec.objective}])
        s = spec.settings
        assert (n, column, op, value, limit) == (spec.target, s["column"], s["op"], s["value"], s["max_submit"])
        assert f"`{s['dataset']}`" in spec.objective


# --------------------------------------------------------------------------- tools


def test_rows_pages_show_ids_and_values(data_root: Path, tasks) -> None:
    env = make_env(data_root, tasks[ASH])
    first = env.execute(ToolCall("rows", {"page": 1})).text.splitlines()
    assert first[0] == "rows wine_data: page 1 of 9 (178 rows)"
    assert first[1].startswith("id,alcohol,malic_acid,ash,") and first[1].endswith(",proline,target")
    assert first[2] == "r0000,14.23,1.71,2.43,15.6,127,2.8,3.06,0.28,2.29,5.64,1.04,3.92,1065,0"
    assert [line.split(",")[0] for line in first[2:]] == [f"r{i:04d}" for i in range(20)]
    last = env.execute(ToolCall("rows", '{"page": 9}')).text.splitlines()
    assert [line.split(",")[0] for line in last[2:]] == [f"r{i:04d}" for i in range(160, 178)]
    assert env.execute(ToolCall("rows", {})).text.splitlines()[0].endswith("page 1 of 9 (178 rows)")


BAD_CALLS = [
    ("rows", {"page": 0}, "invalid arguments for rows"),
    ("rows", {"page": -3}, "invalid arguments for rows"),
    ("rows", {"page": 10}, "page 10 is out of range: wine_data has 9 pages (1-9)"),
    ("rows", {"page": "2"}, "invalid arguments for rows"),
    ("rows", {"page": 1.5}, "invalid arguments for rows"),
    ("rows", {"page": 1, "query": "ash"}, "invalid arguments for rows"),
    ("rows", "{bad json", "arguments are not valid JSON"),
    ("rows", "[1]", "arguments must be a JSON object"),
    ("submit", {"ids": ["7"]}, "is not a row id"),
    ("submit", {"ids": ["r0001", "r7"]}, "is not a row id"),
    ("submit", {"ids": ["R0001"]}, "is not a row id"),
    ("submit", {"ids": ["r00001"]}, "is not a row id"),
    ("submit", {"ids": ["r0001\n"]}, "is not a row id"),
    ("submit", {"ids": ["r\u0660\u0660\u0660\u0661"]}, "is not a row id"),  # non-ASCII digits
    ("submit", {"ids": ["../r0001"]}, "is not a row id"),
    ("submit", {"ids": [f"r{i:04d}" for i in range(21)]}, "at most 20 ids per submit call; you sent 21"),
    ("submit", {"ids": []}, "invalid arguments for submit"),
    ("submit", {"ids": "r0001"}, "invalid arguments for submit"),
    ("submit", {"ids": [1, 8]}, "invalid arguments for submit"),
    ("status", {"verbose": True}, "invalid arguments for status"),
    ("final", {}, "invalid arguments for final"),
    ("final", {"count": -1}, "invalid arguments for final"),
    ("search", {"query": "ash"}, "unknown tool 'search'; available tools: final, rows, status, submit"),
]


def test_bad_calls_are_invalid_actions_and_submit_nothing(data_root: Path, tasks) -> None:
    env = make_env(data_root, tasks[ASH], budget=100)
    for name, args, fragment in BAD_CALLS:
        obs = env.execute(ToolCall(name, args))
        assert not obs.ok and obs.text.startswith("ERROR: ") and fragment in obs.text, (name, args, obs.text)
        assert not obs.done
    assert [e["kind"] for e in env.verifier.events] == ["call"] * len(BAD_CALLS)  # no verdicts
    assert env.execute(ToolCall("status", {})).text.startswith("status: 0 accepted (verified) of target 10")
    m = common_metrics(env.verifier.events, 10, 100)
    assert m["invalid_actions"] == len(BAD_CALLS) and m["submissions"] == 0


def test_wrong_and_repeated_rows_are_rejected_and_duplicate(data_root: Path, tasks) -> None:
    env = make_env(data_root, tasks[ASH])
    good = hidden_valid(data_root, ASH)[:2]
    obs = env.execute(ToolCall("submit", {"ids": [good[0], "r0000", good[0], "r9999"]}))
    assert obs.text.splitlines() == ["submit: 1 accepted, 2 rejected, 1 duplicate",
                                     f"  accepted  {good[0]}", "  rejected  r0000",
                                     f"  duplicate {good[0]}", "  rejected  r9999"]
    again = env.execute(ToolCall("submit", {"ids": ["r0000", good[1]]}))
    assert again.text.splitlines()[0] == "submit: 1 accepted, 0 rejected, 1 duplicate"
    assert env.verifier.valid_count == 2
    m = common_metrics(env.verifier.events, 10, 20)
    assert (m["valid_count"], m["rejected_submissions"], m["duplicate_submissions"]) == (2, 2, 2)


# --------------------------------------------------------------------------- episodes


@pytest.mark.parametrize("controller", ["standard", "gated", "stateqgp"])
@pytest.mark.parametrize("task_id", TASK_IDS)
def test_an_honest_reader_succeeds_within_budget(data_root: Path, tasks, task_id: str, controller: str) -> None:
    spec = tasks[task_id]
    env, run, m = episode(data_root, spec, HonestReader(), controller)
    assert m["success"] and m["termination"] == "final"
    assert m["reported_count"] == m["valid_count"] == spec.target
    assert m["steps"] == spec.oracle_steps <= spec.budget  # the honest reader is the perfect reader
    assert m["invalid_actions"] == m["duplicate_submissions"] == m["rejected_submissions"] == 0
    assert m["intercepted_actions"] == 0


def test_bad_calls_in_an_episode_cost_steps_but_do_not_end_it(data_root: Path, tasks) -> None:
    spec = tasks["rows-iris-sepal_length_cm-n010"]
    opening = [tool_call_message("rows", {"page": 0}, "b1"), tool_call_message("submit", {"ids": ["row7"]}, "b2"),
               tool_call_message("lookup", {"id": "r0050"}, "b3"),
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "b4", "type": "function", "function": {"name": "rows", "arguments": "{page: 2"}}]}]
    env, run, m = episode(data_root, spec, HonestReader(opening), "standard")
    assert m["invalid_actions"] == 4 and m["success"]
    assert m["steps"] == spec.oracle_steps + 4
    errors = [msg["content"] for msg in run.transcript if msg["role"] == "tool"][:4]
    assert all(text.startswith("ERROR: ") for text in errors)


def test_gated_refuses_an_early_final_and_standard_does_not(data_root: Path, tasks) -> None:
    spec = tasks["rows-wine_data-alcohol-n005"]
    early = [tool_call_message("final", {"count": 5}, "early")]
    env, run, m = episode(data_root, spec, HonestReader(early), "gated")
    blocked = run.transcript[1]["content"]
    assert blocked.startswith("[controller] final blocked: the verifier has accepted 0 of the target 5.")
    assert m["intercepted_actions"] == 1 and m["success"] and not m["false_completion"]
    assert m["steps"] == spec.oracle_steps + 1
    env, run, m = episode(data_root, spec, HonestReader(list(early)), "standard")
    assert m["termination"] == "final" and m["steps"] == 1
    assert m["false_completion"] and not m["success"] and m["reported_count_error"] == 5


def test_simlm_has_no_reader_for_rows(data_root: Path, tasks) -> None:
    env = make_env(data_root, tasks["rows-wine_data-alcohol-n005"])
    with pytest.raises(ValueError, match=r"SimLM has no reader for a task with tools "
                                         r"\['final', 'rows', 'status', 'submit'\]"):
        run_native(env, make_policy("sim/base"), make_controller("standard"), make_memory("full"), seed=0)


def test_the_langgraph_backend_gives_the_same_outcome(data_root: Path, tasks) -> None:
    from pushbench.backends import get_backend

    spec = tasks["rows-iris-sepal_length_cm-n010"]
    outcomes = []
    for backend in ("native", "langgraph"):
        env = make_env(data_root, spec)
        get_backend(backend)(env, HonestReader(), make_controller("gated"), make_memory("full"), 0)
        outcomes.append([e for e in env.verifier.events if e["kind"] != "call"])
    assert outcomes[0] == outcomes[1] and outcomes[0][-1]["valid_count"] == 10
