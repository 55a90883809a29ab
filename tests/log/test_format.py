"""The run folder's format: typed rows and traces with a version, one writer and one reader."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from pushbench.analysis.aggregate import BLACKBOX, aggregate
from pushbench.log.models import FORMAT, EpisodeRow, FormatError, Trace
from pushbench.log.names import EPISODES, SCORED, TRACES, trace_name, trace_path
from pushbench.log.rows import read_episodes, row_line
from pushbench.log.traces import read_trace, write_trace

EVENTS = [{"kind": "call", "step": 1, "tool": "search", "args": {"query": "x"}, "ok": True}]
MESSAGES = [{"role": "assistant", "content": "hi"}, {"role": "user", "content": "ok"}]


def row(episode_id: str = "t1|standard|full|sim/mini|native|s0", **extra: object) -> EpisodeRow:
    return EpisodeRow(episode_id, "reposcan", "t1", "standard", "full", "sim/mini", "native", 0, 5, 40, 3, 900, 60,
                      dict(extra))


def gz(folder: Path, name: str, data: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(gzip.compress(json.dumps(data).encode(), mtime=0))
    return folder / name


def test_a_trace_round_trips_with_its_version_and_the_same_bytes(tmp_path: Path) -> None:
    trace = Trace("a|b c", EVENTS, objective="find", messages=MESSAGES, views={"segments": [], "pool": []},
                  api={"requests": 2})
    path = write_trace(tmp_path / TRACES, trace)
    assert path == trace_path(tmp_path, "a|b c") and path.name == trace_name("a|b c") == "a_b_c.json.gz"
    stored = json.loads(gzip.decompress(path.read_bytes()))
    assert stored["format"] == FORMAT == 2 and "wall_seconds" not in stored  # absent parts are not written
    assert read_trace(path) == trace
    first = path.read_bytes()
    write_trace(tmp_path / TRACES, read_trace(path))
    assert path.read_bytes() == first


def test_a_trace_without_a_version_is_format_1_with_one_note(tmp_path: Path, capsys) -> None:
    old = {"episode_id": "e", "events": EVENTS, "objective": "find", "messages": MESSAGES}
    first, second = gz(tmp_path / "old", "e.json.gz", old), gz(tmp_path / "old", "f.json.gz", {**old, "episode_id": "f"})
    trace = read_trace(first)
    assert trace.format == 1 and trace.messages == MESSAGES and trace.events == EVENTS
    read_trace(second)
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "format 1" in notes[0] and str(tmp_path / "old") in notes[0]


@pytest.mark.parametrize("data, message", [
    ({"episode_id": "e", "events": [], "format": FORMAT + 1}, "newer than this PushBench reads"),
    ({"episode_id": "e", "events": [], "format": "2"}, "is not a run-folder format version"),
    ({"episode_id": "e", "events": [], "colour": "red"}, "unknown trace field(s) colour"),
    ({"episode_id": "e"}, "the trace lacks events"),
    ({"episode_id": "e", "events": {}}, "events is dict, not list"),
    ([1, 2], "a trace is a JSON object"),
])
def test_a_trace_this_code_cannot_read_is_one_clear_error(tmp_path: Path, data: object, message: str) -> None:
    path = gz(tmp_path, "e.json.gz", data)
    with pytest.raises(FormatError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
        read_trace(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_not_a_gzip_trace(tmp_path: Path) -> None:
    (tmp_path / "x.json.gz").write_text("{}")
    with pytest.raises(FormatError, match="is not a gzip JSON trace"):
        read_trace(tmp_path / "x.json.gz")


def test_rows_carry_the_version_and_their_facts_do_not(tmp_path: Path, capsys) -> None:
    line = row(parent="p").as_json()
    assert line["format"] == FORMAT and line["parent"] == "p"
    path = tmp_path / EPISODES
    old = {k: v for k, v in line.items() if k != "format"}
    path.write_text(row_line(row(parent="p")) + json.dumps({**old, "episode_id": "z"}) + "\n", encoding="utf-8")
    new, unversioned = read_episodes(path)
    assert (new.format, unversioned.format) == (FORMAT, 1)
    assert new.facts() == old and "format" not in unversioned.facts()
    assert "note:" in capsys.readouterr().err


@pytest.mark.parametrize("change, message", [
    ({"format": 9}, "newer than this PushBench reads"),
    ({"seed": "0"}, "seed is str, not int"),
    ({"target": None}, "target is NoneType, not int"),
    ({"family": None, "task_id": None}, None),
])
def test_a_row_this_code_cannot_read_names_its_file_and_line(tmp_path: Path, change: dict, message: str | None) -> None:
    data = {**row().as_json(), **change}
    data = {k: v for k, v in data.items() if v is not None or message is not None}
    path = tmp_path / EPISODES
    path.write_text(row_line(row("a")) + json.dumps(data) + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match=message or "the episode row lacks family, task_id") as err:
        read_episodes(path)
    assert str(err.value).startswith(f"{path}: line 2")


def test_a_black_box_agent_may_report_no_usage() -> None:
    facts = {**row().facts(), "llm_calls": None, "input_tokens": None, "output_tokens": None, "agent": "x"}
    assert EpisodeRow.from_facts(facts).facts() == facts


def test_the_results_table_holds_facts_not_versions(tmp_path: Path) -> None:
    """The black-box rows reach the table through the reader: the version is not a column."""
    (tmp_path / BLACKBOX).mkdir()
    (tmp_path / BLACKBOX / EPISODES).write_text(row_line(row(agent="a", success=True)), encoding="utf-8")
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / SCORED).write_text(json.dumps({**row("b").facts(), "success": False}) + "\n", encoding="utf-8")
    table = aggregate(["exp", BLACKBOX], tmp_path, tmp_path / "results")
    rows = [json.loads(line) for line in table.read_text(encoding="utf-8").splitlines()]
    by = {r["experiment"]: r for r in rows}
    assert sorted(by) == [BLACKBOX, "exp"] and by[BLACKBOX]["agent"] == "a"
    assert all("format" not in r for r in rows)
